// kiln inspect --graph: the compiled program of an artifact as a Graphviz picture. One box per
// command (kernel name, the graph ops fused into it, workgroups), the model's inputs, outputs
// and constants as their own nodes, and edges along the data: a command's read of a byte
// range comes from the commands that last wrote those bytes (arena regions, outputs) or from
// the input / constant it names. Edges carry what the artifact knows: shape and dtype of
// inputs and outputs, the arena offset and size of transients. A table gives the arena plan.
// DOT is written here; .svg and .html run Graphviz's `dot -Tsvg` as a subprocess.
#include "kiln/artifact/kiln_generated.h"
#include "tools/tools.h"

#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

extern char **environ;

namespace kiln::tools {

namespace {

// Text for a Graphviz HTML-like label.
std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
    case '&': o += "&amp;"; break;
    case '<': o += "&lt;"; break;
    case '>': o += "&gt;"; break;
    case '"': o += "&quot;"; break;
    default: o += c;
    }
  }
  return o;
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

std::string sig_text(const fb::TensorSig *t) {
  std::string dims;
  if (t->shape())
    for (uint32_t i = 0; i < t->shape()->size(); ++i)
      dims += fmt::format("{}{}", i ? "x" : "", t->shape()->Get(i));
  return fmt::format("{}[{}]", fb::EnumNameDType(t->dtype()), dims);
}

// A byte range of one buffer: `space` names the buffer ("arena", "in0", "out1", "c3").
struct Range {
  std::string space;
  uint64_t begin = 0, end = 0;
};

// A command's write of a range. `live`: the parts of it no later write has replaced yet.
// Several commands may write one range before anyone reads it (the producers of a concat
// write their slices in place, each binding the whole result), so a write replaces only what
// an earlier write left that has since been read (the arena region reused for another tensor).
struct Write {
  Range r;
  size_t cmd;
  std::vector<std::pair<uint64_t, uint64_t>> live;
  bool read = false;
};

class GraphWriter {
public:
  explicit GraphWriter(const fb::Model &m) : m_(m) {}
  std::string dot();

private:
  Range range_of(const fb::BufferRef *b) const;
  std::string source_node(const std::string &space) const;
  std::string edge_text(const Range &r) const;
  bool last_writers(const Range &r, std::set<size_t> *cmds);
  void write(const Range &r, size_t cmd);
  void read(const Range &r, size_t cmd);
  void command_node(size_t i, const fb::CommandEntry *e);
  std::string legend() const;

  const fb::Model &m_;
  std::ostringstream out_;
  std::vector<Write> writes_;
  std::set<uint32_t> constants_used_;
  // Edges (from, to) -> label lines, in first-seen order.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> edges_;
  std::vector<std::pair<std::string, std::string>> edge_order_;
  bool directions_known_ = true;

  void edge(const std::string &from, const std::string &to, const std::string &label) {
    auto key = std::make_pair(from, to);
    auto [it, inserted] = edges_.try_emplace(key);
    if (inserted) edge_order_.push_back(key);
    if (std::find(it->second.begin(), it->second.end(), label) == it->second.end())
      it->second.push_back(label);
  }
};

Range GraphWriter::range_of(const fb::BufferRef *b) const {
  Range r{"", b->offset(), b->offset() + b->size()};
  switch (b->kind()) {
  case fb::BufferKind::transient: r.space = "arena"; break;
  case fb::BufferKind::input: r.space = fmt::format("in{}", b->index()); break;
  case fb::BufferKind::output: r.space = fmt::format("out{}", b->index()); break;
  case fb::BufferKind::constant: r.space = fmt::format("c{}", b->index()); break;
  }
  return r;
}

// The node that holds a buffer's bytes before any command wrote them; "" for the arena and
// outputs (nothing meaningful is there).
std::string GraphWriter::source_node(const std::string &space) const {
  return space.rfind("in", 0) == 0 || space[0] == 'c' ? space : "";
}

