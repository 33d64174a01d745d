// The C emitter's cooperative matrices: f32 arrays that the (only) invocation of a subgroup
// owns, multiplied by the prelude's kiln_mma_* microkernels (c_build.cpp; c_emitter.h).
#include "target/c/c_emitter.h"

namespace kiln::cgen::detail {

Status Emitter::note_matrix(const ValueType &t) {
  if (t.elem != ScalarType::f32 && t.elem != ScalarType::f16)
    return unsupported(fmt::format("cooperative matrices of {}", to_string(t.elem)));
  const std::string name = value_type(t);
  matrix_types_.insert(name);
  matrix_elems_[name] = t.matrix.rows * t.matrix.cols;
  return Status::ok();
}

Result<std::string> Emitter::matrix_memory(MemSpace space, int target) {
  const ScalarType elem = matrix_elem(space, target);
  if (elem != ScalarType::f32 && elem != ScalarType::f16)
    return unsupported(fmt::format("cooperative-matrix access to {} memory", to_string(elem)));
  return fmt::format("{}{}", space == MemSpace::buffer ? "b" : "s", target);
}

Result<std::pair<std::string, std::string>> Emitter::memory_operand(const Expr &e,
                                                                    MatrixLayout layout) {
  const auto *l = e.as<MatrixLoad>();
  if (!l || l->layout != layout || matrix_elem(l->space, l->target) != ScalarType::f32)
    return std::pair<std::string, std::string>{};
  KILN_ASSIGN(std::string array, matrix_memory(l->space, l->target));
  KILN_ASSIGN(std::string off, expr(l->offset));
  KILN_ASSIGN(std::string stride, expr(l->stride));
  return std::pair{fmt::format("&{}[(uint32_t)({})]", array, off),
                   fmt::format("(uint32_t)({})", stride)};
}

Result<bool> Emitter::multiply_add_in_place(const Assign &a) {
  const auto *mma = a.value.as<MatrixMulAdd>();
  const auto *acc = mma ? mma->c.as<Var>() : nullptr;
  if (!acc || acc->name != a.var.as<Var>()->name) return false;
  begin_statement({&mma->a, &mma->b});
  KILN_ASSIGN(auto pa, memory_operand(mma->a, MatrixLayout::row_major));
  const bool a_col_major = pa.first.empty();
  if (a_col_major) {
    KILN_ASSIGN(pa, memory_operand(mma->a, MatrixLayout::col_major));
    if (pa.first.empty()) return false;
  }
  KILN_ASSIGN(auto pb, memory_operand(mma->b, MatrixLayout::row_major));
  const bool transposed = pb.first.empty();
  if (transposed) {
    if (a_col_major) return false;
    KILN_ASSIGN(pb, memory_operand(mma->b, MatrixLayout::col_major));
    if (pb.first.empty()) return false;
  }
  KILN_TRY(note_matrix(mma->a.value_type()));
  KILN_TRY(note_matrix(mma->b.value_type()));
  const bool pending = zero_pending_.count(acc->name) > 0;
  std::string c = c_name("v_", acc->name); // not expr() when pending: that would fill it
  if (!pending) {
    KILN_ASSIGN(c, expr(a.var));
  }
  flush_pre();
  const MatrixShape &ma = mma->a.value_type().matrix, &mc = a.var.value_type().matrix;
  line(fmt::format("kiln_mma_f32{}({}.v, {}, {}, {}, {}, {}, {}, {}, {});",
                   transposed ? "_bt" : a_col_major ? "_acm" : "", c, pa.first, pa.second,
                   pb.first, pb.second, mc.rows, mc.cols, ma.cols, pending ? c + "_z" : "0"));
  if (pending) line(fmt::format("{}_z = 0;", c));
  return true;
}

std::string Emitter::matrix_map(const ValueType &t, const std::string &x, const std::string &y,
                                const std::string &body) {
  const std::string tx = temp(), ty = temp(), r = temp(), i = temp();
  std::string s = fmt::format("({{ const {0} {1} = {2}; ", value_type(t), tx, x);
  if (!y.empty()) s += fmt::format("const {} {} = {}; ", value_type(t), ty, y);
  s += fmt::format("{0} {1}; for (uint32_t {2} = 0; {2} < {3}u; ++{2}) {1}.v[{2}] = ",
                   value_type(t), r, i, t.matrix.rows * t.matrix.cols);
  std::string b = body;
  for (auto [from, to] : {std::pair<std::string, std::string>{"X", tx + ".v[" + i + "]"},
                          {"Y", ty + ".v[" + i + "]"}}) {
    for (size_t p = b.find(from); p != std::string::npos; p = b.find(from, p + to.size()))
      b.replace(p, from.size(), to);
  }
  return s + b + "; " + r + "; })";
}

} // namespace kiln::cgen::detail
