#!/usr/bin/env python3
"""Generates the StableHLO conformance programs in tests/stablehlo/programs/.

Each program is a small JAX function lowered with `jax.jit(f, keep_unused=True).lower(*args)`:
  NAME.stablehlo.mlir  `lowered.as_text()`: the pretty form, exactly as JAX prints it
  NAME.generic.mlir    the same module in MLIR's generic op form
  NAME.in.K.npy        the K-th argument (every argument is one array: no pytrees)
  NAME.out.K.npy       the K-th output (pytree leaves in order), computed by JAX on CPU
Inputs come from numpy generators seeded by the program's name; data is float32, int32 or
bool (x64 off). `kiln conform tests/stablehlo/programs` runs them.

  gen_programs.py --out DIR     generate (needs jax; golden values on CPU: JAX_PLATFORMS=cpu)
  gen_programs.py --readme      rewrite ../README.md from the checked-in programs (no jax)
"""
import argparse
import os
import re
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_TENSOR_BYTES = 64 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024

# Ops that must each appear in at least one program (the brief's coverage list). Not listed:
# stablehlo.logistic, which JAX 0.11 never emits (lax.logistic and jax.nn.sigmoid lower to
# 1 / (1 + exp(-x)) on every platform, cuda included), and custom_call, which kiln must refuse.
REQUIRED_OPS = """
stablehlo.add stablehlo.subtract stablehlo.multiply stablehlo.divide stablehlo.maximum
stablehlo.minimum stablehlo.power stablehlo.negate stablehlo.abs stablehlo.exponential
stablehlo.log stablehlo.tanh stablehlo.sqrt stablehlo.rsqrt stablehlo.floor
stablehlo.ceil stablehlo.sign chlo.erf stablehlo.and stablehlo.or stablehlo.not stablehlo.xor
stablehlo.remainder stablehlo.shift_left stablehlo.compare stablehlo.select stablehlo.clamp
stablehlo.convert stablehlo.broadcast_in_dim stablehlo.reshape stablehlo.transpose
stablehlo.dot_general stablehlo.convolution stablehlo.reduce stablehlo.reduce_window
stablehlo.iota stablehlo.concatenate stablehlo.slice stablehlo.dynamic_slice
stablehlo.dynamic_update_slice stablehlo.gather stablehlo.scatter stablehlo.pad stablehlo.while
stablehlo.constant
""".split()

PROGRAMS = []  # (name, description, builder)


def program(name, desc):
    def deco(fn):
        PROGRAMS.append((name, desc, fn))
        return fn
    return deco


# --- input helpers -------------------------------------------------------------------------

def normal(r, shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def uniform(r, shape, lo, hi):
    return r.uniform(lo, hi, shape).astype(np.float32)


def ints(r, shape, lo, hi):
    return r.integers(lo, hi, shape).astype(np.int32)


def bools(r, shape, p=0.5):
    return r.random(shape) < p


def weight(r, fan_in, fan_out):
    return normal(r, (fan_in, fan_out), 1.0 / np.sqrt(fan_in))


# jax, jnp, lax are bound in main() before any builder runs; --readme never imports jax.
jax = jnp = lax = None


# --- elementwise ---------------------------------------------------------------------------

@program("ew_binary", "add, subtract, multiply, divide, maximum, minimum, negate; row-vector broadcast")
def _(r):
    x, y, z = normal(r, (4, 8)), normal(r, (4, 8)), normal(r, (8,))

    def f(x, y, z):
        return (x + y, x - z, x * y, x / (jnp.abs(y) + 0.5), jnp.maximum(x, y),
                jnp.minimum(x, z), -x)
    return f, [x, y, z]


@program("ew_unary", "exp, log, tanh, sigmoid (lax.logistic, jax.nn.sigmoid: JAX 0.11 writes 1/(1+exp(-x))), sqrt, rsqrt, abs")
def _(r):
    x, p = normal(r, (4, 8)), uniform(r, (4, 8), 0.2, 3.0)

    def f(x, p):
        return (jnp.exp(0.5 * x), jnp.log(p), jnp.tanh(x), lax.logistic(x), jax.nn.sigmoid(x),
                jnp.sqrt(p), lax.rsqrt(p), jnp.abs(x))
    return f, [x, p]


@program("ew_pow", "power with a tensor and a constant exponent, integer_pow (x**3, x**-2)")
def _(r):
    p, y, x = uniform(r, (3, 7), 0.3, 2.0), uniform(r, (3, 7), -1.5, 1.5), normal(r, (3, 7))

    def f(p, y, x):
        return jnp.power(p, y), p ** 2.5, x ** 3, p ** -2
    return f, [p, y, x]


@program("ew_rounding", "floor, ceil, sign (incl. 0), round_nearest_even (jnp.round), trunc")
def _(r):
    x = normal(r, (4, 6), 3.0)
    x[0, 0] = 0.0

    def f(x):
        return jnp.floor(x), jnp.ceil(x), jnp.sign(x), jnp.round(x), jnp.trunc(x)
    return f, [x]


@program("ew_trig", "sin, cos, log1p, expm1, atan2, remainder on f32")
def _(r):
    x, y = normal(r, (4, 6)), uniform(r, (4, 6), 0.5, 2.0)

    def f(x, y):
        return (jnp.sin(x), jnp.cos(x), jnp.log1p(y), jnp.expm1(0.5 * x), jnp.arctan2(x, y),
                lax.rem(x * 3.0, y))
    return f, [x, y]


@program("ew_erf", "erf via jax.scipy.special.erf (chlo.erf)")
def _(r):
    x = normal(r, (5, 8), 1.5)
    return (lambda x: jax.scipy.special.erf(x)), [x]


@program("gelu_exact", "jax.nn.gelu(approximate=False): x * (1 + erf(x / sqrt 2)) / 2")
def _(r):
    x = normal(r, (4, 16), 2.0)
    return (lambda x: jax.nn.gelu(x, approximate=False)), [x]


@program("gelu_tanh", "jax.nn.gelu(approximate=True): the tanh form")
def _(r):
    x = normal(r, (4, 16), 2.0)
    return (lambda x: jax.nn.gelu(x, approximate=True)), [x]


@program("int_ops", "int32 add/sub/mul, lax.div/rem, jnp // and %, max/min/abs/neg, shifts, and/or/xor/not")
def _(r):
    a, b = ints(r, (4, 6), -20, 21), ints(r, (4, 6), 1, 8)
    b[::2] *= -1

    def f(a, b):
        return (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), a // b, a % b,
                jnp.maximum(a, b), jnp.minimum(a, b), jnp.abs(a), -a, a << 2, a >> 1,
                lax.shift_right_logical(a, jnp.full_like(a, 3)), a & b, a | b, a ^ b, ~a)
    return f, [a, b]


