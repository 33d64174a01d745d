// NNEF import: a model is a folder (or a .tgz of one) holding graph.nnef (NNEF 1.0 text: version, extensions,
// fragment definitions, the graph) and one .dat tensor file per variable label. The graph's
// standard operations map onto kiln's core ops; compound fragments defined in the document are
// inlined at each invocation. Syntax errors read FILE:LINE:COL; tensor files are checked
// (header, sizes, item type) and a label that would leave the model folder is refused.
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace kiln::nnef_fe {

// `path` is the model folder, its graph.nnef, or the folder packed as NAME.tgz (archive.h). Parameters are the graph's inputs (named as
// declared), results its outputs in declaration order.
Result<std::unique_ptr<Module>> import_path(const std::string &path);
// Parses and imports `text`; variables are read from `folder` (an empty folder refuses
// variables: the fuzz target's mode).
Result<std::unique_ptr<Module>> import_text(std::string_view text, const std::string &file,
                                            const std::string &folder);

} // namespace kiln::nnef_fe
