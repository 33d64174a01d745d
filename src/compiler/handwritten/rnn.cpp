// kiln.rnn (RNN / GRU / LSTM): one workgroup per (direction, batch) runs the whole time loop;
// its invocations share the hidden units (unit u = lane + k * workgroup size) and keep the
// hidden state, the cell state and the GRU gates in shared memory, with a barrier between
// the phases of every step (every unit of the previous step must be visible).
#include "compiler/handwritten/seq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kiln::compiler {

namespace seq {
namespace {

using namespace kir;
using ActFn = std::function<Expr(Expr)>;

enum class Cell { rnn, gru, lstm };

Expr clampf(const Expr &x, double lo, double hi) {
  return min(max(x, fconst(x, lo)), fconst(x, hi));
}

// The activation functions, per direction (f[, g[, h]]), as in the reference: alpha / beta
// values are consumed in order by the functions that take them.
Result<std::vector<ActFn>> make_acts(const Op &op, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (auto it = op.attrs.find("activations"); it != op.attrs.end()) {
    const auto *v = std::get_if<std::vector<std::string>>(&it->second);
    if (!v)
      return Status::error(op.describe() + ": 'activations' must be a list of strings");
    names = *v;
  }
  const size_t nf = cell == Cell::rnn ? 1 : cell == Cell::gru ? 2 : 3;
  if (names.empty()) {
    const std::vector<std::string> dflt = cell == Cell::rnn ? std::vector<std::string>{"Tanh"}
                                          : cell == Cell::gru
                                              ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d)
      names.insert(names.end(), dflt.begin(), dflt.end());
  }
  if (names.size() == nf && dirs == 2)
    names.insert(names.end(), names.begin(), names.end());
  if (names.size() != nf * static_cast<size_t>(dirs))
    return Status::error(op.describe() + ": wrong number of activations");
  const std::vector<double> alphas = op.attr_floats("activation_alpha");
  const std::vector<double> betas = op.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  auto alpha = [&](double d) { return ai < alphas.size() ? alphas[ai++] : d; };
  auto beta = [&](double d) { return bi < betas.size() ? betas[bi++] : d; };
  std::vector<ActFn> acts;
  for (const std::string &n0 : names) {
    std::string n = n0;
    for (char &ch : n)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (n == "tanh")
      acts.push_back(tanh_expr);
    else if (n == "sigmoid")
      acts.push_back(sigmoid_expr);
    else if (n == "relu")
      acts.push_back([](Expr x) { return max(x, fconst(x, 0)); });
    else if (n == "softsign")
      acts.push_back([](Expr x) { return x / (fconst(x, 1) + call(Intrinsic::abs, {x})); });
    else if (n == "softplus")
      acts.push_back(softplus_expr);
    else if (n == "affine") {
      const double a = alpha(1.0), b = beta(0.0);
      acts.push_back([a, b](Expr x) { return fconst(x, a) * x + fconst(x, b); });
    } else if (n == "leakyrelu") {
      const double a = alpha(0.01);
      acts.push_back([a](Expr x) { return select(x >= fconst(x, 0), x, fconst(x, a) * x); });
    } else if (n == "thresholdedrelu") {
      const double a = alpha(1.0);
      acts.push_back([a](Expr x) { return select(x > fconst(x, a), x, fconst(x, 0)); });
    } else if (n == "scaledtanh") {
      const double a = alpha(1.0), b = beta(1.0);
      acts.push_back([a, b](Expr x) { return fconst(x, a) * tanh_expr(fconst(x, b) * x); });
    } else if (n == "hardsigmoid") {
      const double a = alpha(0.2), b = beta(0.5);
      acts.push_back([a, b](Expr x) { return clampf(fconst(x, a) * x + fconst(x, b), 0, 1); });
    } else if (n == "elu") {
      const double a = alpha(1.0);
      acts.push_back([a](Expr x) {
        return select(x >= fconst(x, 0), x,
                      fconst(x, a) * (call(Intrinsic::exp, {x}) - fconst(x, 1)));
      });
    } else {
      return unsupported(op, "activation '" + n0 + "'");
    }
  }
  return acts;
}

struct Rnn {
  Cell cell = Cell::rnn;
  int64_t S = 0, B = 0, I = 0, H = 0, D = 0, G = 1;
  bool bm = false, reverse = false, lbr = false, input_forget = false;
  double clip = 0;
  std::vector<ActFn> acts;
  // Buffers (index -1 when absent).
  BufferVar X, W, R, Bias, Lens, H0, C0, P, Y, Yh, Yc;
  SharedVar h, nh, zs, rs, cs;
  ScalarType at = ScalarType::f32;

