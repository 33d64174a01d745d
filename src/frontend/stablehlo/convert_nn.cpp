// dot_general / dot -> transposes and reshapes around kiln.matmul; convolution (any
// dimension_numbers layout) -> transposes around kiln.conv in NC<spatial> layout.
#include "frontend/stablehlo/convert.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::stablehlo_fe {

namespace {

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t product(const Shape &d, const std::vector<int64_t> &which) {
  int64_t p = 1;
  for (int64_t i : which) p *= d[i];
  return p;
}

Status check_dims(OpCtx &c, const std::vector<int64_t> &dims, int64_t rank, const char *what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return c.error(fmt::format("{} dimensions are invalid", what));
    seen[d] = true;
  }
  return Status::ok();
}

// result = [batch..., lhs free..., rhs free...]: lhs -> [batch..., M, K], rhs -> [batch..., K, N].
Outs lower_dot(OpCtx &c, const std::vector<int64_t> &lb, const std::vector<int64_t> &rb,
               const std::vector<int64_t> &lc, const std::vector<int64_t> &rc) {
  Value *l = c.in.at(0), *r = c.in.at(1);
  const Shape &ld = l->type.dims, &rd = r->type.dims;
  const int64_t lr = l->type.rank(), rr = r->type.rank();
  if (lb.size() != rb.size() || lc.size() != rc.size())
    return c.error("batching / contracting dimension lists differ in length");
  std::vector<int64_t> lall(lb), rall(rb);
  lall.insert(lall.end(), lc.begin(), lc.end());
  rall.insert(rall.end(), rc.begin(), rc.end());
  KILN_TRY(check_dims(c, lall, lr, "lhs"));
  KILN_TRY(check_dims(c, rall, rr, "rhs"));
  for (size_t i = 0; i < lb.size(); ++i)
    if (ld[lb[i]] != rd[rb[i]]) return c.error("batch dimension sizes differ");
  for (size_t i = 0; i < lc.size(); ++i)
    if (ld[lc[i]] != rd[rc[i]]) return c.error("contracting dimension sizes differ");
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < lr; ++d)
    if (!contains(lall, d)) lf.push_back(d);
  for (int64_t d = 0; d < rr; ++d)
    if (!contains(rall, d)) rf.push_back(d);
  Shape want;
  for (int64_t d : lb) want.push_back(ld[d]);
  for (int64_t d : lf) want.push_back(ld[d]);
  for (int64_t d : rf) want.push_back(rd[d]);
  if (want != c.result_dims())
    return c.error(fmt::format("result type should have dims [{}]", shape_str(want)));
  const DType out_t = c.result_dtype();
  if (is_bool(out_t)) return c.error("dot of i1 is not supported");
  KILN_ASSIGN(l, c.cast(l, out_t));
  KILN_ASSIGN(r, c.cast(r, out_t));
  std::vector<int64_t> lp(lb), rp(rb);
  lp.insert(lp.end(), lf.begin(), lf.end());
  lp.insert(lp.end(), lc.begin(), lc.end());
  rp.insert(rp.end(), rc.begin(), rc.end());
  rp.insert(rp.end(), rf.begin(), rf.end());
  KILN_ASSIGN(l, c.transpose(l, lp));
  KILN_ASSIGN(r, c.transpose(r, rp));
  Shape bshape;
  for (int64_t d : lb) bshape.push_back(ld[d]);
  const int64_t M = product(ld, lf), K = product(ld, lc), N = product(rd, rf);
  Shape ls(bshape), rs(bshape);
  ls.insert(ls.end(), {M, K});
  rs.insert(rs.end(), {K, N});
  KILN_ASSIGN(l, c.reshape(l, ls));
  KILN_ASSIGN(r, c.reshape(r, rs));
  KILN_ASSIGN(Value * m, c.make("kiln.matmul", {l, r}));
  return one(c.reshape(m, c.result_dims()));
}

Outs convert_dot_general(OpCtx &c) {
  const Attr *dn = c.attr("dot_dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing dot_dimension_numbers");
  KILN_ASSIGN(auto lb, c.field_ints(*dn, "lhs_batching_dimensions"));
  KILN_ASSIGN(auto rb, c.field_ints(*dn, "rhs_batching_dimensions"));
  KILN_ASSIGN(auto lc, c.field_ints(*dn, "lhs_contracting_dimensions"));
  KILN_ASSIGN(auto rc, c.field_ints(*dn, "rhs_contracting_dimensions"));
  if (const Attr *alg = c.attr("algorithm"); alg && alg->kind != Attr::Kind::Unit)
    return c.error("dot_general with an explicit 'algorithm' is not supported");
  return lower_dot(c, lb, rb, lc, rc);
}

