// TFLite import driver: reads and verifies the flatbuffer, checks every index and size the
// file declares, turns constant buffers and graph inputs into values, then converts the
// operators in order (see convert_*.cpp).
#include "frontend/tflite/convert.h"
#include "frontend/tflite/importer.h"
#include "frontend/tflite/sparse.h"
#include "kiln/tflite/tflite_generated.h"
#include "ops/ops.h"
#include "support/half.h"
#include "support/limits.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <limits>

namespace kiln::tflite_fe {

namespace fb = ::kiln::tflite_fb;

// Reads one model; OpCtx (a converter's view of one operator) reaches the tensor table.
class Importer {
public:
  Importer(const fb::Model &m, std::span<const uint8_t> file, Builder &b)
      : m_(m), file_(file), b_(b) {}
  Status run(Function &fn);

private:
  friend struct OpCtx;
  const fb::Model &m_;
  std::span<const uint8_t> file_;
  Builder &b_;
  const fb::SubGraph *sg_ = nullptr;
  std::vector<TensorInfo> tensors_;
  std::vector<Held> held_;
  std::vector<bool> defined_;
  std::vector<std::vector<uint8_t>> owned_; // densified sparse constants

  Status read_tensors();
  Status read_data(const fb::Tensor &t, TensorInfo &ti);
  Status check_operators();
  Status check_index(int t, const std::string &what) const;
  Status bind_inputs(Function &fn);
  Status convert_operator(int i);
  Status bind_outputs(Function &fn);
  Result<Value *> constant_value(int t);
};

namespace {

// TFLite kernels handle up to 6 dimensions; anything far beyond is a corrupt file.
constexpr size_t kMaxRank = 16;

std::optional<DType> dtype_of(fb::TensorType t) {
  switch (t) {
  case fb::TensorType::FLOAT32: return DType::f32;
  case fb::TensorType::FLOAT16: return DType::f16;
  case fb::TensorType::FLOAT64: return DType::f64;
  case fb::TensorType::INT32: return DType::i32;
  case fb::TensorType::UINT8: return DType::u8;
  case fb::TensorType::INT64: return DType::i64;
  case fb::TensorType::BOOL: return DType::boolean;
  case fb::TensorType::INT16: return DType::i16;
  case fb::TensorType::INT8: return DType::i8;
  case fb::TensorType::UINT64: return DType::u64;
  case fb::TensorType::UINT32: return DType::u32;
  case fb::TensorType::UINT16: return DType::u16;
  default: return std::nullopt;
  }
}

int builtin_code_of(const fb::OperatorCode &c) {
  // Schema 3a moved the code to a 32-bit field; old files only fill the byte one.
  return std::max<int>(c.builtin_code(), c.deprecated_builtin_code());
}

} // namespace

namespace {

// Scales and zero points (per tensor, or per channel along quantized_dimension).
Status read_quantization(const fb::QuantizationParameters &q, TensorInfo &ti) {
  if (q.details_type() != fb::QuantizationDetails::NONE)
    return Status::error("custom quantization is not supported");
  if (!q.scale() || q.scale()->size() == 0) return Status::ok();
  if (ti.dtype != DType::i8 && ti.dtype != DType::u8 && ti.dtype != DType::i16 && ti.dtype != DType::i32)
    return Status::error(fmt::format("quantised {} tensors are not supported", dtype_name(ti.dtype)));
  ti.quantized = true;
  for (float s : *q.scale()) {
    if (!(std::isfinite(s) && s > 0))
      return Status::error(fmt::format("quantization scale {} is not positive", s));
    ti.scale.push_back(s);
  }
  const size_t ns = ti.scale.size();
  ti.zero_point.assign(ns, 0);
  if (const auto *zps = q.zero_point(); zps && zps->size() > 0) {
    if (zps->size() != ns)
      return Status::error("quantization has different numbers of scales and zero points");
    // A zero point must be a value of the storage type (TFLite's own rule).
    const int64_t lo = ti.dtype == DType::u8 ? 0 : ti.dtype == DType::i8 ? -128
                       : ti.dtype == DType::i16 ? -32768 : INT32_MIN;
    const int64_t hi = ti.dtype == DType::u8 ? 255 : ti.dtype == DType::i8 ? 127
                       : ti.dtype == DType::i16 ? 32767 : INT32_MAX;
    // The verifier checks a vector's 4-byte length prefix, not its 8-byte elements'
    // alignment: copy each zero point out instead of loading it in place.
    for (flatbuffers::uoffset_t k = 0; k < zps->size(); ++k) {
      int64_t z;
      std::memcpy(&z, zps->Data() + k * sizeof(int64_t), sizeof(int64_t));
      if (z < lo || z > hi)
        return Status::error(fmt::format("zero point {} is outside the range of {}", z, dtype_name(ti.dtype)));
      ti.zero_point[k] = z;
    }
  }
  ti.quant_dim = q.quantized_dimension();
  if (ns > 1 && (ti.quant_dim < 0 || ti.quant_dim >= static_cast<int64_t>(ti.shape.size()) ||
                 ti.shape[ti.quant_dim] != static_cast<int64_t>(ns)))
    return Status::error(fmt::format("{} per-channel scales do not match dimension {} of [{}]", ns,
                                     ti.quant_dim, shape_str(ti.shape)));
  return Status::ok();
}

// The declared shape, within kMaxRank and KILN_MAX_TENSOR_BYTES.
Status read_shape(const fb::Tensor &t, TensorInfo &ti) {
  if (!t.shape()) return Status::ok();
  if (t.shape()->size() > kMaxRank)
    return Status::error(fmt::format("rank {} exceeds {}", t.shape()->size(), kMaxRank));
  int64_t numel = 1;
  for (int32_t d : *t.shape()) {
    if (d < 0) return Status::error(fmt::format("dimension {} is not a static size", d));
    ti.shape.push_back(d);
    if (d && numel > limits().max_tensor_bytes / d) return Status::error("shape is too large");
    numel *= d;
  }
  if (numel * static_cast<int64_t>(dtype_size(ti.dtype)) > limits().max_tensor_bytes)
    return Status::error("shape is too large (KILN_MAX_TENSOR_BYTES)");
  return Status::ok();
}

} // namespace

// A constant's bytes: the buffer's inline data or (large models) a range of the file after
// the flatbuffer; sparse constants are densified. Sizes must match the shape exactly.
Status Importer::read_data(const fb::Tensor &t, TensorInfo &ti) {
  const uint32_t bi = t.buffer();
  if (bi == 0) {
    if (t.sparsity()) return Status::error("a sparse tensor must be a constant");
    return Status::ok();
  }
  const auto *bufs = m_.buffers();
  if (!bufs || bi >= bufs->size())
    return Status::error(fmt::format("buffer {} is out of range ({} buffers)", bi, bufs ? bufs->size() : 0));
  const fb::Buffer *buf = bufs->Get(bi);
  const uint8_t *data = nullptr;
  size_t size = 0;
  if (buf->data() && buf->data()->size() > 0) {
    data = buf->data()->data();
    size = buf->data()->size();
  } else if (buf->offset() > 1) {
    if (buf->offset() > file_.size() || buf->size() > file_.size() - buf->offset())
      return Status::error(fmt::format("buffer {} lies outside the file (offset {}, size {})", bi,
                                       buf->offset(), buf->size()));
    data = file_.data() + buf->offset();
    size = buf->size();
  }
  if (!data) {
    if (t.sparsity()) return Status::error("a sparse tensor must be a constant");
    return Status::ok();
  }
  if (t.sparsity()) {
    if (ti.quantized) return Status::error("sparse quantised tensors are not supported");
    KILN_ASSIGN(auto dense, densify(*t.sparsity(), ti.shape, dtype_size(ti.dtype), data, size));
    owned_.push_back(std::move(dense));
    data = owned_.back().data();
    size = owned_.back().size();
  }
  const size_t want = static_cast<size_t>(shape_numel(ti.shape)) * dtype_size(ti.dtype);
  if (size != want)
    return Status::error(fmt::format("buffer {} has {} bytes, shape [{}] of {} needs {}", bi, size,
                                     shape_str(ti.shape), dtype_name(ti.dtype), want));
  ti.data = data;
  ti.size = size;
  return Status::ok();
}

Status Importer::read_tensors() {
  const auto *ts = sg_->tensors();
  const size_t n = ts ? ts->size() : 0;
  tensors_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const fb::Tensor *t = ts->Get(static_cast<flatbuffers::uoffset_t>(i));
    TensorInfo &ti = tensors_[i];
    ti.name = t->name() ? t->name()->str() : fmt::format("tensor_{}", i);
    auto err = [&](const std::string &msg) {
      return Status::error(fmt::format("tensor {} ('{}'): {}", i, ti.name, msg));
    };
    auto dt = dtype_of(t->type());
    if (!dt) {
      const char *name = fb::EnumNameTensorType(t->type());
      return err(fmt::format("type {} is not supported", name && *name ? name : "?"));
    }
    ti.dtype = *dt;
    if (t->is_variable()) return err("variable tensors are not supported");
    Status st = read_shape(*t, ti);
    if (st && t->quantization()) st = read_quantization(*t->quantization(), ti);
    if (st) st = read_data(*t, ti);
    if (!st) return err(st.message());
  }
  return Status::ok();
}