@program("bool_ops", "and, or, xor, not on booleans")
def _(r):
    p, q = bools(r, (4, 8)), bools(r, (4, 8))

    def f(p, q):
        return p & q, p | q, p ^ q, ~p, jnp.logical_and(~p, q)
    return f, [p, q]


@program("compare_select", "compare (EQ NE LT LE GT GE, f32 and i32), select via jnp.where")
def _(r):
    x, y = normal(r, (4, 6)), normal(r, (4, 6))
    y[::2] = x[::2]
    a, b = ints(r, (4, 6), 0, 3), ints(r, (4, 6), 0, 3)
    p = bools(r, (4, 6))

    def f(x, y, a, b, p):
        return (x < y, x <= y, x > y, x >= y, x == y, x != y, a == b, a < b,
                jnp.where(x > y, x, 2.0 * y), jnp.where(p, x, 0.0), jnp.where(p, a, b))
    return f, [x, y, a, b, p]


@program("clamp", "clamp via lax.clamp (scalar and tensor bounds, i32) and jnp.clip")
def _(r):
    x, lo = normal(r, (4, 8)), normal(r, (4, 8), 0.3) - 0.5
    hi = lo + 1.0
    a = ints(r, (4, 8), -10, 10)

    def f(x, lo, hi, a):
        return (lax.clamp(-0.5, x, 0.5), lax.clamp(lo, x, hi), jnp.clip(x, -0.25, 0.75),
                lax.clamp(jnp.int32(-3), a, jnp.int32(4)))
    return f, [x, lo, hi, a]


@program("convert", "convert (astype) f32<->i32, bool->f32/i32, f32/i32->bool")
def _(r):
    x = normal(r, (4, 6), 4.0)
    x[0, :3] = 0.0
    a = ints(r, (4, 6), -3, 4)
    p = bools(r, (4, 6))

    def f(x, a, p):
        return (x.astype(jnp.int32), a.astype(jnp.float32), p.astype(jnp.float32),
                p.astype(jnp.int32), x.astype(bool), a.astype(bool))
    return f, [x, a, p]


# --- shapes --------------------------------------------------------------------------------

@program("broadcast", "broadcast_in_dim: outer product, broadcast_to, a scalar argument")
def _(r):
    x, y, z = normal(r, (4,)), normal(r, (6,)), normal(r, (4, 1))
    s = np.float32(1.75)

    def f(x, y, z, s):
        return x[:, None] * y[None, :], jnp.broadcast_to(z, (3, 4, 6)), s * x, z + y
    return f, [x, y, z, s]


@program("reshape_transpose", "reshape, transpose (several permutations), expand_dims/squeeze")
def _(r):
    x = normal(r, (2, 3, 4))

    def f(x):
        return (x.reshape(6, 4), x.reshape(2, 12).T, jnp.transpose(x, (2, 0, 1)), x.reshape(-1),
                jnp.swapaxes(x, 0, 2), jnp.expand_dims(x, 1).squeeze(1) + 1.0)
    return f, [x]


@program("concatenate", "concatenate (axes 0 and 1, i32), jnp.stack")
def _(r):
    x, y, z = normal(r, (3, 4)), normal(r, (3, 2)), normal(r, (2, 4))
    a, b = ints(r, (5,), 0, 9), ints(r, (3,), 0, 9)

    def f(x, y, z, a, b):
        return (jnp.concatenate([x, y], axis=1), jnp.concatenate([x, z, x], axis=0),
                jnp.stack([x, 2.0 * x], axis=1), jnp.concatenate([a, b]))
    return f, [x, y, z, a, b]


@program("slice_reverse", "slice with strides (x[1:5:2]), lax.slice, reverse (x[::-1])")
def _(r):
    x = normal(r, (8, 6))

    def f(x):
        return (x[1:5:2], x[:, 2:], x[::-1], x[..., ::-2], lax.slice(x, (2, 1), (7, 6), (2, 2)),
                x[-3:, 1:-1])
    return f, [x]


@program("iota", "iota: jnp.arange, broadcasted_iota, arange with a start and step")
def _(r):
    x, a = normal(r, (3, 12)), ints(r, (6,), -5, 5)

    def f(x, a):
        return (x * jnp.arange(12, dtype=jnp.float32), a + jnp.arange(6),
                lax.broadcasted_iota(jnp.int32, (3, 4), 1) * 10 + lax.broadcasted_iota(jnp.int32, (3, 4), 0),
                x[:, :4] + jnp.arange(2.0, 14.0, 3.0))
    return f, [x, a]


