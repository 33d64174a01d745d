// Lowering of graph-IR ops to kernel-IR kernels (internal to src/compiler).
//
// Every op of the main function is lowered, in order, by the function registered for its
// name. A lowering either aliases its result to an operand's buffer (pure layout ops), or
// builds kernels (one invocation per output element, or per row for row-wise ops) and emits
// them through LowerCtx::dispatch. An op without a lowering is a clear error.
#pragma once

#include "compiler/compiler.h"
#include "compiler/artifact/program.h"
#include "kir/kir.h"

#include <array>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kiln::compiler {

class LowerCtx;
using LowerFn = std::function<Status(LowerCtx &, const Op &)>;
using LoweringTable = std::unordered_map<std::string, LowerFn>;

// One registration function per family (compiler.cpp calls them in this order; a later one may
// extend the lowering an earlier one registered for the same name). All are in families/
// except add_seq_lowerings (handwritten/).
void add_elementwise_lowerings(LoweringTable &t); // elementwise.cpp
void add_matmul_lowerings(LoweringTable &t);      // matmul.cpp
void add_conv_lowerings(LoweringTable &t);        // conv.cpp
void add_pool_lowerings(LoweringTable &t);        // pool.cpp
void add_shape_lowerings(LoweringTable &t);       // shape.cpp
void add_reduce_lowerings(LoweringTable &t);      // reduce.cpp
void add_norm_lowerings(LoweringTable &t);        // norm.cpp
void add_attention_lowerings(LoweringTable &t);   // attention.cpp: kiln.sdpa (fused attention)
// reduce_extensions.cpp: losses, arg_reduce, cumulative, topk, lp_norm and extensions of
// softmax / normalize / batch_norm / reduce
void add_reduce_extension_lowerings(LoweringTable &t);
// reduce_windows.cpp: lp_pool, global lp pool, group_norm, lrn, einsum, det
void add_reduce_window_lowerings(LoweringTable &t);
// handwritten/*.cpp: attention, recurrent and sequence-model ops (hand-written kernels)
void add_seq_lowerings(LoweringTable &t);
// index*.cpp: indexing, scatter/gather and data-movement ops
void add_index_lowerings(LoweringTable &t);
// sampling.cpp: grid_sample, affine_grid, roi_align
void add_sampling_lowerings(LoweringTable &t);
// conv_transpose.cpp: transposed, deformable and integer convolutions
void add_conv_transpose_lowerings(LoweringTable &t);
// quantize.cpp: quantisation and integer matmuls
void add_quantize_lowerings(LoweringTable &t);
void add_resize_lowerings(LoweringTable &t);   // resize.cpp
void add_crop_pad_lowerings(LoweringTable &t); // crop_pad.cpp: center_crop_pad

// Element type of a tensor in kernels; bf16 has no kernel type yet (error naming the op). The
// narrow types are held one a byte: i4 / i2 as i8, u4 / u2 as u8, float8 / float4 / e8m0 as
// their u8 bit pattern (which ops may see them: check_narrow in compiler.cpp).
Result<kir::ScalarType> scalar_type(const Op &op, DType t);

// Rewrites `k` so that no binding covers more than the target's storage buffer range: a
// binding of more bytes (sizes[j]) becomes several bindings over consecutive aligned ranges of
// the same buffer (appended to `buffers` and to the kernel's buffers), and the kernel's loads
// and stores of it go through the chunk holding each element. Returns the byte range of each
// binding (split_bindings.cpp).
Result<std::vector<ByteRange>> split_large_bindings(const Op &op, kir::Kernel &k,
                                                    std::vector<int> &buffers,
                                                    const std::vector<uint64_t> &sizes,
                                                    const kir::TargetDesc &t);

// An epilogue fused into the kernel of the op producing `root`: the ops of `chain` (elementwise
// ops, each using the previous value exactly once, the first using `root`) are applied in
// registers to every element the producer computes, and only the last value is stored. When
// `moves` is set (contractions only), that value goes on through data-movement ops (reshapes,
// squeezes, flattens and transposes, each the only user of the previous value, the last a
// transpose): each element is stored straight at its position in the last one's result, the
// composed index map of the transposes (reshapes keep the row-major order). When `concat` is
// set, the stored value is the operand of kiln.concat `concat` starting at `offset` along
// `axis`, and is stored in place in the concat's result. The intermediate values (root
// included) get no buffer.
struct Epilogue {
  const Value *root = nullptr;
  std::vector<const Op *> chain;
  std::vector<const Op *> moves;
  const Op *concat = nullptr;
  int64_t axis = 0, offset = 0;
  const Value *last() const { return chain.empty() ? root : chain.back()->results[0]; }
  const Value *stored() const { return moves.empty() ? last() : moves.back()->results[0]; }
  const Value *result() const { return concat ? concat->results[0] : stored(); }
};