Status Importer::check_operators() {
  const auto *codes = m_.operator_codes();
  const auto *ops = sg_->operators();
  if (!ops) return Status::ok();
  std::string bad;
  int nbad = 0;
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    const fb::Operator *o = ops->Get(i);
    if (!codes || o->opcode_index() >= codes->size())
      return Status::error(fmt::format("operator {}: opcode index {} is out of range ({} codes)", i,
                                       o->opcode_index(), codes ? codes->size() : 0));
    const fb::OperatorCode *c = codes->Get(o->opcode_index());
    const int code = builtin_code_of(*c);
    if (code == op::CUSTOM) {
      ++nbad;
      bad += fmt::format("{}operator {}: CUSTOM '{}' (version {})", nbad > 1 ? "; " : "", i,
                         c->custom_code() ? c->custom_code()->str() : "", c->version());
    } else if (!find_converter(code)) {
      ++nbad;
      bad += fmt::format("{}operator {}: {} (version {})", nbad > 1 ? "; " : "", i,
                         builtin_name(code), c->version());
    }
  }
  if (nbad)
    return Status::error(fmt::format("{} unsupported operator{}: {}", nbad, nbad > 1 ? "s" : "", bad));
  return Status::ok();
}

Result<Value *> Importer::constant_value(int t) {
  const TensorInfo &ti = tensors_[t];
  KILN_ASSIGN(Tensor v, Tensor::allocate(ti.quantized ? DType::f32 : ti.dtype, ti.shape,
                                         limits().max_tensor_bytes));
  if (!ti.quantized) {
    if (ti.size) std::memcpy(v.raw_mut(), ti.data, ti.size);
    return b_.constant(std::move(v), ti.name);
  }
  // Dequantise: (q - zero_point) * scale, per channel along quant_dim.
  Tensor raw(ti.dtype, ti.shape);
  if (ti.size) std::memcpy(raw.raw_mut(), ti.data, ti.size);
  int64_t inner = 1, ch = static_cast<int64_t>(ti.scale.size());
  if (ch > 1)
    for (size_t d = static_cast<size_t>(ti.quant_dim) + 1; d < ti.shape.size(); ++d) inner *= ti.shape[d];
  float *out = v.data_mut<float>();
  for (int64_t i = 0; i < v.numel(); ++i) {
    const int64_t c = ch > 1 ? (i / inner) % ch : 0;
    out[i] = static_cast<float>(static_cast<double>(raw.get_i64(i) - ti.zero_point[c]) * ti.scale[c]);
  }
  return b_.constant(std::move(v), ti.name);
}

