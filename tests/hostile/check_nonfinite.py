#!/usr/bin/python3
"""check_nonfinite.py OUTDIR A.npy B.npy: checks kiln's outputs of nonfinite.onnx.

The expected values are computed here with numpy (IEEE semantics, as ONNX's reference does).
NaN must appear exactly where numpy has NaN, +-Inf exactly where numpy has the same infinity,
and finite values must agree to rtol 1e-4. Prints one line per output; exits 1 on a mismatch.
"""
import os
import sys

import numpy as np


def softmax(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)


def expected(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return {
        'add': a64 + b64,
        'mul': a64 * b64,
        'div': a64 / b64,
        'exp': np.exp(a64),
        'sqrt': np.sqrt(a64),
        'relu': np.maximum(a64, 0),
        'sigmoid': 1 / (1 + np.exp(-a64)),
        'tanh': np.tanh(a64),
        'rsum': np.sum(a64, axis=1),
        'rmax': np.max(a64, axis=1),
        'softmax': softmax(a64),
        'matmul': a64 @ b64.T,
        'max': np.maximum(a64, b64),
        'min': np.minimum(a64, b64),
        'log': np.log(a64),
        'abs': np.abs(a64),
        'rmin': np.min(a64, axis=1),
    }


def main():
    out, a_path, b_path = sys.argv[1:4]
    with np.errstate(all='ignore'):
        want = expected(np.load(a_path), np.load(b_path))
    bad = 0
    for name, w in want.items():
        got = np.load(os.path.join(out, name + '.npy')).astype(np.float64)
        problems = []
        if got.shape != w.shape:
            problems.append('shape %s, expected %s' % (got.shape, w.shape))
        else:
            if not np.array_equal(np.isnan(got), np.isnan(w)):
                problems.append('NaN at %s, expected at %s' % (np.argwhere(np.isnan(got)).tolist(),
                                                                np.argwhere(np.isnan(w)).tolist()))
            for sign, label in [(1, '+Inf'), (-1, '-Inf')]:
                if not np.array_equal(got == sign * np.inf, w == sign * np.inf):
                    problems.append('%s at %s, expected at %s' % (
                        label, np.argwhere(got == sign * np.inf).tolist(),
                        np.argwhere(w == sign * np.inf).tolist()))
            fin = np.isfinite(w) & np.isfinite(got)
            if not np.allclose(got[fin], w[fin], rtol=1e-4, atol=1e-6):
                problems.append('finite values differ: %s vs %s' % (got[fin], w[fin]))
        nonfinite = int(np.sum(~np.isfinite(w))) if got.shape == w.shape else -1
        print('%s: %s (%d non-finite values expected)' % (
            name, 'MISMATCH ' + '; '.join(problems) if problems else 'ok', nonfinite))
        bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
