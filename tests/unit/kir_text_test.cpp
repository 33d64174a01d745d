// Kernel IR text form: print -> parse -> print round trip over every node kind, exact
// constants, and errors (never a crash) on malformed text.
#include "kir/kir.h"
#include "kir/kir_parser.h"
#include "kir/kir_pass.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <set>

using namespace kiln::kir;

namespace {

// A kernel using every expression and statement kind, every scalar type, operator,
// intrinsic and builtin, and names that must be quoted.
Kernel every_kind_kernel() {
  Kernel k;
  k.name = "every kind/op:0";
  k.workgroup_size[0] = 64;
  k.workgroup_size[1] = 2;
  k.push_constant_count = 3;
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar out = k.add_buffer("for", ScalarType::f32, false, true);
  BufferVar ints = k.add_buffer("b0", ScalarType::i64);
  SharedVar tile = k.add_shared("tile", ScalarType::f32, 256);
  Expr i = var("i", ScalarType::u32), j = var("r.unrolled", ScalarType::i32);
  Expr x = var("x", ScalarType::f32), acc = var("acc", ScalarType::f32);
  Expr n = var("a \"quoted\" name\n", ScalarType::i64);
  std::vector<Stmt> body;
  std::vector<Expr> values;
  for (int b = 0; b <= static_cast<int>(BuiltinKind::num_subgroups); ++b)
    values.push_back(cast(ScalarType::f32, builtin(static_cast<BuiltinKind>(b))));
  for (int f = 0; f <= static_cast<int>(Intrinsic::isinf); ++f) {
    auto fn = static_cast<Intrinsic>(f);
    std::vector<Expr> a(static_cast<size_t>(arity(fn)), x);
    Expr c = call(fn, a);
    values.push_back(c.type() == ScalarType::boolean ? select(c, x, acc) : c);
  }
  values.push_back(select(call(Intrinsic::abs, {cast(ScalarType::i32, x)}) == imm_i32(3), x, acc));
  for (int op = 0; op <= static_cast<int>(BinOp::shr); ++op) {
    auto bop = static_cast<BinOp>(op);
    bool bitwise = bop >= BinOp::bit_and;
    Expr a = bitwise ? cast(ScalarType::i64, x) : x;
    values.push_back(cast(ScalarType::f32, binary(bop, a, a)));
  }
  for (int op = 0; op <= static_cast<int>(CmpOp::ge); ++op)
    values.push_back(
        select(cmp(static_cast<CmpOp>(op), x, acc) || (!(x == x) && imm_bool(false)), x, acc));
  values.push_back(load_shared(tile, i) + load(in, i));
  values.push_back(cast(ScalarType::f32, load(5, ScalarType::u8, i))); // no such buffer
  values.push_back(cast(ScalarType::f32, load(0, ScalarType::i32, j))); // type != declared
  values.push_back(cast(ScalarType::f32, var("unbound", ScalarType::u16)));
  values.push_back(cast(ScalarType::f32, push_const(2)));
  Expr sum = imm_f32(0);
  for (const Expr &v : values) sum = sum + v;
  body.push_back(declare_var(acc, fimm(ScalarType::f32, 0.1)));
  body.push_back(for_loop(j, imm_i32(0), imm_i32(4), assign(acc, acc + sum)));
  body.push_back(let(n, imm_i64(-9000000000), store(ints, i, n)));
  body.push_back(block({barrier(), store_shared(tile, i, acc)}));
  body.push_back(block({store(out, i, acc)}));
  body.push_back(if_then(i < push_const(0), store(out, i, x), store(out, i, acc)));
  body.push_back(let(x, load(in, i), if_then(x > acc, block({}))));
  k.body = let(i, global_id(0), block(std::move(body)));
  return k;
}

// The vector, subgroup and cooperative-matrix kinds, vector and matrix variables (bound,
// unbound, and unbound under a scalar binding of the same name), and their casts.
Kernel vector_matrix_kernel() {
  Kernel k;
  k.name = "vec_sg_coopmat";
  k.workgroup_size[0] = 32;
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar h = k.add_buffer("h", ScalarType::f16);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  SharedVar tile = k.add_shared("tile", ScalarType::f16, 256);
  const ValueType f32x4 = ValueType::vector(ScalarType::f32, 4);
  const ValueType ma = ValueType::coop_matrix(ScalarType::f16, 16, 8, MatrixUse::a);
  const ValueType mb = ValueType::coop_matrix(ScalarType::f16, 8, 16, MatrixUse::b);
  const ValueType mc = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);
  Expr i = var("i", ScalarType::u32), x = var("x", ScalarType::f32);
  Expr v = var("v", f32x4), m = var("m", mc);
  std::vector<Stmt> body;
  std::vector<Expr> scalars = {cast(ScalarType::f32, subgroup_size()),
                               cast(ScalarType::f32, subgroup_invocation_id()),
                               cast(ScalarType::f32, subgroup_id()),
                               cast(ScalarType::f32, num_subgroups()),
                               extract_lane(v, 2),
                               subgroup_broadcast(x, subgroup_invocation_id()),
                               subgroup_broadcast_first(x),
                               subgroup_shuffle(x, imm_u32(1)),
                               cast(ScalarType::f32, matrix_length(ma))};
  Expr sum = x;
  for (const Expr &e : scalars) sum = sum + e;
  Expr w = make_vector({sum, x, x, x}) + broadcast(x, 4);
  for (int op = 0; op <= static_cast<int>(ReduceOp::max); ++op)
    w = w + subgroup_reduce(static_cast<ReduceOp>(op), v);
  w = w + subgroup_shuffle_xor(v, imm_u32(16)) +
      cast(ScalarType::f32, cast(ScalarType::i32, v)) + var("unbound", f32x4);
  body.push_back(declare_var(v, vector_load(in, i, 4)));
  body.push_back(assign(v, w));
  body.push_back(vector_store(out, i, v));
  Expr a = matrix_load(ma, h, i, imm_u32(8), MatrixLayout::row_major);
  Expr b = matrix_load(mb, tile, imm_u32(0), imm_u32(16), MatrixLayout::col_major);
  Expr c = matrix_fill(mc, imm_f32(0));
  body.push_back(let(m, matrix_mul_add(a, b, c),
                     block({matrix_store(out, i, imm_u32(16), MatrixLayout::row_major,
                                         matrix_scale(m + m, imm_f32(0.5f))),
                            matrix_store(h, i, imm_u32(16), MatrixLayout::col_major,
                                         cast(ScalarType::f16, m))})));
  // A scalar binding of a name does not imply the type of a vector use of it.
  body.push_back(let(var("v", ScalarType::f32), x,
                     vector_store(out, i, var("v", f32x4) * var("v", f32x4))));
  k.body = let(i, global_id(0), let(x, load(in, i), block(std::move(body))));
  return k;
}