Status Importer::check_index(int t, const std::string &what) const {
  const int nt = static_cast<int>(tensors_.size());
  if (t < 0 || t >= nt)
    return Status::error(fmt::format("{}: tensor index {} is out of range ({} tensors)", what, t, nt));
  return Status::ok();
}

// Parameters for the subgraph's inputs (quantised ones dequantised), then every constant.
Status Importer::bind_inputs(Function &fn) {
  if (sg_->inputs())
    for (int t : *sg_->inputs()) {
      KILN_TRY(check_index(t, "subgraph input"));
      const TensorInfo &ti = tensors_[t];
      if (defined_[t]) return Status::error(fmt::format("tensor {} ('{}') is listed twice as an input", t, ti.name));
      if (ti.data) continue; // a constant listed as input stays a constant
      Value *p = fn.body.add_param({ti.dtype, ti.shape, true}, ti.name);
      Value *v = p;
      if (ti.quantized) {
        if (ti.scale.size() != 1)
          return Status::error(fmt::format("input tensor {} ('{}'): per-channel quantised inputs are not supported", t, ti.name));
        KILN_ASSIGN(v, b_.create1("kiln.dequantize_linear",
                                  {p, b_.scalar_f(DType::f32, ti.scale[0]),
                                   b_.scalar_i(ti.dtype, ti.zero_point[0])}));
      }
      held_[t].nhwc = v;
      defined_[t] = true;
    }
  for (int t = 0; t < static_cast<int>(tensors_.size()); ++t)
    if (tensors_[t].data && !defined_[t]) {
      KILN_ASSIGN(held_[t].nhwc, constant_value(t));
      defined_[t] = true;
    }
  return Status::ok();
}

