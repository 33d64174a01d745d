// kiln.einsum (general index-loop reference: repeated labels/diagonals, '...' broadcasting,
// implicit and explicit outputs, summation) and kiln.det (LU with partial pivoting).
#include "ops/nn_internal.h"
#include "ops/nn_kernels.h"
#include "ops/op_util.h"

#include <cmath>

namespace kiln {

namespace {

// A parsed equation against concrete operand ranks. Labels 0..25 are 'A'..'Z', 26..51
// 'a'..'z' (ASCII order, used for implicit outputs), 52.. are the broadcast ('...') dims,
// outermost first.
struct Einsum {
  int nlabels = 0;
  std::vector<std::vector<int>> in;  // per operand, the label of each dim
  std::vector<int> out;              // labels of the result dims
  std::vector<int64_t> size;         // per label (kDynamic where unknown)
};

int letter_label(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

// Parses one term into labels; `ell` receives the number of '...' dims (rank - letters).
Result<std::vector<int>> parse_term(const Op &op, const std::string &term, int64_t rank,
                                    int64_t &ell_dims, bool &has_ell) {
  std::vector<int> letters;
  int64_t ell_at = -1;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ell_at >= 0) return Status::error(op.describe() + ": '...' appears twice in a term");
      ell_at = static_cast<int64_t>(letters.size());
      i += 2;
      continue;
    }
    const int l = letter_label(term[i]);
    if (l < 0)
      return Status::error(fmt::format("{}: invalid character '{}' in the equation", op.describe(), term[i]));
    letters.push_back(l);
  }
  has_ell = ell_at >= 0;
  ell_dims = rank < 0 ? 0 : rank - static_cast<int64_t>(letters.size());
  if (rank >= 0 && (ell_dims < 0 || (!has_ell && ell_dims != 0)))
    return Status::error(fmt::format("{}: term '{}' does not match an operand of rank {}",
                                     op.describe(), term, rank));
  if (!has_ell) return letters;
  std::vector<int> labels(letters.begin(), letters.begin() + ell_at);
  // '...' dims are right-aligned against the common broadcast rank; filled in by the caller.
  for (int64_t e = 0; e < ell_dims; ++e) labels.push_back(-2 - static_cast<int>(e));
  labels.insert(labels.end(), letters.begin() + ell_at, letters.end());
  return labels;
}

Result<Einsum> parse_einsum(const Op &op, const std::vector<Shape> &shapes) {
  std::string eq;
  for (char ch : op.attr_str("equation", "")) if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char ch : lhs) {
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  }
  if (terms.size() != shapes.size())
    return Status::error(fmt::format("{}: equation has {} terms for {} operands", op.describe(),
                                     terms.size(), shapes.size()));
  Einsum e;
  int64_t nell = 0;
  std::vector<int64_t> ell_count(shapes.size());
  for (size_t k = 0; k < shapes.size(); ++k) {
    bool has_ell = false;
    KILN_ASSIGN(auto labels, parse_term(op, terms[k], static_cast<int64_t>(shapes[k].size()),
                                        ell_count[k], has_ell));
    e.in.push_back(labels);
    nell = std::max(nell, ell_count[k]);
  }
  e.nlabels = 52 + static_cast<int>(nell);
  e.size.assign(e.nlabels, -3); // -3: label unused
  for (size_t k = 0; k < shapes.size(); ++k) {
    for (size_t d = 0; d < e.in[k].size(); ++d) {
      int &l = e.in[k][d];
      if (l <= -2) l = 52 + static_cast<int>(nell - ell_count[k]) + (-2 - l); // right-align
      const int64_t dim = shapes[k][d];
      int64_t &s = e.size[l];
      const bool bcast = l >= 52;
      if (s == -3 || s == kDynamic || (bcast && s == 1)) s = dim;
      else if (dim >= 0 && dim != s && !(bcast && dim == 1))
        return Status::error(fmt::format("{}: label dims disagree ({} vs {})", op.describe(), s, dim));
    }
  }
  for (int l = 52; l < e.nlabels; ++l) if (e.size[l] == -3) e.size[l] = 1;
  if (arrow == std::string::npos) {
    for (int l = 52; l < e.nlabels; ++l) e.out.push_back(l);
    std::vector<int> count(52, 0);
    for (auto &t : e.in)
      for (int l : t) if (l < 52) ++count[l];
    for (int l = 0; l < 52; ++l) if (count[l] == 1) e.out.push_back(l);
    return e;
  }
  int64_t oell = 0;
  bool has_ell = false;
  KILN_ASSIGN(auto outl, parse_term(op, eq.substr(arrow + 2), -1, oell, has_ell));
  for (int l : outl) {
    if (std::find(e.out.begin(), e.out.end(), l) != e.out.end())
      return Status::error(op.describe() + ": an output label is repeated");
    if (e.size[l] == -3)
      return Status::error(op.describe() + ": an output label does not appear in the inputs");
    e.out.push_back(l);
  }
  if (has_ell) {
    const std::string ot = eq.substr(arrow + 2);
    size_t pos = 0;
    for (size_t i = 0; i < ot.find("..."); ++i) ++pos;
    std::vector<int> ells;
    for (int l = 52; l < e.nlabels; ++l) ells.push_back(l);
    e.out.insert(e.out.begin() + static_cast<int64_t>(pos), ells.begin(), ells.end());
  } else if (nell > 0) {
    for (int l = 52; l < e.nlabels; ++l)
      if (e.size[l] != 1) return Status::error(op.describe() + ": '...' dims missing from the output");
  }
  return e;
}

Shape einsum_out_shape(const Einsum &e) {
  Shape s;
  for (int l : e.out) s.push_back(e.size[l]);
  return s;
}

