// NNEF models packed as a gzip-compressed tar file (NAME.tgz): the files of the model folder.
#pragma once

#include "support/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::nnef_fe {

// Files by name relative to the folder that holds graph.nnef ("graph.nnef", "w.dat", ...).
using Archive = std::map<std::string, std::vector<uint8_t>, std::less<>>;

// Reads `path`: gzip, then ustar/GNU tar entries. Only regular files and folders are accepted
// (links and special files are errors), names must be relative without "..", the archive
// must hold exactly one graph.nnef, and the unpacked size is bounded by KILN_MAX_MODEL_BYTES.
Result<Archive> read_tgz(const std::string &path);
Result<Archive> unpack_tgz(const uint8_t *data, size_t size, const std::string &name);

} // namespace kiln::nnef_fe