@program("one_hot", "jax.nn.one_hot (iota + compare + convert), one-hot matmul")
def _(r):
    labels = ints(r, (6,), 0, 10)
    labels[2] = 12  # out of range: an all-zero row
    w = normal(r, (10, 4))

    def f(labels, w):
        oh = jax.nn.one_hot(labels, 10)
        return oh, oh @ w
    return f, [labels, w]


# --- dot_general ---------------------------------------------------------------------------

@program("dot_matmul", "dot_general: plain 2-D matmul and a bias")
def _(r):
    x, w, b = normal(r, (8, 16)), weight(r, 16, 12), normal(r, (12,))
    return (lambda x, w, b: x @ w + b), [x, w, b]


@program("dot_batched", "dot_general with a batch dim: einsum('bij,bjk->bik')")
def _(r):
    x, y = normal(r, (3, 5, 8), 0.5), normal(r, (3, 8, 4), 0.5)
    return (lambda x, y: jnp.einsum('bij,bjk->bik', x, y)), [x, y]


@program("dot_nt", "dot_general contracting dim 1 with dim 1: einsum('ij,kj->ik'), and 'ji,jk->ik'")
def _(r):
    x, y, z = normal(r, (6, 8), 0.5), normal(r, (5, 8), 0.5), normal(r, (6, 4), 0.5)
    return (lambda x, y, z: (jnp.einsum('ij,kj->ik', x, y), jnp.einsum('ji,jk->ik', x, z))), [x, y, z]


@program("dot_attention_scores", "dot_general batch (b,h): einsum('bhqd,bhkd->bhqk') and 'bhqk,bhkd->bqhd'")
def _(r):
    q, k, v = normal(r, (2, 3, 5, 8), 0.4), normal(r, (2, 3, 6, 8), 0.4), normal(r, (2, 3, 6, 8))

    def f(q, k, v):
        s = jnp.einsum('bhqd,bhkd->bhqk', q, k)
        return s, jnp.einsum('bhqk,bhkd->bqhd', s, v)
    return f, [q, k, v]


@program("dot_vec", "dot_general: matrix-vector, vector-vector, 3-D x 2-D matmul")
def _(r):
    m, v, u, x, w = normal(r, (5, 8)), normal(r, (8,)), normal(r, (8,)), normal(r, (2, 3, 8)), weight(r, 8, 4)
    return (lambda m, v, u, x, w: (m @ v, jnp.dot(v, u), x @ w)), [m, v, u, x, w]


# --- convolution ---------------------------------------------------------------------------

def conv(x, w, strides, padding, dn, **kw):
    return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn, **kw)


@program("conv_nchw_valid", "convolution NCHW/OIHW, stride 1, VALID, plus a per-channel bias")
def _(r):
    x, w, b = normal(r, (2, 3, 9, 9)), normal(r, (4, 3, 3, 3), 0.2), normal(r, (4,))

    def f(x, w, b):
        return conv(x, w, (1, 1), 'VALID', ('NCHW', 'OIHW', 'NCHW')) + b[None, :, None, None]
    return f, [x, w, b]


@program("conv_nhwc_same_stride", "convolution NHWC/HWIO, strides 2, SAME padding")
def _(r):
    x, w = normal(r, (2, 9, 9, 3)), normal(r, (3, 3, 3, 5), 0.2)
    return (lambda x, w: conv(x, w, (2, 2), 'SAME', ('NHWC', 'HWIO', 'NHWC'))), [x, w]


@program("conv_explicit_dilated", "convolution with asymmetric explicit padding, strides (1,2), rhs dilation 2")
def _(r):
    x, w = normal(r, (1, 2, 10, 11)), normal(r, (3, 2, 3, 3), 0.25)

    def f(x, w):
        return conv(x, w, (1, 2), ((1, 2), (0, 1)), ('NCHW', 'OIHW', 'NCHW'), rhs_dilation=(2, 2))
    return f, [x, w]


@program("conv_depthwise", "depthwise convolution: feature_group_count = channels, NHWC, SAME")
def _(r):
    x, w = normal(r, (2, 7, 7, 6)), normal(r, (3, 3, 1, 6), 0.3)

    def f(x, w):
        return conv(x, w, (1, 1), 'SAME', ('NHWC', 'HWIO', 'NHWC'), feature_group_count=6)
    return f, [x, w]


@program("conv_grouped", "grouped convolution (2 groups), NCHW, stride 2, padding 1")
def _(r):
    x, w = normal(r, (1, 4, 8, 8)), normal(r, (6, 2, 3, 3), 0.3)

    def f(x, w):
        return conv(x, w, (2, 2), ((1, 1), (1, 1)), ('NCHW', 'OIHW', 'NCHW'), feature_group_count=2)
    return f, [x, w]


@program("conv_1d", "1-D convolution NWC/WIO, SAME, and NCW with stride 2")
def _(r):
    x, w, w2 = normal(r, (2, 10, 3)), normal(r, (3, 3, 4), 0.3), normal(r, (4, 3, 2), 0.3)

    def f(x, w, w2):
        return (conv(x, w, (1,), 'SAME', ('NWC', 'WIO', 'NWC')),
                conv(jnp.transpose(x, (0, 2, 1)), w2, (2,), 'VALID', ('NCW', 'OIW', 'NCW')))
    return f, [x, w, w2]


