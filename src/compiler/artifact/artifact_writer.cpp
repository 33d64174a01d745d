// Serialises a Program as the FlatBuffers artifact of schema/kiln.fbs.
#include "compiler/artifact/program.h"

#include "kiln/artifact/digest.h"
#include "kiln/artifact/kiln_generated.h"

#include <cstring>

namespace kiln::compiler {

namespace {

namespace fb = kiln::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// KILN_ARTIFACT_SCHEMA_VERSION (2: digest trailer; 3: executable code is a union).
constexpr uint32_t kSchemaVersion = 3;
constexpr const char *kProducer = "kiln 0.1";

// schema/kiln.fbs spells the dtype list out for flatc: each value must be the list's.
#define KILN_X(id, text, api, bytes, c_enum, fb_id)                                            \
  static_assert(uint8_t(fb::DType::fb_id) == uint8_t(DType::id), "kiln.fbs DType " #fb_id);
KILN_DTYPES(KILN_X)
#undef KILN_X

fb::DType to_fb(DType t) {
  switch (t) {
#define KILN_X(id, text, api, bytes, c_enum, fb_id)                                            \
  case DType::id: return fb::DType::fb_id;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return fb::DType::f32;
}

fb::BufferKind to_fb(BufKind k) {
  switch (k) {
  case BufKind::constant: return fb::BufferKind::constant;
  case BufKind::input: return fb::BufferKind::input;
  case BufKind::output: return fb::BufferKind::output;
  case BufKind::transient: return fb::BufferKind::transient;
  }
  return fb::BufferKind::transient;
}

std::vector<Offset<fb::TensorSig>> sigs(FlatBufferBuilder &b, const std::vector<Signature> &s) {
  std::vector<Offset<fb::TensorSig>> out;
  for (const Signature &sig : s) {
    std::vector<int64_t> shape(sig.shape.begin(), sig.shape.end());
    out.push_back(fb::CreateTensorSigDirect(b, sig.name.c_str(), to_fb(sig.dtype), &shape));
  }
  return out;
}

// `buf`, or the byte range `r` of it when r.size is not zero.
Offset<fb::BufferRef> buffer_ref(FlatBufferBuilder &b, const Buffer &buf, ByteRange r = {}) {
  const uint64_t off = buf.kind == BufKind::transient ? buf.offset : 0;
  if (r.size == 0) r = {0, buf.size};
  return fb::CreateBufferRef(b, to_fb(buf.kind), buf.index, off + r.offset, r.size);
}

Offset<fb::Executable> executable(FlatBufferBuilder &b, const Executable &e) {
  const kir::Requirements &r = e.requirements;
  fb::RequirementsBuilder rb(b);
#define KILN_X(field, name) rb.add_##field(r.field);
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  rb.add_subgroup_size(r.subgroup_size);
  rb.add_shared_memory_bytes(r.shared_memory_bytes);
  rb.add_max_workgroup_invocations(r.max_workgroup_invocations);
  rb.add_loop_iterations(r.loop_iterations);
  auto req = rb.Finish();
  std::vector<uint32_t> wg(e.workgroup_size, e.workgroup_size + 3);
  Offset<void> code;
  fb::ExecutableCode kind = fb::ExecutableCode::NONE;
  if (const auto *s = std::get_if<target::SpirvPayload>(&e.code)) {
    code = fb::CreateSpirvCodeDirect(b, &s->words).Union();
    kind = fb::ExecutableCode::SpirvCode;
  } else {
    const auto &n = std::get<target::NativePayload>(e.code);
    b.ForceVectorAlignment(n.bytes.size(), 1, 16);
    auto bytes = b.CreateVector(n.bytes);
    code = fb::CreateNativeCode(b, b.CreateString(n.format), bytes).Union();
    kind = fb::ExecutableCode::NativeCode;
  }
  std::vector<uint8_t> writes(e.binding_writes.begin(), e.binding_writes.end());
  return fb::CreateExecutableDirect(b, e.name.c_str(), "main", &wg, e.num_bindings,
                                    e.push_constant_bytes, req, kind, code, &writes);
}

Offset<fb::CommandEntry> command(FlatBufferBuilder &b, const Program &p, const Command &c,
                                 bool waits) {
  if (const auto *d = std::get_if<Dispatch>(&c)) {
    std::vector<Offset<fb::BufferRef>> refs;
    for (size_t j = 0; j < d->buffers.size(); ++j)
      refs.push_back(buffer_ref(b, p.buffers[static_cast<size_t>(d->buffers[j])],
                                j < d->ranges.size() ? d->ranges[j] : ByteRange{}));
    std::vector<uint8_t> push(d->push_constants.size() * 4);
    if (!push.empty()) std::memcpy(push.data(), d->push_constants.data(), push.size());
    std::vector<uint32_t> groups(d->workgroups, d->workgroups + 3);
    std::vector<Offset<flatbuffers::String>> ops;
    for (const std::string &name : d->source_ops) ops.push_back(b.CreateString(name));
    auto disp = fb::CreateDispatchDirect(b, d->executable, &refs, &push, &groups, &ops);
    return fb::CreateCommandEntry(b, fb::Command::Dispatch, disp.Union(), waits);
  }
  const auto &cp = std::get<Copy>(c);
  auto src = buffer_ref(b, p.buffers[static_cast<size_t>(cp.src)]);
  auto dst = buffer_ref(b, p.buffers[static_cast<size_t>(cp.dst)]);
  auto copy = fb::CreateCopy(b, src, dst);
  return fb::CreateCommandEntry(b, fb::Command::Copy, copy.Union(), waits);
}

} // namespace

std::vector<uint8_t> write_artifact(const Program &p) {
  FlatBufferBuilder b(1 << 16);
  // Constants in index order, each 64-byte aligned in the blob.
  std::vector<const Buffer *> consts;
  for (const Buffer &buf : p.buffers)
    if (buf.kind == BufKind::constant) {
      if (consts.size() <= buf.index) consts.resize(buf.index + 1, nullptr);
      consts[buf.index] = &buf;
    }
  std::vector<uint8_t> blob;
  std::vector<uint64_t> offsets(consts.size());
  for (size_t i = 0; i < consts.size(); ++i) {
    const Buffer *c = consts[i];
    KILN_ASSERT(c != nullptr, "constant indices must be dense");
    if (c->derived) continue;
    const uint64_t off = align_up(blob.size());
    blob.resize(off + c->size, 0);
    if (c->size) std::memcpy(blob.data() + off, c->data.raw(), c->size);
    offsets[i] = off;
  }
  blob.resize(align_up(blob.size()), 0);
  // Derived constants (written by the init commands at load) follow the data, without bytes here.
  uint64_t derived_bytes = 0;
  for (size_t i = 0; i < consts.size(); ++i)
    if (consts[i]->derived) {
      offsets[i] = blob.size() + derived_bytes;
      derived_bytes = align_up(derived_bytes + consts[i]->size);
    }
  std::vector<Offset<fb::Constant>> const_offs;
  for (size_t i = 0; i < consts.size(); ++i)
    const_offs.push_back(fb::CreateConstant(b, offsets[i], consts[i]->size));
  auto ins = sigs(b, p.inputs);
  auto outs = sigs(b, p.outputs);
  std::vector<Offset<fb::Executable>> exes;
  for (const Executable &e : p.executables) exes.push_back(executable(b, e));
  std::vector<Offset<fb::CommandEntry>> cmds;
  for (size_t i = 0; i < p.commands.size(); ++i)
    cmds.push_back(command(b, p, p.commands[i], p.waits.empty() || p.waits[i]));
  std::vector<Offset<fb::CommandEntry>> init_cmds;
  for (const Command &c : p.init_commands) init_cmds.push_back(command(b, p, c, true));
  Offset<fb::NativeLibrary> lib;
  if (p.native_library) {
    const target::NativeLibrary &l = *p.native_library;
    b.ForceVectorAlignment(l.bytes.size(), 1, 16);
    auto lib_bytes = b.CreateVector(l.bytes);
    std::vector<Offset<flatbuffers::String>> feats;
    for (const std::string &f : l.cpu_features) feats.push_back(b.CreateString(f));
    auto feat_vec = b.CreateVector(feats);
    lib = fb::CreateNativeLibrary(b, b.CreateString(l.format), b.CreateString(l.isa), feat_vec,
                                  lib_bytes);
  }
  std::vector<Offset<flatbuffers::String>> f32_nodes;
  for (const std::string &n : p.f32_nodes) f32_nodes.push_back(b.CreateString(n));
  auto precision = fb::CreatePrecisionChoiceDirect(b, p.precision_mode.c_str(), p.max_error,
                                                   &f32_nodes, p.half_nodes, &p.output_errors);
  auto model = fb::CreateModelDirect(b, kSchemaVersion, kProducer, p.target.c_str(), &ins, &outs,
                                     &const_offs, &blob, &exes, &cmds, p.arena_bytes, lib,
                                     precision, init_cmds.empty() ? nullptr : &init_cmds,
                                     derived_bytes);
  fb::FinishModelBuffer(b, model);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  artifact::seal_artifact(&bytes);
  return bytes;
}

} // namespace kiln::compiler