Status Importer::convert_operator(int i) {
  const auto *codes = m_.operator_codes();
  const auto *ops = sg_->operators();
  const fb::Operator *o = ops->Get(static_cast<flatbuffers::uoffset_t>(i));
  const fb::OperatorCode *code = codes->Get(o->opcode_index());
  OpCtx c;
  c.imp = this;
  c.op = o;
  c.index = i;
  c.code = builtin_code_of(*code);
  c.opname = builtin_name(c.code);
  c.version = code->version();
  c.b = &b_;
  if (o->inputs())
    for (int t : *o->inputs()) {
      if (t != -1) {
        KILN_TRY(check_index(t, fmt::format("operator {} ({}) input", i, c.opname)));
        if (!defined_[t])
          return c.error(fmt::format("reads tensor {} ('{}') before any operator writes it (a cycle, "
                                     "or operators out of order)", t, tensors_[t].name));
      }
      c.inputs.push_back(t);
    }
  if (o->outputs())
    for (int t : *o->outputs()) {
      KILN_TRY(check_index(t, fmt::format("operator {} ({}) output", i, c.opname)));
      if (defined_[t])
        return c.error(fmt::format("writes tensor {} ('{}'), which already has a value", t, tensors_[t].name));
      c.outputs.push_back(t);
    }
  if (c.outputs.empty()) return c.error("has no outputs");
  b_.set_loc(fmt::format("operator {} ({})", i, c.opname));
  ConvertFn fnc = find_converter(c.code);
  KILN_TRY(fnc(c));
  for (int t : c.outputs)
    if (!defined_[t]) return c.error(fmt::format("output tensor {} was not produced", t));
  return Status::ok();
}