std::string GraphWriter::edge_text(const Range &r) const {
  const uint64_t n = r.end - r.begin;
  if (r.space == "arena") return fmt::format("arena @{} ({} B)", r.begin, n);
  if (r.space[0] == 'c') return fmt::format("{} B", n);
  const bool is_in = r.space.rfind("in", 0) == 0;
  const auto *sigs = is_in ? m_.inputs() : m_.outputs();
  const uint32_t k = static_cast<uint32_t>(std::stoul(r.space.substr(is_in ? 2 : 3)));
  if (!sigs || k >= sigs->size()) return fmt::format("{} B", n);
  return fmt::format("{} ({} B)", sig_text(sigs->Get(k)), n);
}

// The commands whose writes of some part of `r` are live (marked read); whether there are none.
bool GraphWriter::last_writers(const Range &r, std::set<size_t> *cmds) {
  for (Write &w : writes_) {
    if (w.r.space != r.space) continue;
    for (auto [b, e] : w.live)
      if (std::max(b, r.begin) < std::min(e, r.end)) {
        cmds->insert(w.cmd);
        w.read = true;
        break;
      }
  }
  return cmds->empty();
}

void GraphWriter::write(const Range &r, size_t cmd) {
  for (Write &w : writes_) {
    if (w.r.space != r.space || !w.read) continue;
    std::vector<std::pair<uint64_t, uint64_t>> still;
    for (auto [b, e] : w.live) {
      if (b < std::min(e, r.begin)) still.emplace_back(b, std::min(e, r.begin));
      if (std::max(b, r.end) < e) still.emplace_back(std::max(b, r.end), e);
    }
    w.live = std::move(still);
  }
  writes_.push_back({r, cmd, {{r.begin, r.end}}, false});
}

// Edges into `cmd` from the live writers of `r`, or from its input / constant node.
void GraphWriter::read(const Range &r, size_t cmd) {
  const std::string to = fmt::format("cmd{}", cmd);
  std::set<size_t> writers;
  const bool unwritten = last_writers(r, &writers);
  for (size_t w : writers) edge(fmt::format("cmd{}", w), to, edge_text(r));
  if (unwritten && !source_node(r.space).empty()) {
    if (r.space[0] == 'c')
      constants_used_.insert(static_cast<uint32_t>(std::stoul(r.space.substr(1))));
    edge(r.space, to, edge_text(r));
  }
}

void GraphWriter::command_node(size_t i, const fb::CommandEntry *e) {
  const std::string id = fmt::format("cmd{}", i);
  if (const fb::Copy *c = e->command_as_Copy()) {
    out_ << fmt::format("  {} [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", "
                        "label=<<b>#{} copy</b><br/>{} B>];\n",
                        id, i, c->src() ? c->src()->size() : 0);
    if (c->src()) read(range_of(c->src()), i);
    if (c->dst()) write(range_of(c->dst()), i);
    return;
  }
  const fb::Dispatch *d = e->command_as_Dispatch();
  if (!d) return;
  const fb::Executable *exe = m_.executables() && d->executable() < m_.executables()->size()
                                  ? m_.executables()->Get(d->executable())
                                  : nullptr;
  std::string ops;
  if (d->source_ops())
    for (const flatbuffers::String *s : *d->source_ops())
      ops += (ops.empty() ? "" : " + ") + s->str();
  std::string wg = "?";
  if (d->workgroups() && d->workgroups()->size() == 3)
    wg = fmt::format("{}x{}x{}", d->workgroups()->Get(0), d->workgroups()->Get(1),
                     d->workgroups()->Get(2));
  out_ << fmt::format("  {} [shape=box, style=\"rounded,filled\", fillcolor=\"#dde8ff\", "
                      "label=<<b>#{} {}</b><br/>{}<br/><font point-size=\"8\">workgroups {}"
                      "</font>>];\n",
                      id, i, esc(exe ? str(exe->name()) : "?"),
                      esc(ops.empty() ? "(ops not recorded)" : ops), wg);
  if (!d->bindings()) return;
  const auto *flags = exe ? exe->binding_writes() : nullptr;
  const bool known = flags && flags->size() == d->bindings()->size();
  directions_known_ &= known;
  std::vector<Range> written;
  for (uint32_t b = 0; b < d->bindings()->size(); ++b) {
    const Range r = range_of(d->bindings()->Get(b));
    // Without the flags only outputs are known to be written.
    const bool writes = known ? flags->Get(b) != 0 : r.space.rfind("out", 0) == 0;
    if (writes) written.push_back(r);
    else read(r, i);
  }
  for (const Range &r : written) write(r, i);
}

