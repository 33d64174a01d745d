// Artifact reader: verify the FlatBuffer, then check every index, offset and size of the
// program against the buffers it refers to, and convert it into a Program the drivers trust.
#include "kiln/artifact/kiln_generated.h"
#include "runtime/digest.h"
#include "runtime/program.h"

#include <cerrno>
#include <cstring>
#include <limits>

#include <unistd.h>

namespace kiln::rt {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kMaxBindings = 64;
constexpr uint32_t kMaxPushConstantBytes = 256;

Status bad(const std::string &message) {
  return Status(KILN_INVALID_ARTIFACT, "invalid artifact: " + message);
}

// a + b <= limit without overflow.
bool fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

constexpr uint32_t kiln_dtype_count = 0
#define KILN_X(id, text, api, bytes, c_enum, fb) +1
    KILN_DTYPES(KILN_X)
#undef KILN_X
    ;

Status convert_sig(const fb::TensorSig *sig, const std::string &what, TensorSig *out) {
  if (!sig)
    return bad(what + " is missing");
  out->name = sig->name() ? sig->name()->str() : what;
  auto dtype = static_cast<uint32_t>(sig->dtype());
  if (dtype >= kiln_dtype_count)
    return bad(cat(what, " '", out->name, "' has unknown dtype ", dtype));
  out->dtype = static_cast<kiln_dtype>(dtype);
  uint64_t count = 1;
  if (sig->shape()) {
    // The verifier of Debian's FlatBuffers (2.0.8) aligns a vector's length prefix, not 8-byte
    // elements; the buffer start is 8-byte aligned here, so this is the element alignment (an
    // empty shape, a scalar's, has no element to read and may sit anywhere).
    if (sig->shape()->size() != 0 &&
        reinterpret_cast<uintptr_t>(sig->shape()->data()) % alignof(int64_t) != 0)
      return bad(cat(what, " '", out->name, "' has a misaligned shape vector (corrupt artifact)"));
    for (int64_t d : *sig->shape()) {
      if (d < 0)
        return bad(cat(what, " '", out->name, "' has negative dimension ", d));
      if (d != 0 && count > std::numeric_limits<uint64_t>::max() / 16 / uint64_t(d))
        return bad(cat(what, " '", out->name, "' is too large"));
      count *= uint64_t(d);
      out->shape.push_back(d);
    }
  }
  if (out->shape.size() > 32)
    return bad(cat(what, " '", out->name, "' has rank ", out->shape.size(), " (at most 32)"));
  out->bytes = count * kiln_dtype_size(out->dtype);
  return {};
}

Status convert_sigs(const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSig>> *sigs,
                    const char *what, std::vector<TensorSig> *out) {
  if (!sigs)
    return {};
  for (uint32_t i = 0; i < sigs->size(); ++i) {
    TensorSig sig;
    KILN_RT_TRY(convert_sig(sigs->Get(i), cat(what, " ", i), &sig));
    out->push_back(std::move(sig));
  }
  return {};
}

Requirements convert_requirements(const fb::Requirements *r) {
  Requirements out;
  if (!r)
    return out;
#define KILN_X(field, name) out.field = r->field();
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  out.subgroup_size = r->subgroup_size();
  out.shared_memory_bytes = r->shared_memory_bytes();
  out.max_workgroup_invocations = r->max_workgroup_invocations();
  out.loop_iterations = r->loop_iterations();
  return out;
}

Status convert_code(const fb::Executable *e, const std::string &what, ExecutableCode *out) {
  if (const fb::SpirvCode *s = e->code_as_SpirvCode()) {
    if (!s->words() || s->words()->size() < 5 || s->words()->Get(0) != kSpirvMagic)
      return bad(what + " has no valid SPIR-V module (missing, too short or bad magic number)");
    *out = SpirvCode{s->words()->size()};
    return {};
  }
  if (const fb::NativeCode *n = e->code_as_NativeCode()) {
    if (!n->format() || n->format()->size() == 0)
      return bad(what + " has native code of no format");
    if (!n->bytes() || n->bytes()->size() == 0)
      return bad(what + " has an empty native object");
    *out = NativeCode{n->format()->str(), n->bytes()->size()};
    return {};
  }
  return bad(cat(what, " has no code (code kind ", uint32_t(e->code_type()),
                 " is neither SPIR-V nor a native object)"));
}

Status convert_executable(const fb::Executable *e, uint32_t index, Executable *out) {
  if (!e)
    return bad(cat("executable ", index, " is missing"));
  out->name = e->name() ? e->name()->str() : cat("executable_", index);
  const std::string what = cat("executable ", index, " ('", out->name, "')");
  KILN_RT_TRY(convert_code(e, what, &out->code));
  out->entry_point = e->entry_point() ? e->entry_point()->str() : "main";
  if (out->entry_point.empty())
    return bad(what + " has an empty entry point name");
  if (!e->workgroup_size() || e->workgroup_size()->size() != 3)
    return bad(what + " needs a workgroup_size of 3 values");
  for (uint32_t i = 0; i < 3; ++i) {
    out->workgroup_size[i] = e->workgroup_size()->Get(i);
    if (out->workgroup_size[i] == 0)
      return bad(what + " has a zero workgroup size");
  }
  out->num_bindings = e->num_bindings();
  if (out->num_bindings > kMaxBindings)
    return bad(cat(what, " has ", out->num_bindings, " bindings (at most ", kMaxBindings, ")"));
  out->push_constant_bytes = e->push_constant_bytes();
  if (out->push_constant_bytes % 4 != 0 || out->push_constant_bytes > kMaxPushConstantBytes)
    return bad(cat(what, " has ", out->push_constant_bytes,
                   " push constant bytes (a multiple of 4, at most ", kMaxPushConstantBytes, ")"));
  out->requirements = convert_requirements(e->requirements());
  return {};
}

// Converts one BufferRef and checks it lies inside the buffer it names.
Status convert_ref(const fb::BufferRef *ref, const Program &p,
                   const flatbuffers::Vector<flatbuffers::Offset<fb::Constant>> *constants,
                   const std::string &what, BufferRef *out) {
  if (!ref)
    return bad(what + " is missing");
  auto kind = static_cast<uint32_t>(ref->kind());
  if (kind > uint32_t(BufferKind::transient))
    return bad(cat(what, " has unknown buffer kind ", kind));
  out->kind = static_cast<BufferKind>(kind);
  out->index = ref->index();
  out->offset = ref->offset();
  out->size = ref->size();
  if (out->size == 0)
    return bad(what + " is empty (zero-sized ranges are never bound)");
  uint64_t limit = 0, base = 0;
  std::string buffer;
  switch (out->kind) {
  case BufferKind::constant: {
    uint32_t n = constants ? constants->size() : 0;
    if (out->index >= n)
      return bad(cat(what, " refers to constant ", out->index, " but there are ", n));
    base = constants->Get(out->index)->offset();
    limit = constants->Get(out->index)->size();
    buffer = cat("constant ", out->index);
    break;
  }
  case BufferKind::input:
  case BufferKind::output: {
    const auto &sigs = out->kind == BufferKind::input ? p.inputs : p.outputs;
    const char *name = buffer_kind_name(out->kind);
    if (out->index >= sigs.size())
      return bad(cat(what, " refers to ", name, " ", out->index, " but there are ", sigs.size()));
    limit = sigs[out->index].bytes;
    buffer = cat(name, " ", out->index, " ('", sigs[out->index].name, "')");
    break;
  }
  case BufferKind::transient:
    limit = p.arena_bytes;
    buffer = "the transient arena";
    break;
  }
  if (!fits(out->offset, out->size, limit))
    return bad(cat(what, " covers bytes [", out->offset, ", +", out->size, ") outside ", buffer,
                   " of ", limit, " bytes"));
  out->offset += base;
  return {};
}

Status convert_dispatch(const fb::Dispatch *d, const Program &p,
                        const flatbuffers::Vector<flatbuffers::Offset<fb::Constant>> *constants,
                        const std::string &what, Command *out) {
  out->kind = KILN_COMMAND_DISPATCH;
  out->executable = d->executable();
  if (out->executable >= p.executables.size())
    return bad(cat(what, " uses executable ", out->executable, " but there are ",
                   p.executables.size()));
  const Executable &exe = p.executables[out->executable];
  uint32_t n = d->bindings() ? d->bindings()->size() : 0;
  if (n != exe.num_bindings)
    return bad(cat(what, " binds ", n, " buffers but executable '", exe.name, "' has ",
                   exe.num_bindings, " bindings"));
  for (uint32_t i = 0; i < n; ++i) {
    BufferRef ref;
    KILN_RT_TRY(convert_ref(d->bindings()->Get(i), p, constants, cat(what, " binding ", i), &ref));
    out->bindings.push_back(ref);
  }
  uint32_t pc = d->push_constants() ? d->push_constants()->size() : 0;
  if (pc != exe.push_constant_bytes)
    return bad(cat(what, " has ", pc, " push constant bytes but executable '", exe.name,
                   "' declares ", exe.push_constant_bytes));
  if (pc)
    out->push_constants.assign(d->push_constants()->begin(), d->push_constants()->end());
  if (!d->workgroups() || d->workgroups()->size() != 3)
    return bad(what + " needs 3 workgroup counts");
  for (uint32_t i = 0; i < 3; ++i)
    out->workgroups[i] = d->workgroups()->Get(i);
  if (d->source_ops()) // informational only (profiles); the verifier checked the strings
    for (const flatbuffers::String *op : *d->source_ops())
      out->source_ops += (out->source_ops.empty() ? "" : ",") + op->str();
  return {};
}

Status convert_copy(const fb::Copy *c, const Program &p,
                    const flatbuffers::Vector<flatbuffers::Offset<fb::Constant>> *constants,
                    const std::string &what, Command *out) {
  out->kind = KILN_COMMAND_COPY;
  KILN_RT_TRY(convert_ref(c->src(), p, constants, what + " source", &out->src));
  KILN_RT_TRY(convert_ref(c->dst(), p, constants, what + " destination", &out->dst));
  if (out->src.size != out->dst.size)
    return bad(cat(what, " copies ", out->src.size, " bytes into ", out->dst.size));
  if (out->dst.kind == BufferKind::constant || out->dst.kind == BufferKind::input)
    return bad(cat(what, " writes into ", buffer_kind_name(out->dst.kind), " ", out->dst.index,
                   ", which is read-only"));
  return {};
}

// One command list (`init`: Model.init_commands, which may bind constants only and write only
// into the derived bytes).
Status convert_command_list(const fb::Model *m,
                            const flatbuffers::Vector<flatbuffers::Offset<fb::CommandEntry>> *list,
                            bool init, Program *p, std::vector<Command> *out) {
  if (!list)
    return {};
  for (uint32_t i = 0; i < list->size(); ++i) {
    const fb::CommandEntry *entry = list->Get(i);
    const std::string what = cat(init ? "init command " : "command ", i);
    Command cmd;
    if (entry && entry->command_as_Dispatch()) {
      KILN_RT_TRY(convert_dispatch(entry->command_as_Dispatch(), *p, m->constants(), what, &cmd));
    } else if (entry && entry->command_as_Copy()) {
      const fb::Copy *c = entry->command_as_Copy();
      if (init && c->dst() && c->dst()->kind() == fb::BufferKind::constant) {
        // convert_copy refuses a constant destination; an init copy writes one (derived bytes).
        cmd.kind = KILN_COMMAND_COPY;
        KILN_RT_TRY(convert_ref(c->src(), *p, m->constants(), what + " source", &cmd.src));
        KILN_RT_TRY(convert_ref(c->dst(), *p, m->constants(), what + " destination", &cmd.dst));
        if (cmd.src.size != cmd.dst.size)
          return bad(cat(what, " copies ", cmd.src.size, " bytes into ", cmd.dst.size));
        if (cmd.dst.offset < p->constant_bytes)
          return bad(cat(what, " writes into the constant data, not the derived bytes"));
      } else {
        KILN_RT_TRY(convert_copy(c, *p, m->constants(), what, &cmd));
      }
    } else {
      return bad(what + " is neither a Dispatch nor a Copy");
    }
    if (init) {
      const std::vector<BufferRef> refs =
          cmd.kind == KILN_COMMAND_COPY ? std::vector<BufferRef>{cmd.src, cmd.dst} : cmd.bindings;
      for (const BufferRef &r : refs)
        if (r.kind != BufferKind::constant)
          return bad(cat(what, " binds ", buffer_kind_name(r.kind), " ", r.index,
                         ": init commands bind constants only"));
    }
    cmd.waits = init || entry->waits();
    out->push_back(std::move(cmd));
  }
  return {};
}

Status convert_commands(const fb::Model *m, Program *p) {
  KILN_RT_TRY(convert_command_list(m, m->init_commands(), true, p, &p->init_commands));
  return convert_command_list(m, m->commands(), false, p, &p->commands);
}

// `base` is the start of the artifact: alignment is checked relative to it, as the FlatBuffers
// verifier does, so an artifact loads from any address.
Status convert_constants(const fb::Model *m, const uint8_t *base, Program *p) {
  p->constant_bytes = m->constant_data() ? m->constant_data()->size() : 0;
  if (p->constant_bytes && (m->constant_data()->data() - base) % 64 != 0)
    return bad("constant_data is not 64-byte aligned");
  p->derived_bytes = m->derived_bytes();
  if (p->derived_bytes > (uint64_t(1) << 40))
    return bad(cat("derived_bytes ", p->derived_bytes, " is larger than 1 TiB"));
  if (p->derived_bytes && !m->init_commands())
    return bad("the artifact has derived bytes but no init commands to write them");
  const uint64_t all = p->constant_bytes + p->derived_bytes;
  if (!m->constants())
    return {};
  for (uint32_t i = 0; i < m->constants()->size(); ++i) {
    const fb::Constant *c = m->constants()->Get(i);
    if (!c)
      return bad(cat("constant ", i, " is missing"));
    if (c->offset() % 64 != 0)
      return bad(cat("constant ", i, " offset ", c->offset(), " is not 64-byte aligned"));
    if (!fits(c->offset(), c->size(), all))
      return bad(cat("constant ", i, " covers bytes [", c->offset(), ", +", c->size(),
                     ") outside constant_data of ", p->constant_bytes, " bytes and ",
                     p->derived_bytes, " derived bytes"));
  }
  return {};
}

Status convert_model(const fb::Model *m, const uint8_t *base, Program *p) {
  if (m->schema_version() != KILN_ARTIFACT_SCHEMA_VERSION)
    return Status(KILN_INVALID_ARTIFACT,
                  cat("artifact schema version ", m->schema_version(),
                      " is not supported: this runtime reads version ",
                      KILN_ARTIFACT_SCHEMA_VERSION, " (recompile the model with this kiln)"));
  p->producer = m->producer() ? m->producer()->str() : "";
  p->target = m->target() ? m->target()->str() : "";
  p->arena_bytes = m->arena_bytes();
  KILN_RT_TRY(convert_sigs(m->inputs(), "input", &p->inputs));
  KILN_RT_TRY(convert_sigs(m->outputs(), "output", &p->outputs));
  KILN_RT_TRY(convert_constants(m, base, p));
  if (m->executables()) {
    for (uint32_t i = 0; i < m->executables()->size(); ++i) {
      Executable exe;
      KILN_RT_TRY(convert_executable(m->executables()->Get(i), i, &exe));
      p->executables.push_back(std::move(exe));
    }
  }
  if (const fb::NativeLibrary *l = m->native_library()) {
    NativeLibrary &lib = p->native_library;
    if (!l->format() || l->format()->size() == 0 || !l->bytes() || l->bytes()->size() == 0)
      return bad("the native library has no format or no bytes");
    lib.format = l->format()->str();
    lib.isa = l->isa() ? l->isa()->str() : "";
    if (l->cpu_features())
      for (uint32_t i = 0; i < l->cpu_features()->size(); ++i) {
        const flatbuffers::String *f = l->cpu_features()->Get(i);
        if (!f || f->size() == 0 || f->size() > 64)
          return bad(cat("native library CPU feature ", i, " is empty or too long"));
        lib.cpu_features.push_back(f->str());
      }
    lib.bytes = l->bytes()->size();
  }
  for (size_t i = 0; i < p->executables.size(); ++i) {
    const auto *n = std::get_if<NativeCode>(&p->executables[i].code);
    if (n && n->format == "symbol" && p->native_library.bytes == 0)
      return bad(cat("executable ", i, " ('", p->executables[i].name,
                     "') names a symbol but the artifact has no native library"));
  }
  return convert_commands(m, p);
}

} // namespace