// Results in the subgraph's output order; quantised outputs are the integers.
Status Importer::bind_outputs(Function &fn) {
  if (!sg_->outputs() || sg_->outputs()->size() == 0) return Status::error("the subgraph has no outputs");
  for (int t : *sg_->outputs()) {
    KILN_TRY(check_index(t, "subgraph output"));
    if (!defined_[t])
      return Status::error(fmt::format("subgraph output tensor {} ('{}') is never written", t, tensors_[t].name));
    OpCtx c;
    c.imp = this;
    c.b = &b_;
    c.inputs = {t};
    c.opname = "output";
    c.index = -1;
    KILN_ASSIGN(Value * v, c.in(0));
    const TensorInfo &ti = tensors_[t];
    if (ti.quantized) {
      // The value is dequantised: recover the integers (exact: v is (q - zp) * scale).
      if (ti.scale.size() != 1)
        return Status::error(fmt::format("output tensor {} ('{}'): per-channel quantised outputs are not supported", t, ti.name));
      KILN_ASSIGN(v, b_.create1("kiln.quantize_linear", {v, b_.scalar_f(DType::f32, ti.scale[0]),
                                                          b_.scalar_i(ti.dtype, ti.zero_point[0])}));
    } else if (v->type.dtype != ti.dtype) {
      KILN_ASSIGN(v, b_.create1("kiln.cast", {v}, {{"to", ti.dtype}}));
    }
    if (v->def && v->def->def->name == "kiln.constant") {
      // A result must be an op's value with its own name; an identity keeps constants apart.
      KILN_ASSIGN(v, b_.create1("kiln.reshape", {v, b_.i64s(ti.shape)}));
    }
    if (v->type.dims != ti.shape)
      return Status::error(fmt::format("output tensor {} ('{}'): computed shape [{}] differs from the declared [{}]",
                                       t, ti.name, shape_str(v->type.dims), shape_str(ti.shape)));
    v->name = ti.name;
    fn.body.results.push_back(v);
  }
  return Status::ok();
}

Status Importer::run(Function &fn) {
  if (m_.version() != 3)
    return Status::error(fmt::format("schema version {} is not supported (expects 3)", m_.version()));
  if (!m_.subgraphs() || m_.subgraphs()->size() == 0) return Status::error("the model has no subgraph");
  sg_ = m_.subgraphs()->Get(0);
  KILN_TRY(read_tensors());
  KILN_TRY(check_operators());
  held_.assign(tensors_.size(), {});
  defined_.assign(tensors_.size(), false);
  KILN_TRY(bind_inputs(fn));
  const int nops = sg_->operators() ? static_cast<int>(sg_->operators()->size()) : 0;
  if (nops > limits().max_nodes) return Status::error(fmt::format("{} operators exceed KILN_MAX_NODES", nops));
  for (int i = 0; i < nops; ++i) KILN_TRY(convert_operator(i));
  return bind_outputs(fn);
}

// ---- OpCtx ----

Status OpCtx::error(const std::string &msg) const {
  if (index < 0) return Status::error(msg);
  return Status::error(fmt::format("operator {} ({}, version {}): {}", index, opname, version, msg));
}

const TensorInfo &OpCtx::tensor(size_t i) const { return imp->tensors_[inputs[i]]; }
const TensorInfo &OpCtx::out_tensor(size_t i) const { return imp->tensors_[outputs[i]]; }

Status OpCtx::need_inputs(size_t n) const {
  for (size_t i = 0; i < n; ++i)
    if (!has_input(i)) return error(fmt::format("input {} is missing", i));
  return Status::ok();
}

Result<Value *> OpCtx::in(size_t i) {
  if (!has_input(i)) return error(fmt::format("input {} is missing", i));
  Held &h = imp->held_[inputs[i]];
  if (!h.nhwc) {
    KILN_ASSIGN(h.nhwc, to_nhwc(*b, h.nchw));
  }
  return h.nhwc;
}

Result<Value *> OpCtx::in_nchw(size_t i) {
  if (!has_input(i)) return error(fmt::format("input {} is missing", i));
  Held &h = imp->held_[inputs[i]];
  if (!h.nchw) {
    if (h.nhwc->type.rank() != 4)
      return error(fmt::format("input {} must have rank 4, got {}", i, h.nhwc->type.str()));
    KILN_ASSIGN(h.nchw, to_nchw(*b, h.nhwc));
  }
  return h.nchw;
}