// Groups the live ops of `g` into fusion groups: for every producer (conv, matmul, gemm, an
// elementwise or a data-movement op storing one element per invocation) the longest chain of
// elementwise ops it can absorb, and for a contraction the reshape / transpose chain after it
// up to its last transpose; then every kiln.concat whose operands all come from such kernels
// (and are used only by it) is absorbed into them (fusion.cpp). Absorbed ops are not lowered
// on their own.
struct FusionPlan {
  std::unordered_map<const Value *, Epilogue> epilogue_of; // keyed by root
  std::unordered_set<const Op *> absorbed;
};
FusionPlan plan_fusion(const Graph &g, const std::unordered_set<const Op *> &live);

// Elementwise ops that can be an epilogue step, and the expression of one such op applied to
// its operands' element values (families/elementwise.cpp).
bool is_epilogue_op(const Op &op);
Result<kir::Expr> elementwise_expr(const Op &op, const std::vector<kir::Expr> &operands);
// Two consecutive epilogue steps, a per-tensor 8-bit QuantizeLinear and the DequantizeLinear of
// its result, as one expression (helpers::quantize_dequantize_expr); nullopt when they are not
// such a pair. The DequantizeLinear's first operand expression is not used.
std::optional<Result<kir::Expr>> quantize_dequantize_steps(const Op &q,
                                                           const std::vector<kir::Expr> &q_ops,
                                                           const Op &dq,
                                                           const std::vector<kir::Expr> &dq_ops);

// Emission state shared by all lowerings.
class LowerCtx {
public:
  // `backend` serialises the kernels (configured from `t`); it outlives the context.
  LowerCtx(Program &p, const kir::TargetDesc &t, const CompileOptions &o,
           const target::Backend &backend);

  const kir::TargetDesc &target() const { return *target_; }
  uint32_t workgroup_size() const { return wg_; }
  const CompileOptions &options() const { return *opts_; }
  Program &program() { return *prog_; }

  // The buffer holding `v`; a constant becomes a constant buffer on first use.
  int buffer_of(const Value *v);
  bool has_buffer(const Value *v) const { return buf_of_.count(v) != 0; }
  // Gives `v` a new transient buffer of its size.
  int define(const Value *v);
  // A new constant buffer holding `t` (e.g. a table computed on the host), or a new transient
  // scratch buffer of `bytes` bytes, neither tied to a graph value.
  int new_constant(Tensor t);
  int new_scratch(uint64_t bytes);
  // `result` shares the buffer of `operand` (same bytes, another shape).
  void alias(const Value *result, const Value *operand);
  void bind_input(const Value *v, uint32_t index);
  // The fusion plan of the graph being lowered; the epilogue fused into the kernel computing
  // `v` (nullptr if none); whether `op` is absorbed into another op's kernel (not lowered).
  void set_fusion(FusionPlan plan) { fusion_ = std::move(plan); }
  const Epilogue *epilogue(const Value *v) const {
    auto it = fusion_.epilogue_of.find(v);
    return it == fusion_.epilogue_of.end() ? nullptr : &it->second;
  }
  bool absorbed(const Op *op) const { return fusion_.absorbed.count(op) != 0; }

  // Verifies and simplifies `k`, serialises it with the backend unless a structurally equal
  // kernel (kir::structural_hash / structural_equal) already has an executable, and appends a
  // Dispatch of `groups` workgroups binding `buffers` in order.
  Status dispatch(const Op &op, kir::Kernel k, std::vector<int> buffers,
                  std::array<uint32_t, 3> groups);
  // The graph-IR names of the ops a kernel of `op` computes: `op`, then the epilogue steps,
  // moves and concat fused into it (Dispatch::source_ops).
  std::vector<std::string> fused_op_names(const Op &op) const;
  int kernels_emitted() const { return kernels_emitted_; }
  // Counts the strategy each contraction kernel used (CompileStats).
  void count_strategy(Strategy s) { ++strategy_count_[static_cast<size_t>(s)]; }
  int strategy_count(Strategy s) const { return strategy_count_[static_cast<size_t>(s)]; }
  void count_split_k() { ++split_k_count_; }
  int split_k_count() const { return split_k_count_; }
  void count_shifted_rows() { ++shifted_rows_count_; }
  int shifted_rows_count() const { return shifted_rows_count_; }
  void count_tap_major() { ++tap_major_count_; }
  int tap_major_count() const { return tap_major_count_; }
  void count_im2col() { ++im2col_count_; }
  int im2col_count() const { return im2col_count_; }
  void count_winograd() { ++winograd_count_; }
  int winograd_count() const { return winograd_count_; }
  void count_whole_rows() { ++whole_rows_count_; }
  int whole_rows_count() const { return whole_rows_count_; }
  // Counts the kiln.sdpa ops run as one fused attention kernel.
  void count_attention() { ++attention_count_; }
  int attention_count() const { return attention_count_; }
  // Counts the strategy each row reduction (softmax, normalisation, reduce) used.
  void count_row_strategy(RowStrategy s) { ++row_count_[static_cast<size_t>(s)]; }
  int row_strategy_count(RowStrategy s) const { return row_count_[static_cast<size_t>(s)]; }
  // Counts the strategy each window (pooling, depthwise convolution) used.
  void count_window_strategy(WindowStrategy s) { ++window_count_[static_cast<size_t>(s)]; }
  int window_strategy_count(WindowStrategy s) const {
    return window_count_[static_cast<size_t>(s)];
  }
  // Counts the strategy each parallel kernel (dispatch_flat) used.
  void count_parallel_strategy(ParallelStrategy s) { ++parallel_count_[static_cast<size_t>(s)]; }
  int parallel_strategy_count(ParallelStrategy s) const {
    return parallel_count_[static_cast<size_t>(s)];
  }

private:
  // The executable of `k`: an existing one for a structurally equal kernel, else a new one.
  Result<uint32_t> executable_for(const Op &op, kir::Kernel k);