std::string code_kind_name(const ExecutableCode &code) {
  if (const auto *n = std::get_if<NativeCode>(&code))
    return "native object (" + n->format + ")";
  return "SPIR-V";
}

const char *buffer_kind_name(BufferKind kind) {
  switch (kind) {
  case BufferKind::constant: return "constant";
  case BufferKind::input: return "input";
  case BufferKind::output: return "output";
  case BufferKind::transient: return "transient";
  }
  return "?";
}

Status parse_artifact(const void *data, size_t size, std::unique_ptr<Program> *out,
                      ArtifactBytes *bytes) {
  if (!data && size)
    return Status(KILN_INVALID_ARGUMENT, "artifact data is NULL");
  if (size < 8)
    return bad(cat("only ", size, " bytes: truncated or not a kiln artifact"));
  if (size > FLATBUFFERS_MAX_BUFFER_SIZE)
    return bad(cat(size, " bytes is larger than a FlatBuffer can be"));
  if (!flatbuffers::BufferHasIdentifier(data, fb::ModelIdentifier()))
    return bad("file identifier is not \"KLN1\": not a kiln artifact");
  // The content digest is checked before anything else is read; from here on `size` excludes
  // the trailer.
  std::array<uint8_t, 32> digest{};
  KILN_RT_TRY(check_digest(data, size, bytes->fd_, &digest, &size));
  // The bytes are used in place. The verifier checks alignment relative to the buffer start;
  // reading scalars of up to 8 bytes then needs the start itself 8-byte aligned, so only a
  // misaligned buffer is copied (into storage freed with `bytes`).
  auto base = static_cast<const uint8_t *>(data);
  if (reinterpret_cast<uintptr_t>(base) % alignof(uint64_t) != 0) {
    bytes->aligned_copy_.reset(new uint64_t[(size + 7) / 8]);
    std::memcpy(bytes->aligned_copy_.get(), data, size);
    base = reinterpret_cast<const uint8_t *>(bytes->aligned_copy_.get());
  }
  flatbuffers::Verifier verifier(base, size);
  if (!fb::VerifyModelBuffer(verifier))
    return bad("the FlatBuffer does not verify (truncated or corrupt)");
  const fb::Model *model = fb::GetModel(base);
  auto p = std::make_unique<Program>();
  p->digest = digest;
  KILN_RT_TRY(convert_model(model, base, p.get()));
  bytes->code_.clear();
  for (uint32_t i = 0; i < p->executables.size(); ++i) {
    const fb::Executable *e = model->executables()->Get(i);
    const fb::SpirvCode *spirv = e->code_as_SpirvCode();
    bytes->code_.push_back(spirv ? reinterpret_cast<const uint8_t *>(spirv->words()->data())
                                 : e->code_as_NativeCode()->bytes()->data());
  }
  bytes->library_ = p->native_library.bytes ? model->native_library()->bytes()->data() : nullptr;
  bytes->constants_ = p->constant_bytes ? model->constant_data()->data() : nullptr;
  bytes->constants_offset_ = p->constant_bytes ? uint64_t(bytes->constants_ - base) : 0;
  *out = std::move(p);
  return {};
}

Status ArtifactBytes::read_constants(uint64_t offset, void *dst, size_t n) const {
  if (n == 0)
    return {};
  if (fd_ < 0) {
    std::memcpy(dst, constants_ + offset, n);
    return {};
  }
  auto *out = static_cast<uint8_t *>(dst);
  uint64_t at = constants_offset_ + offset;
  while (n > 0) {
    ssize_t got = ::pread(fd_, out, n, off_t(at));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return error(KILN_NOT_FOUND, "cannot read constant data from the artifact file: ",
                   std::strerror(errno));
    if (got == 0)
      return bad("the file got shorter while it was being loaded");
    out += got;
    at += uint64_t(got);
    n -= size_t(got);
  }
  return {};
}

} // namespace kiln::rt