Outs convert_dot(OpCtx &c) {
  const int64_t lr = c.rank(0), rr = c.rank(1);
  if (lr < 1 || lr > 2 || rr < 1 || rr > 2) return c.error("dot operands must have rank 1 or 2");
  return lower_dot(c, {}, {}, {lr - 1}, {0});
}

struct ConvDims {
  int64_t ib = 0, if_ = 0, ko = 0, ki = 0, ob = 0, of = 0;
  std::vector<int64_t> is, ks, os;
};

Result<ConvDims> conv_dims(OpCtx &c) {
  const Attr *dn = c.attr("dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing convolution dimension_numbers");
  ConvDims d;
  KILN_ASSIGN(d.ib, c.field_int(*dn, "input_batch_dimension"));
  KILN_ASSIGN(d.if_, c.field_int(*dn, "input_feature_dimension"));
  KILN_ASSIGN(d.ki, c.field_int(*dn, "kernel_input_feature_dimension"));
  KILN_ASSIGN(d.ko, c.field_int(*dn, "kernel_output_feature_dimension"));
  KILN_ASSIGN(d.ob, c.field_int(*dn, "output_batch_dimension"));
  KILN_ASSIGN(d.of, c.field_int(*dn, "output_feature_dimension"));
  KILN_ASSIGN(d.is, c.field_ints(*dn, "input_spatial_dimensions"));
  KILN_ASSIGN(d.ks, c.field_ints(*dn, "kernel_spatial_dimensions"));
  KILN_ASSIGN(d.os, c.field_ints(*dn, "output_spatial_dimensions"));
  const size_t s = d.is.size();
  if (d.ks.size() != s || d.os.size() != s) return c.error("spatial dimension lists differ in length");
  const int64_t r = static_cast<int64_t>(s) + 2;
  std::vector<int64_t> in{d.ib, d.if_}, k{d.ko, d.ki}, o{d.ob, d.of};
  in.insert(in.end(), d.is.begin(), d.is.end());
  k.insert(k.end(), d.ks.begin(), d.ks.end());
  o.insert(o.end(), d.os.begin(), d.os.end());
  KILN_TRY(check_dims(c, in, r, "input"));
  KILN_TRY(check_dims(c, k, r, "kernel"));
  KILN_TRY(check_dims(c, o, r, "output"));
  if (c.rank(0) != r || c.rank(1) != r) return c.error("operand ranks do not match dimension_numbers");
  return d;
}