@program("conv_transpose", "lax.conv_transpose (lhs dilation), NHWC, strides 2, SAME")
def _(r):
    x, w = normal(r, (1, 4, 4, 3)), normal(r, (3, 3, 3, 2), 0.3)

    def f(x, w):
        return lax.conv_transpose(x, w, (2, 2), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    return f, [x, w]


# --- reductions ----------------------------------------------------------------------------

@program("reduce_sum_max_min", "reduce: sum over one axis and all, max, min over two axes, i32 sum")
def _(r):
    x, a = normal(r, (4, 6, 5)), ints(r, (4, 6), -9, 10)

    def f(x, a):
        return (jnp.sum(x, axis=1), jnp.sum(x), jnp.max(x, axis=2), jnp.min(x, axis=(0, 2)),
                jnp.sum(a, axis=0), jnp.max(a))
    return f, [x, a]


@program("reduce_prod_mean", "reduce: prod, mean, var (mean of squares)")
def _(r):
    x, y = 1.0 + normal(r, (4, 6), 0.1), normal(r, (3, 8))

    def f(x, y):
        return jnp.prod(x, axis=1), jnp.mean(y, axis=-1), jnp.mean(y), jnp.var(y, axis=0)
    return f, [x, y]


@program("argmax", "jnp.argmax / argmin: variadic reduce with a compare/select region")
def _(r):
    x = normal(r, (5, 7))

    def f(x):
        return jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(x), jnp.max(x, axis=1)
    return f, [x]


@program("any_all", "jnp.any / jnp.all: reduce with or / and on booleans")
def _(r):
    p, x = bools(r, (5, 6), 0.3), normal(r, (5, 6))

    def f(p, x):
        return jnp.any(p, axis=1), jnp.all(p | (x > -1.0), axis=0), jnp.any(x > 1.5), jnp.all(p)
    return f, [p, x]


@program("cumsum", "jnp.cumsum and cumprod along an axis")
def _(r):
    x = normal(r, (3, 8))
    return (lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(1.0 + 0.1 * x, axis=0))), [x]


# --- pooling -------------------------------------------------------------------------------

@program("maxpool", "reduce_window max: 2x2/2 VALID NCHW, 3x3/2 SAME NHWC")
def _(r):
    x, y = normal(r, (2, 3, 8, 8)), normal(r, (1, 7, 7, 4))

    def f(x, y):
        return (lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), 'VALID'),
                lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), 'SAME'))
    return f, [x, y]


@program("avgpool", "reduce_window add / window: count_include_pad true and false, explicit padding")
def _(r):
    x = normal(r, (1, 7, 7, 3))
    pad = ((0, 0), (1, 1), (1, 1), (0, 0))

    def f(x):
        s = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), pad)
        n = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), pad)
        return s / 9.0, s / n
    return f, [x]


def flax_pool(x, init, op, window, strides, padding):
    # flax.linen.pooling.pool: window and strides over the spatial dims of NHWC
    dims, strd = (1,) + window + (1,), (1,) + strides + (1,)
    if not isinstance(padding, str):
        padding = ((0, 0),) + tuple(padding) + ((0, 0),)
    return lax.reduce_window(x, init, op, dims, strd, padding)


@program("pool_flax", "flax-style max_pool / avg_pool (SAME and explicit padding) on NHWC")
def _(r):
    x = normal(r, (2, 6, 6, 4))

    def f(x):
        mp = flax_pool(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'SAME')
        ap = flax_pool(x, 0.0, lax.add, (3, 3), (1, 1), ((1, 1), (1, 1))) / 9.0
        return mp, ap
    return f, [x]


# --- indexing ------------------------------------------------------------------------------

@program("dynamic_slice", "lax.dynamic_slice with index arguments (one clamped), x[i] in a loop-free form")
def _(r):
    x = normal(r, (8, 8))

    def f(x, i, j):
        return lax.dynamic_slice(x, (i, j), (3, 4)), lax.dynamic_slice_in_dim(x, i, 2, axis=1)
    return f, [x, np.int32(2), np.int32(6)]


@program("dynamic_update_slice", "lax.dynamic_update_slice with index arguments")
def _(r):
    x, u = normal(r, (6, 8)), normal(r, (2, 3))

    def f(x, u, i, j):
        return lax.dynamic_update_slice(x, u, (i, j)), lax.dynamic_update_slice(x, u, (j, i))
    return f, [x, u, np.int32(3), np.int32(1)]


@program("gather_index_array", "gather: x[idx] (negative index included), x[idx2d], x[idx, jdx]")
def _(r):
    x = normal(r, (7, 5))
    idx = np.array([0, 3, -1, 6, 2], np.int32)
    idx2 = ints(r, (2, 3), 0, 7)
    jdx = ints(r, (5,), 0, 5)

    def f(x, idx, idx2, jdx):
        return x[idx], x[idx2], x[idx, jdx]
    return f, [x, idx, idx2, jdx]


@program("gather_take_axis1", "gather: jnp.take(x, idx, axis=1)")
def _(r):
    x, idx = normal(r, (4, 9)), ints(r, (6,), 0, 9)
    return (lambda x, idx: jnp.take(x, idx, axis=1)), [x, idx]


@program("gather_runtime_index", "x[i], x[:, i], x[i, j] with runtime scalar indices")
def _(r):
    x = normal(r, (6, 5))
    return (lambda x, i, j: (x[i], x[:, i], x[i, j])), [x, np.int32(4), np.int32(-2)]


@program("take_along_axis", "jnp.take_along_axis on axes 1 and 0")
def _(r):
    x, idx, idx0 = normal(r, (4, 6)), ints(r, (4, 3), 0, 6), ints(r, (2, 6), 0, 4)

    def f(x, idx, idx0):
        return jnp.take_along_axis(x, idx, axis=1), jnp.take_along_axis(x, idx0, axis=0)
    return f, [x, idx, idx0]