bool OpCtx::held_nchw(size_t i) const {
  return has_input(i) && imp->held_[inputs[i]].nchw != nullptr;
}

Result<std::vector<int64_t>> OpCtx::const_ints(size_t i) const {
  if (!has_input(i)) return error(fmt::format("input {} is missing", i));
  const Held &h = imp->held_[inputs[i]];
  const Tensor *t = Builder::constant_value(h.nhwc ? h.nhwc : h.nchw);
  if (!t || !h.nhwc) return error(fmt::format("input {} ('{}') must be a constant", i, tensor(i).name));
  if (!is_integer(t->dtype()))
    return error(fmt::format("input {} ('{}') must be an integer tensor, got {}", i, tensor(i).name,
                             dtype_name(t->dtype())));
  return t->to_i64s();
}

Status OpCtx::set_out(size_t i, Value *v, bool nchw, Act act) {
  if (i >= outputs.size()) return error(fmt::format("output {} is missing", i));
  KILN_ASSIGN(v, apply_act(*this, v, act));
  const TensorInfo &ti = out_tensor(i);
  // The declared shape must be what was computed: a model that disagrees is refused, never
  // run with a shape its author did not mean.
  Shape logical = v->type.dims;
  if (nchw && logical.size() == 4) logical = {logical[0], logical[2], logical[3], logical[1]};
  if (logical != ti.shape)
    return error(fmt::format("output tensor '{}' is declared [{}] but computes to [{}]", ti.name,
                             shape_str(ti.shape), shape_str(logical)));
  if (ti.quantized) {
    if (ti.scale.size() != 1)
      return error(fmt::format("output tensor '{}' is quantised per channel", ti.name));
    // Re-quantise onto the output's grid: q = clamp(round_half_away(v / s) + zp), v = (q - zp) s.
    int64_t qmin = 0, qmax = 0;
    switch (ti.dtype) {
    case DType::i8: qmin = -128, qmax = 127; break;
    case DType::u8: qmin = 0, qmax = 255; break;
    case DType::i16: qmin = -32768, qmax = 32767; break;
    default: return error(fmt::format("quantised {} outputs are not supported", dtype_name(ti.dtype)));
    }
    const double s = ti.scale[0], zp = static_cast<double>(ti.zero_point[0]);
    Builder &bb = *b;
    KILN_ASSIGN(Value * y, op1("kiln.div", {v, bb.scalar_f(DType::f32, s)}));
    KILN_ASSIGN(Value * ay, op1("kiln.abs", {y}));
    KILN_ASSIGN(Value * sg, op1("kiln.sign", {y}));
    KILN_ASSIGN(ay, op1("kiln.add", {ay, bb.scalar_f(DType::f32, 0.5)}));
    KILN_ASSIGN(ay, op1("kiln.floor", {ay}));
    KILN_ASSIGN(y, op1("kiln.mul", {ay, sg}));
    // clamp(y, qmin - zp, qmax - zp) is clamp(y + zp, qmin, qmax) - zp.
    KILN_ASSIGN(y, op1("kiln.max", {y, bb.scalar_f(DType::f32, double(qmin) - zp)}));
    KILN_ASSIGN(y, op1("kiln.min", {y, bb.scalar_f(DType::f32, double(qmax) - zp)}));
    KILN_ASSIGN(v, op1("kiln.mul", {y, bb.scalar_f(DType::f32, s)}));
  }
  Held &h = imp->held_[outputs[i]];
  h = {};
  if (nchw) h.nchw = v;
  else h.nhwc = v;
  imp->defined_[outputs[i]] = true;
  return Status::ok();
}

Result<Value *> OpCtx::op1(std::string_view name, std::vector<Value *> operands, AttrMap attrs) {
  auto r = b->create1(name, std::move(operands), std::move(attrs));
  if (!r) return error(r.status().message());
  return r;
}