// Constants of every type, each stored so that it appears in the text.
Kernel constants_kernel() {
  Kernel k;
  k.name = "constants";
  std::vector<Stmt> body;
  std::vector<Expr> cs = {
      imm_bool(true), imm_bool(false), imm(ScalarType::i8, -128), imm(ScalarType::u8, 255),
      imm(ScalarType::i16, -32768), imm(ScalarType::u16, 65535), imm_i32(-2147483647 - 1),
      imm_u32(4294967295u), imm_i64(INT64_MIN), imm(ScalarType::u64, -1),
      fimm(ScalarType::f16, 0.1), fimm(ScalarType::f16, 65504), imm_f32(0.1f),
      imm_f32(-0.0f), imm_f32(1e-45f), imm_f32(3.4028235e38f), fimm(ScalarType::f64, 0.1),
      fimm(ScalarType::f64, 1e300), fimm(ScalarType::f64, 5e-324), imm_f32(INFINITY),
      fimm(ScalarType::f64, -INFINITY), fimm(ScalarType::f16, NAN), imm_f32(3)};
  for (size_t b = 0; b < cs.size(); ++b) {
    k.add_buffer("c" + std::to_string(b), cs[b].type(), false, true);
    body.push_back(store(static_cast<int>(b), imm_u32(0), cs[b]));
  }
  k.body = block(std::move(body));
  return k;
}

// Which node kinds a statement tree holds.
struct KindSet : Visitor {
  using Visitor::visit;
  std::set<ExprKind> exprs;
  std::set<StmtKind> stmts;
  void visit(const Expr &e) override {
    if (!e.defined()) return;
    exprs.insert(e.kind());
    Visitor::visit(e);
  }
  void visit(const Stmt &s) override {
    if (!s.defined()) return;
    stmts.insert(s.kind());
    Visitor::visit(s);
  }
};