@program("scatter_set", "scatter: x.at[idx].set(v), x.at[:, j].set(scalar)")
def _(r):
    x, v = normal(r, (6, 4)), normal(r, (3, 4))
    idx = np.array([4, 0, 2], np.int32)

    def f(x, idx, v):
        return x.at[idx].set(v), x.at[:, 1].set(-7.0)
    return f, [x, idx, v]


@program("scatter_add", "scatter: x.at[idx].add(v) with duplicate indices, x.at[:, idx].add")
def _(r):
    x, v, w = normal(r, (6, 4)), normal(r, (5, 4)), normal(r, (6, 5))
    idx = np.array([1, 3, 1, 5, 3], np.int32)

    def f(x, idx, v, w):
        return x.at[idx].add(v), jnp.zeros((6, 4), jnp.float32).at[:, idx[:4]].add(w[:, :4])
    return f, [x, idx, v, w]


@program("scatter_max", "scatter: x.at[idx].max(v) and .min(v)")
def _(r):
    x, v = normal(r, (6, 4)), normal(r, (3, 4))
    idx = np.array([5, 2, 0], np.int32)
    return (lambda x, idx, v: (x.at[idx].max(v), x.at[idx].min(v))), [x, idx, v]


@program("pad_constant", "pad: jnp.pad with zeros and with a constant value")
def _(r):
    x = normal(r, (3, 4))
    return (lambda x: (jnp.pad(x, ((1, 2), (0, 3))), jnp.pad(x, 1, constant_values=-1.5))), [x]


@program("pad_interior_negative", "pad: lax.pad with interior and negative (cropping) padding")
def _(r):
    x = normal(r, (4, 5))

    def f(x):
        return lax.pad(x, np.float32(0.5), ((1, -1, 1), (-1, 2, 2))), lax.pad(x, np.float32(0.0), ((0, 0, 2), (-2, -1, 0)))
    return f, [x]


@program("pad_reflect_edge", "jnp.pad modes reflect and edge (slices, reverse, concatenate)")
def _(r):
    x = normal(r, (4, 5))
    return (lambda x: (jnp.pad(x, 2, mode='reflect'), jnp.pad(x, ((1, 0), (2, 1)), mode='edge'))), [x]


# --- control flow --------------------------------------------------------------------------

@program("while_fori", "while: lax.fori_loop with a constant trip count (5) and the counter used")
def _(r):
    x, w = normal(r, (4, 8)), weight(r, 8, 8)

    def f(x, w):
        def body(i, c):
            return jnp.tanh(c @ w) + 0.1 * i.astype(jnp.float32)
        return lax.fori_loop(0, 5, body, x)
    return f, [x, w]


@program("while_data_dependent", "while: lax.while_loop whose trip count depends on the data")
def _(r):
    x = normal(r, (3, 5), 2.0)

    def f(x):
        def cond(s):
            return (jnp.sum(s[0] * s[0]) > 1.0) & (s[1] < 100)

        def body(s):
            return s[0] * 0.75, s[1] + 1
        return lax.while_loop(cond, body, (x, jnp.int32(0)))
    return f, [x]


@program("cond_switch", "lax.cond on a runtime bool and lax.switch on a runtime index (case)")
def _(r):
    x = normal(r, (4, 5))

    def f(x, p, k):
        a = lax.cond(p, lambda v: v * 2.0, lambda v: -v, x)
        b = lax.switch(k, [lambda v: v + 1.0, lambda v: jnp.exp(v * 0.5), lambda v: v * v], x)
        return a, b
    return f, [x, np.bool_(True), np.int32(1)]


@program("rnn_scan", "Elman RNN over 6 steps with lax.scan (while), all hidden states returned")
def _(r):
    xs, h0 = normal(r, (6, 2, 8)), normal(r, (2, 16), 0.5)
    wx, wh, b = weight(r, 8, 16), weight(r, 16, 16), normal(r, (16,), 0.1)

    def f(xs, h0, wx, wh, b):
        def step(h, x):
            h = jnp.tanh(x @ wx + h @ wh + b)
            return h, h
        return lax.scan(step, h0, xs)
    return f, [xs, h0, wx, wh, b]


@program("rnn_fori", "GRU-like RNN step unrolled with lax.fori_loop, xs[t] dynamic indexing")
def _(r):
    xs, h0 = normal(r, (5, 2, 6)), normal(r, (2, 8), 0.5)
    wz, uz, wn, un = weight(r, 6, 8), weight(r, 8, 8), weight(r, 6, 8), weight(r, 8, 8)

    def f(xs, h0, wz, uz, wn, un):
        def body(t, h):
            z = jax.nn.sigmoid(xs[t] @ wz + h @ uz)
            n = jnp.tanh(xs[t] @ wn + (h * z) @ un)
            return (1.0 - z) * h + z * n
        return lax.fori_loop(0, xs.shape[0], body, h0)
    return f, [xs, h0, wz, uz, wn, un]


# --- networks and layers -------------------------------------------------------------------