  Expr x_index(const Expr &t, const Expr &b, const Expr &i) const {
    return bm ? (b * S + t) * I + i : (t * B + b) * I + i;
  }
  Expr y_index(const Expr &t, const Expr &d, const Expr &b, const Expr &u) const {
    return bm ? ((b * S + t) * D + d) * H + u : ((t * D + d) * B + b) * H + u;
  }
  Expr state_index(const Expr &d, const Expr &b, const Expr &u) const {
    return bm ? (b * D + d) * H + u : (d * B + b) * H + u;
  }
  Expr act(const Expr &d, int k, const Expr &x, bool clipped = true) const {
    const size_t nf = cell == Cell::rnn ? 1 : cell == Cell::gru ? 2 : 3;
    Expr v = clip > 0 && clipped ? clampf(x, -clip, clip) : x;
    Expr r = acts[static_cast<size_t>(k)](v);
    if (D == 2)
      r = select(d == 0, r, acts[nf + static_cast<size_t>(k)](v));
    return r;
  }
};

// Context of one unit of one step: declares the gate pre-activations it needs.
struct StepCtx {
  SeqKernel &g;
  const Rnn &r;
  Expr d, b, t, u;

  Expr ld(const BufferVar &buf, const Expr &i) const { return cast(r.at, load(buf, i)); }
  // Appends to `out`: pre = x_t . W[gate row] + Wb, declared into `v`.
  void x_proj(std::vector<Stmt> &out, int gate, const Expr &v) const {
    const int64_t GH = r.G * r.H;
    Expr row = d * GH + u + gate * r.H;
    Expr init = r.Bias.index >= 0 ? ld(r.Bias, d * (2 * GH) + u + gate * r.H) : fconst(v, 0);
    out.push_back(declare_var(v, init));
    out.push_back(loop(g, r.I, [&](Expr i) {
      return assign(v, v + ld(r.X, r.x_index(t, b, i)) * ld(r.W, row * r.I + i));
    }));
  }
  // Appends to `out`: h_{t-1} (times the GRU reset gate when scaled) . R[gate row] + Rb,
  // declared into `v`.
  void h_proj(std::vector<Stmt> &out, int gate, const Expr &v, bool scaled = false) const {
    const int64_t GH = r.G * r.H;
    Expr row = d * GH + u + gate * r.H;
    Expr init = r.Bias.index >= 0 ? ld(r.Bias, d * (2 * GH) + GH + u + gate * r.H) : fconst(v, 0);
    out.push_back(declare_var(v, init));
    out.push_back(loop(g, r.H, [&](Expr k) {
      Expr hk = load_shared(r.h, k);
      if (scaled)
        hk = hk * load_shared(r.rs, k);
      return assign(v, v + hk * ld(r.R, row * r.H + k));
    }));
  }
  Expr peep(int k) const {
    return r.P.index >= 0 ? ld(r.P, d * (3 * r.H) + u + k * r.H) : make_const(r.at, 0);
  }
};

// Phase A (GRU): the update and reset gates into shared zs / rs.
Stmt gru_gates(const StepCtx &s) {
  SeqKernel &g = s.g;
  Expr xz = g.fresh("xz", s.r.at), hz = g.fresh("hz", s.r.at);
  Expr xr = g.fresh("xr", s.r.at), hr = g.fresh("hr", s.r.at);
  std::vector<Stmt> body;
  s.x_proj(body, 0, xz);
  s.h_proj(body, 0, hz);
  s.x_proj(body, 1, xr);
  s.h_proj(body, 1, hr);
  body.push_back(store_shared(s.r.zs, s.u, s.r.act(s.d, 0, xz + hz)));
  body.push_back(store_shared(s.r.rs, s.u, s.r.act(s.d, 0, xr + hr)));
  return block(body);
}

// Phase B: the new hidden state of unit u into shared nh (LSTM: also the cell state in cs).
Stmt new_state(const StepCtx &s) {
  SeqKernel &g = s.g;
  const Rnn &r = s.r;
  const ScalarType at = r.at;
  Expr hu = load_shared(r.h, s.u);
  std::vector<Stmt> body;
  if (r.cell == Cell::rnn) {
    Expr xa = g.fresh("xa", at), ha = g.fresh("ha", at);
    s.x_proj(body, 0, xa);
    s.h_proj(body, 0, ha);
    body.push_back(store_shared(r.nh, s.u, r.act(s.d, 0, xa + ha)));
    return block(body);
  }
  if (r.cell == Cell::gru) {
    Expr xh = g.fresh("xh", at), hh = g.fresh("hh", at), z = g.fresh("z", at);
    Expr cand = r.lbr ? xh + load_shared(r.rs, s.u) * hh : xh + hh;
    Expr ht = r.act(s.d, 1, cand);
    s.x_proj(body, 2, xh);
    s.h_proj(body, 2, hh, !r.lbr);
    body.push_back(
        let(z, load_shared(r.zs, s.u), store_shared(r.nh, s.u, (fconst(z, 1) - z) * ht + z * hu)));
    return block(body);
  }
  std::vector<Expr> xs, hs;
  for (int k = 0; k < 4; ++k) {
    xs.push_back(g.fresh("xg", at));
    hs.push_back(g.fresh("hg", at));
    s.x_proj(body, k, xs.back());
    s.h_proj(body, k, hs.back());
  }
  Expr c = g.fresh("c", at), ig = g.fresh("ig", at), nc = g.fresh("nc", at);
  Expr fg = r.input_forget ? fconst(ig, 1) - ig : r.act(s.d, 0, xs[2] + hs[2] + s.peep(2) * c);
  Expr og = r.act(s.d, 0, xs[1] + hs[1] + s.peep(1) * nc);
  Stmt tail = let(
      nc, fg * c + ig * r.act(s.d, 1, xs[3] + hs[3]),
      block({store_shared(r.cs, s.u, nc), store_shared(r.nh, s.u, og * r.act(s.d, 2, nc, false))}));
  body.push_back(
      let(c, load_shared(r.cs, s.u), let(ig, r.act(s.d, 0, xs[0] + hs[0] + s.peep(0) * c), tail)));
  return block(body);
}

Status bind_rnn(SeqKernel &g, const Op &op, Rnn &r) {
  auto opt = [&](size_t i, BufferVar &b, const Shape &want, const char *what) -> Status {
    b = BufferVar{-1, ScalarType::f32};
    const Value *v = operand_or_null(op, i);
    if (!v)
      return Status::ok();
    if (v->type.dims != want)
      return Status::error(fmt::format("{}: {} has shape [{}], expected [{}]", op.describe(), what,
                                       shape_str(v->type.dims), shape_str(want)));
    KILN_ASSIGN(b, g.in(v));
    return Status::ok();
  };
  const int64_t GH = r.G * r.H;
  KILN_ASSIGN(r.X, g.in(op.operands[0]));
  KILN_TRY(opt(1, r.W, {r.D, GH, r.I}, "W"));
  KILN_TRY(opt(2, r.R, {r.D, GH, r.H}, "R"));
  if (r.W.index < 0 || r.R.index < 0)
    return unsupported(op, "kiln.rnn without W or R");
  KILN_TRY(opt(3, r.Bias, {r.D, 2 * GH}, "B"));
  KILN_TRY(opt(4, r.Lens, {r.B}, "sequence_lens"));
  const Shape hs = r.bm ? Shape{r.B, r.D, r.H} : Shape{r.D, r.B, r.H};
  KILN_TRY(opt(5, r.H0, hs, "initial_h"));
  r.C0 = r.P = BufferVar{-1, ScalarType::f32};
  if (r.cell == Cell::lstm) {
    KILN_TRY(opt(6, r.C0, hs, "initial_c"));
    KILN_TRY(opt(7, r.P, {r.D, 3 * r.H}, "P"));
  }
  KILN_ASSIGN(r.Y, g.out(op.results[0]));
  KILN_ASSIGN(r.Yh, g.out(op.results[1]));
  r.Yc = BufferVar{-1, ScalarType::f32};
  if (r.cell == Cell::lstm && op.results.size() > 2) {
    KILN_ASSIGN(r.Yc, g.out(op.results[2]));
  }
  r.at = acc_type(r.X.elem);
  for (SharedVar *sv : {&r.h, &r.nh, &r.zs, &r.rs, &r.cs})
    *sv = g.shared(r.at, r.H);
  return Status::ok();
}

Result<Stmt> rnn_body(SeqKernel &g, const Rnn &r, const Expr &item, const Expr &lane) {
  const int64_t wg = g.workgroup_size();
  // for each unit u owned by this invocation: f(u)
  auto units = [&](const std::function<Stmt(Expr)> &f) {
    return loop(g, (r.H + wg - 1) / wg, [&](Expr k) {
      Expr u = g.fresh("u", ScalarType::i32);
      return let(u, lane + k * wg, if_then(u < r.H, f(u)));
    });
  };
  Expr d = g.fresh("d", ScalarType::i32), b = g.fresh("b", ScalarType::i32);
  Expr len = g.fresh("len", ScalarType::i32);
  Expr zero = make_const(r.at, 0);
  std::vector<Stmt> body;
  body.push_back(units([&](Expr u) {
    Expr si = r.state_index(d, b, u);
    return block({store_shared(r.h, u, r.H0.index >= 0 ? cast(r.at, load(r.H0, si)) : zero),
                  store_shared(r.cs, u, r.C0.index >= 0 ? cast(r.at, load(r.C0, si)) : zero)});
  }));
  if (r.Lens.index >= 0) // steps past the sequence length give zeros
    body.push_back(loop(g, r.S, [&](Expr t) {
      return if_then(t >= len, units([&](Expr u) {
                       return store(r.Y, r.y_index(t, d, b, u), make_const(r.Y.elem, 0));
                     }));
    }));
  body.push_back(barrier());
  body.push_back(loop(g, r.S, [&](Expr s) {
    Expr t = g.fresh("t", ScalarType::i32), active = s < len;
    std::vector<Stmt> step;
    if (r.cell == Cell::gru) {
      step.push_back(if_then(active, units([&](Expr u) { return gru_gates({g, r, d, b, t, u}); })));
      step.push_back(barrier());
    }
    step.push_back(if_then(active, units([&](Expr u) { return new_state({g, r, d, b, t, u}); })));
    step.push_back(barrier());
    step.push_back(if_then(active, units([&](Expr u) {
                             Expr v = load_shared(r.nh, u);
                             return block({store_shared(r.h, u, v),
                                           store(r.Y, r.y_index(t, d, b, u), cast(r.Y.elem, v))});
                           })));
    step.push_back(barrier());
    Expr tv = r.reverse ? len - 1 - s : s;
    if (r.D == 2)
      tv = select(d == 1, len - 1 - s, s);
    return let(t, tv, block(step));
  }));
  body.push_back(units([&](Expr u) {
    Expr si = r.state_index(d, b, u);
    std::vector<Stmt> st{store(r.Yh, si, cast(r.Yh.elem, load_shared(r.h, u)))};
    if (r.Yc.index >= 0)
      st.push_back(store(r.Yc, si, cast(r.Yc.elem, load_shared(r.cs, u))));
    return block(st);
  }));
  Expr len_v = i32(r.S);
  if (r.Lens.index >= 0) // the reference rejects lengths outside [0, S]; the kernel clamps
    len_v = min(max(cast(ScalarType::i32, load(r.Lens, b)), i32(0)), i32(r.S));
  return let(d, item / r.B, let(b, item % r.B, let(len, len_v, block(body))));
}

Status lower_rnn(LowerCtx &c, const Op &op) {
  Rnn r;
  const std::string cell = op.attr_str("cell", "");
  if (cell == "rnn")
    r.cell = Cell::rnn;
  else if (cell == "gru")
    r.cell = Cell::gru;
  else if (cell == "lstm")
    r.cell = Cell::lstm;
  else
    return unsupported(op, "kiln.rnn cell '" + cell + "'");
  r.G = r.cell == Cell::rnn ? 1 : r.cell == Cell::gru ? 3 : 4;
  const std::string dir = op.attr_str("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return unsupported(op, "kiln.rnn direction '" + dir + "'");
  r.D = dir == "bidirectional" ? 2 : 1;
  r.reverse = dir == "reverse";
  const DType dt = op.operands[0]->type.dtype;
  if (dt != DType::f32 && dt != DType::f16)
    return unsupported(op, fmt::format("kiln.rnn on {}", dtype_name(dt)));
  KILN_ASSIGN(r.acts, make_acts(op, r.cell, r.D));
  r.H = op.attr_int("hidden_size", 0);
  r.bm = op.attr_int("layout", 0) == 1;
  r.lbr = op.attr_int("linear_before_reset", 0) != 0;
  r.input_forget = op.attr_int("input_forget", 0) != 0;
  r.clip = op.has_attr("clip") ? op.attr_float("clip", 0.0) : 0.0;
  const Shape &xs = op.operands[0]->type.dims;
  if (xs.size() != 3 || r.H <= 0)
    return Status::error(op.describe() + ": X must be 3-D");
  r.S = r.bm ? xs[1] : xs[0];
  r.B = r.bm ? xs[0] : xs[1];
  r.I = xs[2];
  const uint64_t shared = 5 * static_cast<uint64_t>(r.H) * 4;
  if (shared > c.target().shared_memory_bytes)
    return unsupported(op, fmt::format("kiln.rnn with hidden_size {} (the state does not fit in "
                                       "shared memory)",
                                       r.H));
  SeqKernel g(c, op, "rnn_" + cell);
  KILN_TRY(bind_rnn(g, op, r));
  return g.per_group(r.D * r.B, [&](Expr item, Expr lane) { return rnn_body(g, r, item, lane); });
}

} // namespace
} // namespace seq

void add_seq_rnn_lowerings(LoweringTable &t) { t["kiln.rnn"] = seq::lower_rnn; }

} // namespace kiln::compiler