  Program *prog_;
  const kir::TargetDesc *target_;
  const CompileOptions *opts_;
  uint32_t wg_;
  std::unordered_map<const Value *, int> buf_of_;
  const target::Backend *backend_;
  // Executables by the structural hash of their kernel; kernel_of_exe_ guards collisions.
  std::unordered_multimap<uint64_t, uint32_t> exe_of_hash_;
  std::vector<kir::Kernel> kernel_of_exe_;
  int kernels_emitted_ = 0;
  std::array<int, 5> strategy_count_{}; // by Strategy
  int split_k_count_ = 0;
  int shifted_rows_count_ = 0;
  int tap_major_count_ = 0;
  int im2col_count_ = 0;
  int winograd_count_ = 0;
  int whole_rows_count_ = 0;
  int attention_count_ = 0;
  std::array<int, 2> row_count_{};
  std::array<int, 2> window_count_{};
  std::array<int, 3> parallel_count_{};
  FusionPlan fusion_;
};

// A kernel over a flat index space [0, count) (one invocation per element, or several where the
// parallel table says so): bind operands and results, then finish() with a body built from the
// flat index (an i32 Expr).
class GridKernel {
public:
  GridKernel(LowerCtx &c, const Op &op, std::string name);

  // Binds a value as a read-only (input) or write-only (result) buffer. A result with a fused
  // epilogue binds the epilogue's result (and its other operands) instead: store its elements
  // with store(), which applies the epilogue.
  Result<kir::BufferVar> in(const Value *v);
  Result<kir::BufferVar> out(const Value *v);
  // Binds buffer `id` of the context that holds no graph value (LowerCtx::new_scratch), of
  // element type `t`, read-only or write-only.
  kir::BufferVar scratch(int id, kir::ScalarType t, bool write);
  // Stores element `i` (flat index in the shape of the value bound by out()) of value `v`
  // (of that value's element type) to result `o`, through the value's epilogue if any.
  // `coords`, when given, are i's coordinates in that shape (a caller that has them: a per-
  // channel epilogue operand then indexes by the channel instead of dividing i, which keeps the
  // C compiler's vectoriser on the store loop).
  Result<kir::Stmt> store(const kir::BufferVar &o, const kir::Expr &i, kir::Expr v,
                          std::vector<kir::Expr> coords = {});
  // A fresh variable name with `prefix`.
  std::string fresh(const std::string &prefix);
  kir::Kernel &kernel() { return k_; }
  LowerCtx &ctx() { return c_; }
  const Op &op() const { return op_; }

  // Emits the kernel over `count` elements (no dispatch when count is 0): a parallel definition
  // run by the schedule the parallel table picks for it (dispatch_flat).
  Status finish(int64_t count, const std::function<Result<kir::Stmt>(kir::Expr)> &body);
  // As finish, but always one invocation per element and not counted as a parallel kernel: for
  // the kernel of another definition's strategy, whose own schedule laid it out (window_rows).
  Status finish_per_element(int64_t count,
                            const std::function<Result<kir::Stmt>(kir::Expr)> &body);
  // Emits the kernel with workgroups of `wg` invocations over a grid of `groups` workgroups;
  // `body` reads the builtins itself (a schedule's own layout).
  Status finish_grid(std::array<uint32_t, 3> wg, std::array<uint32_t, 3> groups, kir::Stmt body);

private:
  // A result binding defines `v`'s buffer, unless `reuse` (it already has one).
  Result<kir::BufferVar> bind(const Value *v, bool write, bool reuse = false);
  struct BoundEpilogue {
    const Epilogue *e;
    Shape shape;                                       // of the root (and every chain value)
    // per step, per operand (-1: the chain value, -2: an immediate, in `immediates`)
    std::vector<std::vector<kir::BufferVar>> operands;
    std::map<std::pair<size_t, size_t>, kir::Expr> immediates; // by (step, operand)
  };
  std::map<int, BoundEpilogue> epi_; // by result binding index
  LowerCtx &c_;
  const Op &op_;
  kir::Kernel k_;
  std::vector<int> bufs_;
  int next_var_ = 0;
};