std::string GraphWriter::legend() const {
  std::string rows;
  // The arena plan: each region some command writes, by offset.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<size_t>> regions;
  for (const Write &w : writes_)
    if (w.r.space == "arena") regions[{w.r.begin, w.r.end}].push_back(w.cmd);
  constexpr size_t kMaxRows = 64;
  size_t n = 0;
  for (const auto &[r, cmds] : regions) {
    if (n++ == kMaxRows) {
      rows += fmt::format("<tr><td colspan=\"3\">... {} more regions</td></tr>",
                          regions.size() - kMaxRows);
      break;
    }
    std::string by;
    for (size_t c : cmds) by += fmt::format("{}#{}", by.empty() ? "" : " ", c);
    rows += fmt::format("<tr><td align=\"right\">{}</td><td align=\"right\">{}</td>"
                        "<td align=\"left\">{}</td></tr>",
                        r.first, r.second - r.first, by);
  }
  uint64_t constant_bytes = 0;
  if (m_.constants())
    for (const fb::Constant *c : *m_.constants()) constant_bytes += c->size();
  std::string note = directions_known_
                         ? ""
                         : "<tr><td colspan=\"3\">read/write of bindings not recorded (older "
                           "artifact): only writes to outputs are drawn</td></tr>";
  return fmt::format(
      "  legend [shape=plaintext, label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" "
      "cellpadding=\"3\"><tr><td colspan=\"3\" bgcolor=\"#f4f4f4\"><b>arena plan</b>: {} B, "
      "{} regions; constants: {} ({} B)</td></tr>{}"
      "<tr><td><b>offset</b></td><td><b>bytes</b></td><td><b>written by</b></td></tr>{}"
      "<tr><td colspan=\"3\" bgcolor=\"#f4f4f4\">blue: dispatch (kernel, fused graph ops, "
      "workgroups); grey: copy; green: model input; red: model output; yellow: constant; "
      "edges: the bytes a command reads, from the commands that wrote them</td></tr></table>>];\n",
      m_.arena_bytes(), regions.size(), m_.constants() ? m_.constants()->size() : 0,
      constant_bytes, note, rows);
}

std::string GraphWriter::dot() {
  out_ << "digraph kiln {\n"
          "  graph [rankdir=TB, fontname=\"Helvetica\", labelloc=t, fontsize=14];\n"
          "  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
  out_ << fmt::format("  label=<kiln artifact: target {}, {} commands>;\n", esc(str(m_.target())),
                      m_.commands() ? m_.commands()->size() : 0);
  if (m_.inputs())
    for (uint32_t i = 0; i < m_.inputs()->size(); ++i)
      out_ << fmt::format("  in{} [shape=invhouse, style=filled, fillcolor=\"#d8f5d8\", "
                          "label=<input <b>{}</b><br/>{}>];\n",
                          i, esc(str(m_.inputs()->Get(i)->name())),
                          esc(sig_text(m_.inputs()->Get(i))));
  if (m_.commands())
    for (uint32_t i = 0; i < m_.commands()->size(); ++i)
      command_node(i, m_.commands()->Get(i));
  if (m_.outputs())
    for (uint32_t i = 0; i < m_.outputs()->size(); ++i) {
      const fb::TensorSig *t = m_.outputs()->Get(i);
      out_ << fmt::format("  out{} [shape=house, style=filled, fillcolor=\"#f8d8d8\", "
                          "label=<output <b>{}</b><br/>{}>];\n",
                          i, esc(str(t->name())), esc(sig_text(t)));
      // The output's bytes as the last commands left them.
      Range whole{fmt::format("out{}", i), 0, 0};
      for (const Write &w : writes_)
        if (w.r.space == whole.space) whole.end = std::max(whole.end, w.r.end);
      std::set<size_t> last;
      (void)last_writers(whole, &last);
      for (size_t c : last) edge(fmt::format("cmd{}", c), whole.space, edge_text(whole));
    }
  for (uint32_t c : constants_used_) {
    const uint64_t size = m_.constants() && c < m_.constants()->size()
                              ? m_.constants()->Get(c)->size()
                              : 0;
    out_ << fmt::format("  c{} [shape=note, style=filled, fillcolor=\"#fff6c8\", fontsize=8, "
                        "label=<constant {}<br/>{} B>];\n",
                        c, c, size);
  }
  for (const auto &key : edge_order_) {
    std::string label;
    for (const std::string &l : edges_[key]) label += (label.empty() ? "" : "<br/>") + esc(l);
    out_ << fmt::format("  {} -> {} [label=<{}>];\n", key.first, key.second, label);
  }
  out_ << legend() << "}\n";
  return out_.str();
}