Kernel parsed(const std::string &text) {
  auto r = parse_kernel(text, "t.kir");
  EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << text;
  return r.is_ok() ? r.value() : Kernel();
}

std::string parse_error(const std::string &text) {
  auto r = parse_kernels(text, "t.kir");
  return r.is_ok() ? "(parsed)" : r.status().message();
}

} // namespace

TEST(KirText, EveryNodeKindIsCovered) {
  KindSet seen;
  seen.visit(every_kind_kernel().body);
  seen.visit(vector_matrix_kernel().body);
#define KILN_KIR_EXPECT_E(K) EXPECT_TRUE(seen.exprs.count(ExprKind::K)) << #K;
#define KILN_KIR_EXPECT_S(K) EXPECT_TRUE(seen.stmts.count(StmtKind::K)) << #K;
  KILN_KIR_EXPR_KINDS(KILN_KIR_EXPECT_E)
  KILN_KIR_STMT_KINDS(KILN_KIR_EXPECT_S)
#undef KILN_KIR_EXPECT_E
#undef KILN_KIR_EXPECT_S
}

TEST(KirText, RoundTripsVectorSubgroupAndMatrixKinds) {
  Kernel k = vector_matrix_kernel();
  const std::string text = print(k);
  Kernel back = parsed(text);
  EXPECT_EQ(print(back), text);
  EXPECT_TRUE(check_round_trip(k).is_ok()) << check_round_trip(k).message();
  for (const char *s : {"var v: f32x4 = vload<f32x4>(b0, i)", "subgroup_reduce<max, f32x4>(v)",
                        "let (m: coopmat<f32, 16x16, accumulator> = coopmat_muladd<",
                        "coopmat_load<f16, 8x16, b>(s0, 0u, 16u, col_major)", "v:f32x4",
                        "unbound:f32x4", "coopmat_store<f16, 16x16, accumulator>(b1"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
  KindSet a, b;
  a.visit(k.body);
  b.visit(back.body);
  EXPECT_EQ(a.exprs, b.exprs);
  EXPECT_EQ(a.stmts, b.stmts);
  EXPECT_EQ(verify(back).message(), verify(k).message());
}

TEST(KirText, IllTypedVectorAndMatrixTextIsAnError) {
  const std::string head = "kernel k workgroup(32, 1, 1) push_constants 0\n"
                           "  buffer b0 o: f32\n  buffer b1 h: f16\n{\n";
  auto err = [&](const std::string &stmt) { return parse_error(head + "  " + stmt + "\n}\n"); };
  const std::string a = "coopmat_fill<f16, 16x8, a>(0:f16)",
                    b = "coopmat_fill<f16, 16x16, b>(0:f16)",
                    c = "coopmat_fill<f32, 16x16, accumulator>(0.0f)";
  EXPECT_EQ(err("coopmat_store<f32, 16x16, accumulator>(b0, 0u, 16u, row_major, "
                "coopmat_muladd<f32, 16x16, accumulator>(" + a + ", " + b + ", " + c + "))"),
            "t.kir:5:66: coopmat_muladd shapes do not chain: coopmat<f16, 16x8, a> * "
            "coopmat<f16, 16x16, b> + coopmat<f32, 16x16, accumulator>");
  EXPECT_EQ(err("b0[0u] = vload<f32>(b0, 0u)"), "t.kir:5:12: vload needs a vector type, not f32");
  EXPECT_EQ(err("vstore<f32x4>(b0, 0u, 1.0f)"), "t.kir:5:25: vstore<f32x4> value has type f32");
  EXPECT_EQ(err("b0[0u] = extract_lane<f32>(vload<f32x2>(b0, 0u), 2)"),
            "t.kir:5:52: lane 2 out of range for f32x2");
  EXPECT_EQ(err("b0[0u] = vload<f32x4>(b0, 0u)"),
            "t.kir:5:12: stored value must be a scalar, not f32x4");
  EXPECT_EQ(err("b0[0u] = subgroup_shuffle<f32>(1.0f, 1)"),
            "t.kir:5:12: subgroup_shuffle lane must be u32, not i32");
  EXPECT_EQ(err("coopmat_store<f32, 16x16, accumulator>(b1, 0u, 16u, row_major, " + c + ")"),
            "t.kir:5:42: b1 holds f16, the matrix f32");
  EXPECT_EQ(err("b0[0u] = f32(coopmat_length<f32, 0x16, a>())"),
            "t.kir:5:36: expected a matrix shape ROWSxCOLS (1 to 1024 each), got '0x16'");
  EXPECT_EQ(err("var m: coopmat<f32, 16x16, accumulator> = (" + c + " % " + c + ")"),
            "t.kir:5:90: '%' does not take cooperative matrices");
  EXPECT_EQ(err("var v: f32x4 = (vload<f32x4>(b0, 0u) + 1.0f)"),
            "t.kir:5:42: operands of '+' have types f32x4 and f32");
  EXPECT_EQ(err("var v: f32x4 = 1.0f"), "t.kir:5:18: var initial value has type f32, the "
                                         "variable f32x4");
}

TEST(KirText, RoundTripsEveryNodeKind) {
  Kernel k = every_kind_kernel();
  const std::string text = print(k);
  Kernel back = parsed(text);
  EXPECT_EQ(print(back), text);
  EXPECT_TRUE(check_round_trip(k).is_ok()) << check_round_trip(k).message();
  EXPECT_EQ(back.name, k.name);
  ASSERT_EQ(back.buffers.size(), 3u);
  EXPECT_EQ(back.buffers[1].name, "for");
  EXPECT_TRUE(back.buffers[0].readonly);
  EXPECT_TRUE(back.buffers[1].writeonly);
  EXPECT_EQ(back.shared[0].count, 256u);
  EXPECT_EQ(back.workgroup_size[1], 2u);
  EXPECT_EQ(back.push_constant_count, 3u);
  // Variable names that are words of the text form, and names that are not identifiers, are
  // quoted; kernel and buffer names only when they are not identifiers.
  EXPECT_EQ(text.substr(0, 32), "kernel \"every kind/op:0\" workgro");
  EXPECT_NE(text.find("buffer b1 for: f32 writeonly"), std::string::npos) << text;
  EXPECT_NE(text.find("buffer b2 b0: i64"), std::string::npos) << text;
  EXPECT_NE(text.find("\"a \\\"quoted\\\" name\\x0a\""), std::string::npos) << text;
  EXPECT_NE(text.find("r.unrolled"), std::string::npos) << text;
  // Types appear only where no binding or declaration implies them.
  EXPECT_NE(text.find("unbound:u16"), std::string::npos) << text;
  EXPECT_NE(text.find("b0:i32["), std::string::npos) << text;
  EXPECT_NE(text.find("b5:u8["), std::string::npos) << text;
  KindSet a, b;
  a.visit(k.body);
  b.visit(back.body);
  EXPECT_EQ(a.exprs, b.exprs);
  EXPECT_EQ(a.stmts, b.stmts);
  // Verification sees the same kernel: the out-of-range b5 and unbound variable fail alike.
  EXPECT_EQ(verify(back).message(), verify(k).message());
}

TEST(KirText, ConstantsReadBackExactly) {
  Kernel k = constants_kernel();
  Kernel back = parsed(print(k));
  EXPECT_EQ(print(back), print(k));
  const Block *a = k.body.as<Block>(), *b = back.body.as<Block>();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->stmts.size(), b->stmts.size());
  for (size_t i = 0; i < a->stmts.size(); ++i) {
    const Expr &x = a->stmts[i].as<Store>()->value, &y = b->stmts[i].as<Store>()->value;
    ASSERT_EQ(x.kind(), y.kind()) << print(x);
    EXPECT_EQ(x.type(), y.type()) << print(x);
    if (const IntImm *n = x.as<IntImm>()) {
      EXPECT_EQ(n->value, y.as<IntImm>()->value);
    }
    if (const FloatImm *f = x.as<FloatImm>()) {
      const double fv = f->value, gv = y.as<FloatImm>()->value;
      if (std::isnan(fv)) {
        EXPECT_TRUE(std::isnan(gv));
      } else {
        EXPECT_EQ(std::bit_cast<uint64_t>(fv), std::bit_cast<uint64_t>(gv)) << print(x);
      }
    }
  }
}

TEST(KirText, RandomFloatsReadBackBitExact) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits64 = rng();
    double d = std::bit_cast<double>(bits64);
    float f = std::bit_cast<float>(static_cast<uint32_t>(bits64));
    for (Expr e : {fimm(ScalarType::f64, d), imm_f32(f)}) {
      if (std::isnan(e.as<FloatImm>()->value)) continue;
      Kernel k;
      k.name = "f";
      k.add_buffer("o", e.type());
      k.body = store(0, imm_u32(0), e);
      Kernel back = parsed(print(k));
      ASSERT_TRUE(back.body.as<Store>()) << print(k);
      EXPECT_EQ(std::bit_cast<uint64_t>(back.body.as<Store>()->value.as<FloatImm>()->value),
                std::bit_cast<uint64_t>(e.as<FloatImm>()->value))
          << print(k);
    }
  }
}