// Sets `k`'s body to `body(i)` for every i in [0, count) (i is the i32 variable `index_name`)
// and dispatches it binding `buffers`: a parallel definition (definitions/parallel.h) run by
// the schedule the table picks for it. `body` may still bind buffers (add to `k` and `buffers`): both are taken (moved
// from) only after it ran. No dispatch when count is 0; counts beyond the 32-bit index range
// are an error.
Status dispatch_flat(LowerCtx &c, const Op &op, kir::Kernel &k, std::vector<int> &buffers,
                     int64_t count, const std::string &index_name,
                     const std::function<Result<kir::Stmt>(kir::Expr)> &body);

// Row-major coordinates of flat index `i` in `shape` (i32 Exprs; size-1 dims give 0).
std::vector<kir::Expr> unflatten(const kir::Expr &i, const Shape &shape);
// Flat index of `coords` (coordinates of `shape`).
kir::Expr flatten(const std::vector<kir::Expr> &coords, const Shape &shape);
// Flat index into a tensor of `in` broadcast (numpy, right-aligned) to output coordinates.
kir::Expr broadcast_index(const std::vector<kir::Expr> &out_coords, const Shape &in);
// Binds each Expr to a fresh variable (Let) around the body built from the variables.
Result<kir::Stmt> let_all(GridKernel &g, const std::string &prefix, std::vector<kir::Expr> values,
                          const std::function<Result<kir::Stmt>(std::vector<kir::Expr>)> &body);

// Common checks.
Status require_static(const Op &op);
Status unsupported(const Op &op, const std::string &what);
// The constant value of operand i (nullptr unless defined by kiln.constant).
const Tensor *const_operand(const Op &op, size_t i);
// The value of `v` as an immediate of type t when v is a one-element constant (a clip's bounds,
// a scale): folded into the kernel instead of bound and loaded, so the C compiler sees e.g.
// max(x, 0) and vectorises it. Empty otherwise.
kir::Expr scalar_immediate(const Value *v, kir::ScalarType t);
Result<int64_t> norm_axis(const Op &op, int64_t axis, int64_t rank);
// Largest value of a float type (for max-reductions' initial value).
kir::Expr lowest_value(kir::ScalarType t);
kir::Expr highest_value(kir::ScalarType t);
kir::Expr i32(int64_t v);

} // namespace kiln::compiler

namespace kiln::compiler {

// Elementwise map over `operands` broadcast (numpy) to the shape of result 0:
// result[i] = f(operand values at i). Used by elementwise ops, where, cast, expand.
using MapFn = std::function<Result<kir::Expr>(const std::vector<kir::Expr> &)>;
Status lower_map(LowerCtx &c, const Op &op, const std::vector<const Value *> &operands,
                 const MapFn &f);

} // namespace kiln::compiler

namespace kiln::nn {
struct Window;
}

namespace kiln::compiler {

// The loop nest over the kernel window of one output position of a conv / pool window `w`:
// `out` are the output spatial coordinates; inner(x, k, inside) builds the innermost body from
// the input spatial coordinates x, the kernel offsets k and `inside` (boolean: x lies in the
// input; undefined when it always does).
using WindowBody = std::function<Result<kir::Stmt>(const std::vector<kir::Expr> &x,
                                                   const std::vector<kir::Expr> &k,
                                                   const kir::Expr &inside)>;
Result<kir::Stmt> window_loops(GridKernel &g, const nn::Window &w,
                               const std::vector<kir::Expr> &out, const WindowBody &inner);

} // namespace kiln::compiler

namespace kiln::compiler {

// A tensor split into kept (outer) and reduced (inner) axes, for row-wise kernels.
struct AxisSplit {
  Shape kept, red;                        // dims of the kept / reduced axes, in order
  std::vector<int64_t> kept_st, red_st;   // their strides in the tensor
  int64_t outer() const { return shape_numel(kept); }
  int64_t inner() const { return shape_numel(red); }
  // Offset in the tensor of kept-flat index o / reduced-flat index r.
  kir::Expr kept_offset(const kir::Expr &o) const;
  kir::Expr red_offset(const kir::Expr &r) const;
};
AxisSplit split_axes(const Shape &dims, const std::vector<int64_t> &reduced_axes);

} // namespace kiln::compiler