// Runs `dot -Tsvg -o svg_path` with `dot_text` on its standard input.
Status render_svg(const std::string &dot_text, const std::string &svg_path) {
  int fds[2];
  if (pipe(fds) != 0) return Status::error(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string arg0 = "dot", arg1 = "-Tsvg", arg2 = "-o", arg3 = svg_path;
  char *argv[] = {arg0.data(), arg1.data(), arg2.data(), arg3.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    if (rc == ENOENT)
      return Status::error(fmt::format(
          "{}: Graphviz's 'dot' is not on PATH; install the graphviz package "
          "(scripts/install-deps.sh), or write the DOT text with --graph FILE.dot",
          svg_path));
    return Status::error(fmt::format("{}: cannot run 'dot': {}", svg_path, std::strerror(rc)));
  }
  // dot exiting early must be an error message, not SIGPIPE.
  auto old = std::signal(SIGPIPE, SIG_IGN);
  size_t done = 0;
  while (done < dot_text.size()) {
    const ssize_t n = write(fds[1], dot_text.data() + done, dot_text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fds[1]);
  std::signal(SIGPIPE, old);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::error(fmt::format("{}: 'dot -Tsvg' failed ({})", svg_path,
                                     WIFEXITED(status)
                                         ? fmt::format("exit status {}", WEXITSTATUS(status))
                                         : std::string("killed by a signal")));
  if (done < dot_text.size())
    return Status::error(fmt::format("{}: 'dot' stopped reading its input", svg_path));
  return Status::ok();
}

Status write_file(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) return Status::error(fmt::format("{}: cannot write", path));
  return Status::ok();
}

std::string html_page(const std::string &svg, const fb::Model &m) {
  // Inline SVG in HTML5 starts at the <svg> element (no XML prolog or DOCTYPE).
  const size_t at = svg.find("<svg");
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>kiln artifact ({})</title>\n<style>\n"
                     "body {{ font-family: sans-serif; margin: 1em; }}\n"
                     "#graph svg {{ max-width: 100%; height: auto; }}\n</style>\n</head>\n"
                     "<body>\n<h1>kiln artifact</h1>\n<p>target {}, {} commands, arena {} B</p>\n"
                     "<div id=\"graph\">\n{}</div>\n</body>\n</html>\n",
                     esc(str(m.target())), esc(str(m.target())),
                     m.commands() ? m.commands()->size() : 0, m.arena_bytes(),
                     at == std::string::npos ? svg : svg.substr(at));
}

bool ends_with(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

Status write_artifact_graph(const std::vector<uint8_t> &verified_artifact, const std::string &path) {
  const fb::Model &model = *fb::GetModel(verified_artifact.data());
  const std::string dot = GraphWriter(model).dot();
  if (ends_with(path, ".dot")) return write_file(path, dot);
  if (ends_with(path, ".svg")) return render_svg(dot, path);
  if (!ends_with(path, ".html"))
    return Status::error(fmt::format("--graph '{}': expected a .svg, .dot or .html file", path));
  const std::string svg_path = path + ".tmp.svg";
  Status s = render_svg(dot, svg_path);
  std::ifstream in(svg_path, std::ios::binary);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(svg_path.c_str());
  KILN_TRY(s);
  if (svg.empty()) return Status::error(fmt::format("{}: 'dot' wrote no SVG", path));
  return write_file(path, html_page(svg, model));
}

} // namespace kiln::tools
