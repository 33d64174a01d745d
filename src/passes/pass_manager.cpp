#include "passes/pass.h"

namespace kiln {

const std::vector<Pass> &all_passes() {
  static const std::vector<Pass> passes = {
      {"canonicalize", "removes identity casts/reshapes/transposes and collapses their chains",
       run_canonicalize},
      {"cse", "merges identical pure ops and constants with identical bytes", run_cse},
      {"dce", "removes ops whose results are unused and that have no side effects", run_dce},
      {"expand-qlinear", "runs ONNX Runtime-rounded qlinear conv/matmul on exact f32 kernels",
       run_expand_qlinear},
      {"fold-batch-norm", "folds batch_norm/mul/add by per-channel constants into conv weights",
       run_fold_batch_norm},
      {"fold-constants", "evaluates pure ops whose operands are all constants", run_fold_constants},
      {"fuse-attention", "replaces softmax(scale * q x k^T [+ mask]) x v by one kiln.sdpa",
       run_fuse_attention},
      {"fuse-composites", "replaces written-out norms, GELU, SiLU, HardSwish, softmax by one op",
       run_fuse_composites},
      {"fuse-qdq", "runs DequantizeLinear -> Conv/MatMul -> QuantizeLinear as integer ops",
       run_fuse_qdq},
      {"lower-control-flow", "turns if/loop/scan into straight-line ops where that is exact",
       run_lower_control_flow},
      {"lower-precision-bf16", "stores f32 tensors of ops safe in half precision as bf16",
       run_lower_precision_bf16},
      {"lower-precision-fp16", "stores f32 tensors of ops safe in half precision as f16",
       run_lower_precision_fp16},
  };
  return passes;
}

const Pass *find_pass(std::string_view name) {
  for (const Pass &p : all_passes())
    if (p.name == name) return &p;
  return nullptr;
}

} // namespace kiln
