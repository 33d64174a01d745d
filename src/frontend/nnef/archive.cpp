#include "frontend/nnef/archive.h"

#include "support/limits.h"

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <zlib.h>

namespace kiln::nnef_fe {

namespace fs = std::filesystem;

namespace {

Result<std::vector<uint8_t>> gunzip(const uint8_t *data, size_t size, const std::string &name) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Status::error(fmt::format("{}: zlib failed to start", name));
  z.next_in = const_cast<Bytef *>(data);
  z.avail_in = static_cast<uInt>(std::min<size_t>(size, UINT32_MAX));
  std::vector<uint8_t> out;
  const size_t cap = static_cast<size_t>(limits().max_model_bytes);
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() >= cap) {
      inflateEnd(&z);
      return Status::error(fmt::format("{}: unpacks to more than KILN_MAX_MODEL_BYTES", name));
    }
    const size_t old = out.size();
    out.resize(std::min(cap, std::max<size_t>(old * 2, 1 << 16)));
    z.next_out = out.data() + old;
    z.avail_out = static_cast<uInt>(out.size() - old);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return Status::error(fmt::format("{}: not a valid gzip stream ({})", name,
                                       rc == Z_BUF_ERROR ? "truncated" : z.msg ? z.msg : "corrupt"));
    }
  }
  inflateEnd(&z);
  return out;
}

std::string field(const uint8_t *p, size_t n) {
  size_t len = 0;
  while (len < n && p[len]) ++len;
  return std::string(reinterpret_cast<const char *>(p), len);
}

Result<uint64_t> octal(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  size_t i = 0;
  while (i < n && p[i] == ' ') ++i;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v > (UINT64_MAX >> 3)) return Status::error("size field overflows");
    v = v * 8 + (p[i] - '0');
  }
  if (i < n && p[i] != 0 && p[i] != ' ') return Status::error("size field is not octal");
  return v;
}

} // namespace

Result<Archive> unpack_tgz(const uint8_t *data, size_t size, const std::string &name) {
  KILN_ASSIGN(std::vector<uint8_t> tar, gunzip(data, size, name));
  auto err = [&](const std::string &msg) { return Status::error(fmt::format("{}: {}", name, msg)); };
  Archive files;
  size_t pos = 0;
  while (pos + 512 <= tar.size()) {
    const uint8_t *h = tar.data() + pos;
    bool zero = true;
    for (size_t i = 0; i < 512 && zero; ++i) zero = h[i] == 0;
    if (zero) break;
    std::string entry = field(h, 100);
    if (std::memcmp(h + 257, "ustar", 5) == 0) {
      const std::string prefix = field(h + 345, 155);
      if (!prefix.empty()) entry = prefix + "/" + entry;
    }
    auto sz = octal(h + 124, 12);
    if (!sz) return err(fmt::format("entry '{}': {}", entry, sz.status().message()));
    const uint64_t n = sz.value();
    const char type = static_cast<char>(h[156]);
    pos += 512;
    if (n > tar.size() - pos) return err(fmt::format("entry '{}' is cut short", entry));
    if (type == 'x' || type == 'g') { // pax headers: metadata only
      pos += (n + 511) / 512 * 512;
      continue;
    }
    const fs::path rel = fs::path(entry).lexically_normal();
    if (entry.empty() || rel.is_absolute() || rel.has_root_name() || (!rel.empty() && *rel.begin() == ".."))
      return err(fmt::format("entry '{}' leaves the model folder", entry));
    if (type == '5') {
      pos += (n + 511) / 512 * 512;
      continue;
    }
    if (type != '0' && type != '\0')
      return err(fmt::format("entry '{}' is not a regular file (type '{}'): links and special files are refused",
                             entry, type >= 32 && type < 127 ? std::string(1, type) : std::string("?")));
    std::string key = rel.generic_string();
    if (!files.emplace(key, std::vector<uint8_t>(tar.begin() + pos, tar.begin() + pos + n)).second)
      return err(fmt::format("entry '{}' appears twice", entry));
    pos += (n + 511) / 512 * 512;
  }
  // Re-root at the folder holding graph.nnef.
  std::string root;
  int graphs = 0;
  for (const auto &[k, v] : files)
    if (fs::path(k).filename() == "graph.nnef") ++graphs, root = fs::path(k).parent_path().generic_string();
  if (graphs != 1) return err(fmt::format("holds {} graph.nnef files, expected one", graphs));
  Archive model;
  for (auto &[k, v] : files) {
    if (!root.empty() && k.rfind(root + "/", 0) != 0) continue;
    model.emplace(root.empty() ? k : k.substr(root.size() + 1), std::move(v));
  }
  return model;
}

Result<Archive> read_tgz(const std::string &path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Status::error(fmt::format("cannot open {}", path));
  const std::streamoff size = f.tellg();
  if (size < 0) return Status::error(fmt::format("cannot read {}", path));
  if (size > limits().max_model_bytes)
    return Status::error(fmt::format("{}: {} bytes exceed KILN_MAX_MODEL_BYTES", path, size));
  std::vector<uint8_t> buf(static_cast<size_t>(size));
  f.seekg(0);
  if (size && !f.read(reinterpret_cast<char *>(buf.data()), size))
    return Status::error(fmt::format("cannot read {}", path));
  return unpack_tgz(buf.data(), buf.size(), path);
}

} // namespace kiln::nnef_fe