def layer_norm(x, g, b, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


@program("layernorm", "LayerNorm and RMSNorm over the last axis")
def _(r):
    x, g, b = normal(r, (4, 16), 2.0) + 0.5, 1.0 + normal(r, (16,), 0.1), normal(r, (16,), 0.1)

    def f(x, g, b):
        rms = x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g
        return layer_norm(x, g, b), rms
    return f, [x, g, b]


@program("batchnorm_inference", "batch norm in inference form on NHWC with running statistics")
def _(r):
    x = normal(r, (2, 5, 5, 4))
    g, b, m, v = 1.0 + normal(r, (4,), 0.1), normal(r, (4,), 0.1), normal(r, (4,), 0.2), uniform(r, (4,), 0.5, 1.5)

    def f(x, g, b, m, v):
        return (x - m) / jnp.sqrt(v + 1e-5) * g + b
    return f, [x, g, b, m, v]


@program("jaxnn_activations", "jax.nn relu, relu6, silu, softplus, leaky_relu, elu, selu, log_sigmoid, hard_tanh")
def _(r):
    x = normal(r, (4, 16), 3.0)

    def f(x):
        n = jax.nn
        return (n.relu(x), n.relu6(x), n.silu(x), n.softplus(x), n.leaky_relu(x, 0.1), n.elu(x),
                n.selu(x), n.log_sigmoid(x), n.hard_tanh(x))
    return f, [x]


@program("softmax_masked", "softmax and log_softmax with a -inf mask (each row keeps one entry)")
def _(r):
    x, mask = normal(r, (4, 7), 2.0), bools(r, (4, 7), 0.6)
    mask[:, 0] = True

    def f(x, mask):
        s = jnp.where(mask, x, -jnp.inf)
        return jax.nn.softmax(s, axis=-1), jnp.where(mask, jax.nn.log_softmax(s, axis=-1), 0.0)
    return f, [x, mask]


@program("classifier_head", "linear -> softmax, log_softmax, argmax, one-hot cross-entropy loss")
def _(r):
    x, w, b, labels = normal(r, (6, 16)), weight(r, 16, 10), normal(r, (10,), 0.1), ints(r, (6,), 0, 10)

    def f(x, w, b, labels):
        logits = x @ w + b
        logp = jax.nn.log_softmax(logits)
        loss = -jnp.mean(jnp.sum(jax.nn.one_hot(labels, 10) * logp, axis=-1))
        return jax.nn.softmax(logits), logp, jnp.argmax(logits, axis=-1), loss
    return f, [x, w, b, labels]


@program("mlp", "3-layer MLP on (batch, seq, feature): matmul + bias, relu, tanh; weights are arguments")
def _(r):
    x = normal(r, (2, 4, 20))
    ps = [weight(r, 20, 32), normal(r, (32,), 0.1), weight(r, 32, 32), normal(r, (32,), 0.1),
          weight(r, 32, 5), normal(r, (5,), 0.1)]

    def f(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(x @ w1 + b1)
        h = jnp.tanh(h @ w2 + b2)
        return h @ w3 + b3
    return f, [x] + ps


@program("transformer_block", "pre-LN transformer block: LayerNorm, 4-head causal self-attention "
         "(softmax, mask), exact-GELU MLP, residuals; weights are arguments")
def _(r):
    B, T, D, F = 2, 8, 32, 64
    x = normal(r, (B, T, D))
    ps = [1.0 + normal(r, (D,), 0.1), normal(r, (D,), 0.1),
          weight(r, D, D), weight(r, D, D), weight(r, D, D), weight(r, D, D),
          1.0 + normal(r, (D,), 0.1), normal(r, (D,), 0.1),
          weight(r, D, F), normal(r, (F,), 0.1), weight(r, F, D), normal(r, (D,), 0.1)]

    def f(x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2):
        H = 4
        hd = D // H
        h = layer_norm(x, g1, be1)

        def heads(t):
            return t.reshape(B, T, H, hd).transpose(0, 2, 1, 3)
        q, k, v = heads(h @ wq), heads(h @ wk), heads(h @ wv)
        s = jnp.einsum('bhqd,bhkd->bhqk', q, k) / np.sqrt(hd).astype(np.float32)
        mask = jnp.tril(jnp.ones((T, T), bool))
        s = jnp.where(mask, s, jnp.finfo(jnp.float32).min)
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum('bhqk,bhkd->bhqd', p, v).transpose(0, 2, 1, 3).reshape(B, T, D)
        x = x + o @ wo
        h = layer_norm(x, g2, be2)
        return x + jax.nn.gelu(h @ w1 + b1, approximate=False) @ w2 + b2
    return f, [x] + ps


@program("convnet", "NCHW conv -> batchnorm (inference) -> relu -> maxpool -> conv -> layer norm -> "
         "relu -> avgpool -> global mean -> dense; weights are closed-over constants (hex)")
def _(r):
    x = normal(r, (2, 3, 16, 16))
    w1, w2 = normal(r, (8, 3, 3, 3), 0.25), normal(r, (16, 8, 3, 3), 0.15)
    g, be, m, v = 1.0 + normal(r, (8,), 0.1), normal(r, (8,), 0.1), normal(r, (8,), 0.1), uniform(r, (8,), 0.5, 1.5)
    wd, bd = weight(r, 16, 10), normal(r, (10,), 0.1)

    def f(x):
        dn = ('NCHW', 'OIHW', 'NCHW')
        y = conv(x, w1, (1, 1), 'SAME', dn)
        c = lambda t: t[None, :, None, None]
        y = (y - c(m)) * c(g / np.sqrt(v + 1e-5)) + c(be)
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), 'VALID')
        y = conv(y, w2, (1, 1), ((1, 1), (1, 1)), dn)
        mu = jnp.mean(y, axis=(1, 2, 3), keepdims=True)
        y = (y - mu) * lax.rsqrt(jnp.var(y, axis=(1, 2, 3), keepdims=True) + 1e-5)
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), 'VALID') / 4.0
        y = jnp.mean(y, axis=(2, 3))
        return y @ wd + bd
    return f, [x]


@program("convnet_nhwc", "NHWC conv (stride 2) -> relu6 -> depthwise conv -> silu -> global avg -> "
         "dense; weights are arguments")