TEST(KirText, ParsesSeveralKernels) {
  Kernel a = every_kind_kernel(), b = constants_kernel();
  auto r = parse_kernels(print(a) + "// -----\n" + print(b), "two.kir");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r.value().size(), 2u);
  EXPECT_EQ(print(r.value()[1]), print(b));
  EXPECT_EQ(parse_error(print(a) + print(b)), "(parsed)");
  auto one = parse_kernel(print(a) + print(b), "two.kir");
  EXPECT_FALSE(one.is_ok());
}

TEST(KirText, ErrorsNameLineAndColumn) {
  const std::string head = "kernel k workgroup(1, 1, 1) push_constants 0\n"
                           "  buffer b0 o: f32\n{\n";
  EXPECT_EQ(parse_error(head + "  b0[0u] = (1.0f + 1)\n}\n"),
            "t.kir:4:20: operands of '+' have types f32 and i32");
  EXPECT_EQ(parse_error(head + "  b0[x] = 1.0f\n}\n"),
            "t.kir:4:6: undeclared variable 'x' (write x:TYPE to use it unbound)");
  EXPECT_EQ(parse_error(head + "  b0[0u] = 300:u8\n}\n"),
            "t.kir:4:12: integer '300' out of range for u8");
  EXPECT_EQ(parse_error(head + "  b0[1.0f] = 1.0f\n}\n"),
            "t.kir:4:6: index must be i32 or u32, not f32");
  EXPECT_EQ(parse_error(head + "  if (1) {\n  }\n}\n"),
            "t.kir:4:7: if condition must be bool, not i32");
  EXPECT_EQ(parse_error(head + "  b0[0u] = sqrt(1)\n}\n"), "t.kir:4:12: sqrt does not take i32");
  EXPECT_EQ(parse_error(head + "  b0[0u] = (true < false)\n}\n"),
            "t.kir:4:18: '<' needs non-bool operands, not bool");
  EXPECT_EQ(parse_error(head + "  b1[0u] = b3[0u]\n}\n"),
            "t.kir:4:12: b3 is not declared (write b3:TYPE to use it anyway)");
  EXPECT_EQ(parse_error(head + "  b0[0u] = 1.0f $\n}\n"), "t.kir:4:17: unexpected character '$'");
  EXPECT_EQ(parse_error(head), "t.kir:4:1: expected '}', got end of input");
  EXPECT_EQ(parse_error("kernel k workgroup(1, 1) push_constants 0 {}"),
            "t.kir:1:24: expected ',', got ')'");
}

TEST(KirText, HostileTextIsAnErrorNotACrash) {
  for (const std::string &text : {print(every_kind_kernel()), print(vector_matrix_kernel())}) {
  // Every prefix, and every single-byte change to a few bytes, parses or fails cleanly.
  for (size_t n = 0; n < text.size(); ++n) (void)parse_kernels(text.substr(0, n), "t.kir");
  std::mt19937 rng(3);
  const std::string bytes = "(){}[],:=!+-*/%&|^<>\"\\ \n0u1f.e-x_bsv";
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    for (int m = 0; m < 3; ++m)
      t[rng() % t.size()] = bytes[rng() % bytes.size()];
    auto r = parse_kernels(t, "t.kir");
    if (!r.is_ok()) continue;
    for (const Kernel &k : r.value()) EXPECT_EQ(print(parsed(print(k))), print(k));
  }
  }
  // Deep nesting is refused, not a stack overflow.
  std::string deep = "kernel k workgroup(1, 1, 1) push_constants 0 buffer b0 o: i32 {\n b0[0u] = ";
  for (int i = 0; i < 100000; ++i) deep += "(1 + ";
  EXPECT_NE(parse_error(deep).find("nesting deeper than"), std::string::npos);
}
