// kiln.constant: a tensor value held in the IR.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace kiln {

void register_core_basic_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.constant",
      .min_operands = 0,
      .max_operands = 0,
      .verify =
          [](const Op &op) {
            if (!op.attr_tensor("value"))
              return Status::error(op.describe() + ": needs a tensor attribute 'value'");
            return Status::ok();
          },
      .infer =
          [](InferCtx &ctx) {
            ctx.out = {TensorType::of(*ctx.op.attr_tensor("value"))};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) {
            ctx.out = {*ctx.op.attr_tensor("value")};
            return Status::ok();
          },
  });
}

} // namespace kiln