Outs convert_convolution(OpCtx &c) {
  KILN_ASSIGN(ConvDims d, conv_dims(c));
  const size_t s = d.is.size();
  KILN_ASSIGN(int64_t bgc, c.int_attr("batch_group_count", 1));
  KILN_ASSIGN(int64_t fgc, c.int_attr("feature_group_count", 1));
  if (bgc != 1) return c.error(fmt::format("batch_group_count {} is not supported", bgc));
  if (fgc < 1) return c.error("feature_group_count must be >= 1");
  KILN_ASSIGN(auto strides, c.ints_or("window_strides", std::vector<int64_t>(s, 1)));
  KILN_ASSIGN(auto lhs_dil, c.ints_or("lhs_dilation", std::vector<int64_t>(s, 1)));
  KILN_ASSIGN(auto rhs_dil, c.ints_or("rhs_dilation", std::vector<int64_t>(s, 1)));
  KILN_ASSIGN(auto reversal, c.ints_or("window_reversal", std::vector<int64_t>(s, 0)));
  KILN_ASSIGN(auto padding, c.ints_or("padding", std::vector<int64_t>(2 * s, 0)));
  if (strides.size() != s || lhs_dil.size() != s || rhs_dil.size() != s || reversal.size() != s ||
      padding.size() != 2 * s)
    return c.error("window attributes must have one entry per spatial dim");
  for (size_t i = 0; i < s; ++i)
    if (strides[i] < 1 || lhs_dil[i] < 1 || rhs_dil[i] < 1)
      return c.error("window strides and dilations must be >= 1");
  const DType out_t = c.result_dtype();
  if (!is_float(out_t)) return c.error(fmt::format("convolution on {} is not supported", dtype_name(out_t)));
  Value *x = c.in[0], *w = c.in[1];
  KILN_ASSIGN(x, c.cast(x, out_t));
  KILN_ASSIGN(w, c.cast(w, out_t));
  std::vector<int64_t> xp{d.ib, d.if_}, wp{d.ko, d.ki};
  xp.insert(xp.end(), d.is.begin(), d.is.end());
  wp.insert(wp.end(), d.ks.begin(), d.ks.end());
  KILN_ASSIGN(x, c.transpose(x, xp));
  KILN_ASSIGN(w, c.transpose(w, wp));
  // Reversed windows: flip the kernel's spatial dims.
  std::vector<int64_t> st, en, ax, step;
  for (size_t i = 0; i < s; ++i)
    if (reversal[i]) {
      const int64_t n = w->type.dims[2 + i];
      st.push_back(n - 1);
      en.push_back(-n - 1);
      ax.push_back(static_cast<int64_t>(2 + i));
      step.push_back(-1);
    }
  if (!ax.empty()) {
    KILN_ASSIGN(w, c.make("kiln.slice", {w, c.i64s(st), c.i64s(en), c.i64s(ax), c.i64s(step)}));
  }
  // lhs dilation (transposed convolutions) is interior padding of the input with zeros;
  // negative padding crops. Both are applied explicitly, the conv then has no padding.
  bool explicit_pad = false;
  for (size_t i = 0; i < s; ++i)
    explicit_pad = explicit_pad || lhs_dil[i] != 1 || padding[2 * i] < 0 || padding[2 * i + 1] < 0;
  std::vector<int64_t> pads(2 * s, 0);
  if (explicit_pad) {
    std::vector<int64_t> lo(2, 0), hi(2, 0), interior(2, 0);
    for (size_t i = 0; i < s; ++i) {
      lo.push_back(padding[2 * i]);
      hi.push_back(padding[2 * i + 1]);
      interior.push_back(lhs_dil[i] - 1);
    }
    KILN_ASSIGN(x, c.pad_interior(x, lo, hi, interior, c.scalar(out_t, 0)));
  } else {
    for (size_t i = 0; i < s; ++i) {
      pads[i] = padding[2 * i];
      pads[s + i] = padding[2 * i + 1];
    }
  }
  AttrMap a;
  a["strides"] = strides;
  a["dilations"] = rhs_dil;
  a["pads"] = pads;
  a["group"] = fgc;
  KILN_ASSIGN(Value * y, c.make("kiln.conv", {x, w}, a));
  // y is [N, O, spatial...]; result dim j takes y's dim perm[j].
  std::vector<int64_t> perm(s + 2);
  perm[d.ob] = 0;
  perm[d.of] = 1;
  for (size_t i = 0; i < s; ++i) perm[d.os[i]] = static_cast<int64_t>(2 + i);
  return one(c.transpose(y, perm));
}

// batch_norm_inference: (x - mean) * scale / sqrt(variance + epsilon) + offset along
// feature_index.
Outs convert_batch_norm_inference(OpCtx &c) {
  Value *x = c.in.at(0);
  KILN_ASSIGN(int64_t fi, c.int_attr("feature_index"));
  const Attr *eps = c.attr("epsilon");
  if (!eps || (eps->kind != Attr::Kind::Float && eps->kind != Attr::Kind::Int))
    return c.error("missing attribute 'epsilon'");
  const DType t = x->type.dtype;
  if (!is_float(t)) return c.error("batch_norm_inference needs a float operand");
  if (fi < 0 || fi >= x->type.rank()) return c.error("feature_index is out of range");
  Shape s(x->type.dims.size(), 1);
  s[fi] = x->type.dims[fi];
  std::vector<Value *> p;
  for (size_t i = 1; i < 5; ++i) {
    KILN_ASSIGN(Value * v, c.reshape(c.in.at(i), s));
    p.push_back(v);
  }
  const double e = eps->kind == Attr::Kind::Float ? eps->f : static_cast<double>(eps->i);
  KILN_ASSIGN(Value * ve, c.make("kiln.add", {p[3], c.scalar(t, e)}));
  KILN_ASSIGN(Value * sd, c.make("kiln.sqrt", {ve}));
  KILN_ASSIGN(Value * k, c.make("kiln.div", {p[0], sd}));
  KILN_ASSIGN(Value * xc, c.make("kiln.sub", {x, p[2]}));
  KILN_ASSIGN(Value * y, c.make("kiln.mul", {xc, k}));
  return one(c.make("kiln.add", {y, p[1]}));
}

} // namespace

void register_nn(ConverterTable &t) {
  t.add("stablehlo.batch_norm_inference", convert_batch_norm_inference);
  t.add("stablehlo.dot_general", convert_dot_general);
  t.add("stablehlo.dot", convert_dot);
  t.add("stablehlo.convolution", convert_convolution);
}

} // namespace kiln::stablehlo_fe