template <class T> Tensor einsum_run(const Einsum &e, const std::vector<Tensor> &in, DType dt) {
  std::vector<nn::View<T>> views;
  for (const Tensor &t : in) views.emplace_back(t);
  std::vector<int> order = e.out; // out labels, then summed labels (innermost)
  for (int l = 0; l < e.nlabels; ++l)
    if (e.size[l] != -3 && std::find(e.out.begin(), e.out.end(), l) == e.out.end())
      order.push_back(l);
  const size_t K = in.size(), R = order.size();
  std::vector<std::vector<int64_t>> st(K, std::vector<int64_t>(R, 0)); // per operand, per order pos
  for (size_t k = 0; k < K; ++k) {
    const auto strides = shape_strides(in[k].shape());
    for (size_t d = 0; d < e.in[k].size(); ++d) {
      if (in[k].shape()[d] == 1 && e.size[e.in[k][d]] != 1) continue; // broadcast '...' dim
      const size_t pos = std::find(order.begin(), order.end(), e.in[k][d]) - order.begin();
      st[k][pos] += strides[d];
    }
  }
  int64_t sum_n = 1, total = 1;
  for (size_t i = 0; i < R; ++i) {
    total *= e.size[order[i]];
    if (i >= e.out.size()) sum_n *= e.size[order[i]];
  }
  Shape out_shape = einsum_out_shape(e);
  std::vector<T> y(static_cast<size_t>(shape_numel(out_shape)), T(0));
  std::vector<int64_t> idx(R, 0), off(K, 0);
  for (int64_t it = 0; it < total; ++it) {
    T p = T(1);
    for (size_t k = 0; k < K; ++k) p *= views[k][off[k]];
    y[sum_n ? it / sum_n : 0] += p;
    for (int64_t d = static_cast<int64_t>(R) - 1; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) off[k] += st[k][d];
      if (++idx[d] < e.size[order[d]]) break;
      for (size_t k = 0; k < K; ++k) off[k] -= st[k][d] * idx[d];
      idx[d] = 0;
    }
  }
  return nn::store<T>(y, dt, out_shape);
}

Status eval_einsum(EvalCtx &ctx) {
  std::vector<Shape> shapes;
  std::vector<Tensor> in(ctx.in.begin(), ctx.in.end());
  for (const Tensor &t : in) shapes.push_back(t.shape());
  KILN_ASSIGN(Einsum e, parse_einsum(ctx.op, shapes));
  Shape all; // every label's size: bounds the index loop
  for (int l = 0; l < e.nlabels; ++l)
    if (e.size[l] != -3) all.push_back(e.size[l]);
  KILN_TRY(nn::check_result_size(ctx.op, all));
  const DType dt = in[0].dtype();
  if (is_float(dt)) ctx.out = {einsum_run<double>(e, in, dt)};
  else ctx.out = {einsum_run<uint64_t>(e, in, dt)};
  return Status::ok();
}

Status infer_einsum(InferCtx &ctx) {
  std::vector<Shape> shapes;
  const DType dt = ctx.type(0).dtype;
  for (size_t i = 0; i < ctx.in.size(); ++i) {
    if (!ctx.present(i)) return ctx.error("operands may not be omitted");
    if (ctx.type(i).dtype != dt) return ctx.error("operands must have the same dtype");
    if (!ctx.type(i).ranked) {
      ctx.out = {TensorType{dt, {}, false}};
      return Status::ok();
    }
    shapes.push_back(ctx.type(i).dims);
  }
  if (is_bool(dt)) return ctx.error("bool operands are not supported");
  KILN_ASSIGN(Einsum e, parse_einsum(ctx.op, shapes));
  ctx.out = {TensorType{dt, einsum_out_shape(e), true}};
  return Status::ok();
}

// ---- det -------------------------------------------------------------------------------------

double det_lu(std::vector<double> a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c])) piv = r;
    if (a[piv * n + c] == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[piv * n + j]);
      det = -det;
    }
    const double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      for (int64_t j = c; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

Status eval_det(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != x.shape()[x.rank() - 2])
    return ctx.error(fmt::format("input [{}] must be [..., M, M]", shape_str(x.shape())));
  const int64_t n = x.shape().back();
  Shape out(x.shape().begin(), x.shape().end() - 2);
  Tensor y(x.dtype(), out);
  nn::View<double> vx(x);
  for (int64_t b = 0; b < y.numel(); ++b)
    y.set_f64(b, det_lu(std::vector<double>(vx.data() + b * n * n, vx.data() + (b + 1) * n * n), n));
  ctx.out = {y};
  return Status::ok();
}

Status infer_det(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  if (!x.ranked) {
    ctx.out = {x};
    return Status::ok();
  }
  if (x.rank() < 2) return ctx.error("input must have rank >= 2");
  const int64_t a = x.dims[x.rank() - 1], b = x.dims[x.rank() - 2];
  if (a >= 0 && b >= 0 && a != b) return ctx.error("input must be square in its last two dims");
  ctx.out = {TensorType{x.dtype, Shape(x.dims.begin(), x.dims.end() - 2), true}};
  return Status::ok();
}

} // namespace

void register_nn_einsum_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.einsum",
      .min_operands = 1,
      .max_operands = -1,
      .verify =
          [](const Op &op) {
            if (!op.has_attr("equation"))
              return Status::error(op.describe() + ": needs a string attribute 'equation'");
            return Status::ok();
          },
      .infer = infer_einsum,
      .eval = eval_einsum,
  });
  r.add(OpDef{
      .name = "kiln.det",
      .min_operands = 1,
      .max_operands = 1,
      .infer = infer_det,
      .eval = eval_det,
  });
}

} // namespace kiln