def _(r):
    x = normal(r, (2, 12, 12, 3))
    w1, w2, wd = normal(r, (3, 3, 3, 8), 0.25), normal(r, (3, 3, 1, 8), 0.3), weight(r, 8, 4)

    def f(x, w1, w2, wd):
        y = jax.nn.relu6(conv(x, w1, (2, 2), 'SAME', ('NHWC', 'HWIO', 'NHWC')))
        y = jax.nn.silu(conv(y, w2, (1, 1), 'SAME', ('NHWC', 'HWIO', 'NHWC'), feature_group_count=8))
        return jnp.mean(y, axis=(1, 2)) @ wd
    return f, [x, w1, w2, wd]


# --- constants -----------------------------------------------------------------------------

@program("const_small", "small closed-over constants printed as dense<[...]> lists (f32, i32), scalars")
def _(r):
    c = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], np.float32)
    v = np.array([1, -2, 3], np.int32)
    x, a = normal(r, (4, 3)), ints(r, (4, 3), -5, 5)
    return (lambda x, a: (x * c[0] + c[1] * 2.5, a * v + 7)), [x, a]


@program("const_hex_weight", "closed-over 24x16 weight (hex dense constant) and a 16-vector bias")
def _(r):
    w, b = weight(r, 24, 16), normal(r, (16,), 0.1)
    x = normal(r, (3, 24))
    return (lambda x: jnp.tanh(x @ w + b)), [x]


@program("const_int_table", "closed-over 128-entry int32 table (hex) looked up by gather")
def _(r):
    table = ((np.arange(128) * 37) % 101 - 50).astype(np.int32)
    idx = ints(r, (10,), 0, 128)
    return (lambda idx: jnp.asarray(table)[idx] * 2), [idx]


@program("const_bool_mask", "closed-over 12x12 boolean mask (hex i1 constant) used by select and reduce")
def _(r):
    mask = bools(r, (12, 12))
    x = normal(r, (12, 12))
    return (lambda x: (jnp.where(mask, x, 0.0), jnp.sum(jnp.asarray(mask) & (x > 0), axis=1))), [x]


# --- generation ----------------------------------------------------------------------------

OP_RE_GENERIC = re.compile(r'"((?:stablehlo|chlo|func)\.[a-z_0-9]+)"')
OP_RE_PRETTY = re.compile(r'(?<![#\w.!])((?:stablehlo|chlo)\.[a-z_0-9]+)|\b(call) @')


def ops_in(text, generic):
    if generic:
        ops = set(OP_RE_GENERIC.findall(text))
    else:
        ops = set()
        for a, b in OP_RE_PRETTY.findall(text):
            ops.add(a or "func.call")
    ops.discard("func.func")
    ops.discard("func.return")
    return sorted(ops)


def generic_form(lowered):
    module = lowered.compiler_ir('stablehlo')
    with module.context:
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)


def check_array(what, a):
    if a.dtype not in (np.float32, np.int32, np.bool_):
        raise ValueError(f"{what}: dtype {a.dtype} (only float32, int32, bool)")
    if a.nbytes > MAX_TENSOR_BYTES:
        raise ValueError(f"{what}: {a.nbytes} bytes > {MAX_TENSOR_BYTES}")
    if a.dtype == np.float32 and not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: not finite")


def generate_one(name, builder, out):
    r = np.random.default_rng(zlib.crc32(name.encode()))
    f, args = builder(r)
    args = [np.asarray(a) for a in args]
    for k, a in enumerate(args):
        check_array(f"{name} in.{k}", a)
    jitted = jax.jit(f, keep_unused=True)
    lowered = jitted.lower(*args)
    text = lowered.as_text()
    sig = next((l for l in text.splitlines() if '@main(' in l), '')
    nargs = len(re.findall(r'%arg\d+:', sig))
    if nargs != len(args):
        raise ValueError(f"{name}: main takes {nargs} arguments, {len(args)} given (hoisted constants?)")
    for bad in ('__elided__', 'custom_call', 'dense_resource'):
        if bad in text:
            raise ValueError(f"{name}: the module contains {bad}")
    outs = [np.asarray(o) for o in jax.tree_util.tree_leaves(jitted(*args))]
    for k, o in enumerate(outs):
        check_array(f"{name} out.{k}", o)
    try:
        generic = generic_form(lowered)
    except Exception as e:  # noqa: BLE001 - report and keep the pretty form
        print(f"  {name}: no generic form: {type(e).__name__}: {e}")
        generic = None
    with open(os.path.join(out, f"{name}.stablehlo.mlir"), "w") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
    if generic is not None:
        with open(os.path.join(out, f"{name}.generic.mlir"), "w") as fh:
            fh.write(generic if generic.endswith("\n") else generic + "\n")
    for k, a in enumerate(args):
        np.save(os.path.join(out, f"{name}.in.{k}.npy"), a)
    for k, o in enumerate(outs):
        np.save(os.path.join(out, f"{name}.out.{k}.npy"), o)
    return ops_in(generic, True) if generic is not None else ops_in(text, False)