Act act_from(int code) {
  switch (code) {
  case static_cast<int>(fb::ActivationFunctionType::RELU): return Act::relu;
  case static_cast<int>(fb::ActivationFunctionType::RELU_N1_TO_1): return Act::relu_n1_to_1;
  case static_cast<int>(fb::ActivationFunctionType::RELU6): return Act::relu6;
  case static_cast<int>(fb::ActivationFunctionType::TANH): return Act::tanh;
  case static_cast<int>(fb::ActivationFunctionType::SIGN_BIT): return Act::sign_bit;
  default: return Act::none;
  }
}

Result<Value *> apply_act(OpCtx &c, Value *v, Act act) {
  Builder &b = *c.b;
  auto clamp = [&](double lo, double hi) -> Result<Value *> {
    KILN_ASSIGN(Value * x, c.op1("kiln.max", {v, b.scalar_f(v->type.dtype, lo)}));
    return c.op1("kiln.min", {x, b.scalar_f(v->type.dtype, hi)});
  };
  switch (act) {
  case Act::none: return v;
  case Act::relu: return c.op1("kiln.relu", {v});
  case Act::relu_n1_to_1: return clamp(-1.0, 1.0);
  case Act::relu6: return clamp(0.0, 6.0);
  case Act::tanh: return c.op1("kiln.tanh", {v});
  case Act::sign_bit: return c.error("fused activation SIGN_BIT is not supported");
  }
  return v;
}

Result<Value *> transpose(Builder &b, Value *v, std::vector<int64_t> perm) {
  return b.create1("kiln.transpose", {v}, {{"perm", std::move(perm)}});
}
Result<Value *> to_nchw(Builder &b, Value *v) { return transpose(b, v, {0, 3, 1, 2}); }
Result<Value *> to_nhwc(Builder &b, Value *v) { return transpose(b, v, {0, 2, 3, 1}); }

ConvertFn find_converter(int code) {
  if (ConvertFn f = find_converter_nn(code)) return f;
  return find_converter_misc(code);
}

// ---- entry points ----

Result<std::unique_ptr<Module>> import_buffer(std::span<const uint8_t> data, const std::string &name) {
  auto fail = [&](const std::string &msg) { return Status::error(fmt::format("{}: {}", name, msg)); };
  if (data.size() < 8) return fail("not a TFLite model (file too short)");
  if (!fb::ModelBufferHasIdentifier(data.data()))
    return fail("not a TFLite model (no TFL3 file identifier)");
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 64;
  vo.max_tables = 10000000;
  flatbuffers::Verifier verifier(data.data(), data.size(), vo);
  if (!fb::VerifyModelBuffer(verifier))
    return fail("the flatbuffer failed verification (truncated or corrupt TFLite model)");
  const fb::Model *m = fb::GetModel(data.data());
  auto mod = std::make_unique<Module>();
  auto fn = std::make_unique<Function>();
  fn->name = "main";
  Builder b(core_ops(), fn->body);
  b.set_fold_limit(int64_t(1) << 24); // weight transposes and fp16 dequantisation fold here
  Importer imp(*m, data, b);
  Status st = imp.run(*fn);
  if (!st) return fail(st.message());
  renumber(*fn);
  st = verify_function(*fn);
  if (!st) return fail(st.message());
  mod->functions.push_back(std::move(fn));
  return mod;
}

Result<std::unique_ptr<Module>> import_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Status::error(fmt::format("cannot open {}", path));
  const std::streamoff size = f.tellg();
  if (size < 0) return Status::error(fmt::format("cannot read {}", path));
  if (size > limits().max_model_bytes)
    return Status::error(fmt::format("{}: {} bytes exceed KILN_MAX_MODEL_BYTES", path, size));
  std::vector<uint8_t> data(static_cast<size_t>(size));
  f.seekg(0);
  if (!f.read(reinterpret_cast<char *>(data.data()), size))
    return Status::error(fmt::format("cannot read {}", path));
  return import_buffer(data, path);
}

} // namespace kiln::tflite_fe