def generate(out, only):
    global jax, jnp, lax
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax as jax_mod
    jax = jax_mod
    jax.config.update("jax_enable_x64", False)
    # Closed-over arrays must stay in the module as constants, not become extra arguments.
    try:
        jax.config.update("jax_use_simplified_jaxpr_constants", False)
    except Exception:  # noqa: BLE001 - option absent in this version
        pass
    import jax.numpy as jnp_mod
    import jax.scipy.special  # noqa: F401
    from jax import lax as lax_mod
    jnp, lax = jnp_mod, lax_mod
    import jaxlib
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, backend {jax.default_backend()}")
    os.makedirs(out, exist_ok=True)
    failed, seen = [], set()
    for name, _desc, builder in PROGRAMS:
        if only and name not in only:
            continue
        try:
            ops = generate_one(name, builder, out)
        except Exception as e:  # noqa: BLE001 - report every failing program
            failed.append(name)
            print(f"FAILED {name}: {type(e).__name__}: {e}")
            continue
        seen.update(ops)
        print(f"{name}: {' '.join(o.split('.', 1)[1] if o.startswith('stablehlo.') else o for o in ops)}")
    with open(os.path.join(out, "GENERATED_BY.txt"), "w") as fh:
        fh.write(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, golden values on "
                 f"{jax.default_backend()}\n")
    missing = [o for o in REQUIRED_OPS if o not in seen]
    print(f"{len(PROGRAMS) - len(failed)} programs written, {len(failed)} failed {failed}")
    print(f"required ops missing: {missing}")
    return 1 if failed or missing else 0


# --- README --------------------------------------------------------------------------------

README_HEAD = """# StableHLO test programs

`programs/` holds small JAX programs lowered to StableHLO, with their inputs and the outputs
JAX computed on CPU. They are written by `gen_programs.py` (JAX is needed only to regenerate
them) and run by `kiln conform tests/stablehlo/programs` (ctest: `conform-cpu-ref-stablehlo`,
`conform-vulkan-stablehlo`, against `tests/conformance/{cpu-ref,vulkan}.stablehlo.txt`).

Per program NAME:

| file | content |
|---|---|
| `NAME.stablehlo.mlir` | `jax.jit(f, keep_unused=True).lower(*args).as_text()`: the pretty form, as JAX prints it |
| `NAME.generic.mlir` | the same module in MLIR's generic op form (`compiler_ir('stablehlo')`, `get_asm(print_generic_op_form=True)`) |
| `NAME.in.K.npy` | argument K (`%argK`); every argument is one float32, int32 or bool array |
| `NAME.out.K.npy` | output K, computed by JAX on CPU (float32 arithmetic, x64 off) |

Inputs are drawn from numpy generators seeded with the program's name and scaled so outputs
are O(1). Closed-over numpy arrays become `stablehlo.constant` (lists below 100 elements,
hex strings above). Generated with: {version}

Regenerate (needs jax; writes the golden values on CPU), then refresh this file:

    JAX_PLATFORMS=cpu python3 tests/stablehlo/gen_programs.py --out tests/stablehlo/programs
    /usr/bin/python3 tests/stablehlo/gen_programs.py --readme   # numpy only

What JAX 0.11 emits, worth knowing when reading the tables: `lax.logistic` and
`jax.nn.sigmoid` lower to `1 / (1 + exp(-x))` on every platform, so no program contains
`stablehlo.logistic`; erf is `chlo.erf` (and exact GELU `chlo.erfc`), `jnp.var` uses
`chlo.square`; jit-wrapped jnp helpers (`relu`, `clip`, `_where`, ...) become private functions
reached by `func.call`; `lax.fori_loop` and `lax.scan` become `stablehlo.while`, `lax.cond` /
`lax.switch` `stablehlo.case`. No program contains `custom_call` (kiln must refuse it).
Each `.generic.mlir` is its own conformance test, named `NAME.generic`.

The tables below are written by `--readme` from the checked-in files (ops are read from the
generic form; `stablehlo.` is left out).

"""


def short(op):
    return op.split('.', 1)[1] if op.startswith('stablehlo.') else op


def write_readme():
    pdir = os.path.join(HERE, "programs")
    version = "unknown"
    vf = os.path.join(pdir, "GENERATED_BY.txt")
    if os.path.exists(vf):
        version = open(vf).read().strip()
    rows, by_op = [], {}
    for name, desc, _ in PROGRAMS:
        g, p = os.path.join(pdir, f"{name}.generic.mlir"), os.path.join(pdir, f"{name}.stablehlo.mlir")
        if os.path.exists(g):
            ops = ops_in(open(g).read(), True)
        elif os.path.exists(p):
            ops = ops_in(open(p).read(), False)
        else:
            continue
        rows.append((name, desc, ops))
        for o in ops:
            by_op.setdefault(o, []).append(name)
    lines = [README_HEAD.replace("{version}", version)]
    lines.append(f"## Programs ({len(rows)})\n\n| program | covers | ops |\n|---|---|---|\n")
    for name, desc, ops in rows:
        lines.append(f"| `{name}` | {desc} | {' '.join(short(o) for o in ops)} |\n")
    lines.append(f"\n## Op coverage ({len(by_op)} ops)\n\n| op | programs | required |\n|---|---|---|\n")
    for op in sorted(by_op, key=short):
        names = by_op[op]
        lines.append(f"| `{op}` | {len(names)}: {', '.join(names)} | "
                     f"{'yes' if op in REQUIRED_OPS else ''} |\n")
    missing = [o for o in REQUIRED_OPS if o not in by_op]
    lines.append(f"\nRequired ops missing from every program: {', '.join(missing) or 'none'}.\n")
    with open(os.path.join(HERE, "README.md"), "w") as fh:
        fh.write("".join(lines))
    print(f"README.md: {len(rows)} programs, {len(by_op)} ops, missing required: {missing}")
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the programs to this folder")
    ap.add_argument("--only", nargs="*", default=[], help="generate only these programs")
    ap.add_argument("--readme", action="store_true", help="rewrite README.md from programs/")
    a = ap.parse_args()
    if a.readme:
        return write_readme()
    if not a.out:
        ap.error("--out or --readme")
    return generate(a.out, set(a.only))


if __name__ == "__main__":
    sys.exit(main())
