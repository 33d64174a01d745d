#!/usr/bin/python3
"""Writes the models and input of narrow_round.test: Cast of f32 to every float8 / float4 /
e8m0 type, with saturate 1 and 0 (e8m0: each round_mode), and QuantizeLinear to float8 / float4.

  gen_narrow_round.py OUTDIR

The input holds every float16 value as f32 (inf, NaN, -0 and the subnormals included) and the
f32 neighbours of each (where the rounding of a float8 / float4 type changes: the midpoints
between two of their values are float16 values), and the powers of two from 2^-130 to 2^128
with their neighbours and 1.5 times them (e8m0's steps). The test compares a compiled device's
bit patterns with cpu-ref's, which follow ONNX (unit-tested in tests/unit/narrow_test.cpp).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

# ONNX dtype numbers (python3-onnx 1.12 has no names for them).
TYPES = {'f8e4m3fn': 17, 'f8e4m3fnuz': 18, 'f8e5m2': 19, 'f8e5m2fnuz': 20, 'f4e2m1': 23,
         'f8e8m0': 24}


def values():
    np.seterr(all='ignore')
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    p = np.ldexp(np.float32(1), np.arange(-130, 129)).astype(np.float32)
    p = np.concatenate([p, -p, p * np.float32(1.5), p * np.float32(0.75)])
    base = np.concatenate([h, p])
    return np.concatenate([base, np.nextafter(base, np.float32(np.inf)),
                           np.nextafter(base, np.float32(-np.inf))]).astype(np.float32)


def save(out, name, node, n, out_type, inits=(), opset=23):
    g = helper.make_graph([node], name, [helper.make_tensor_value_info('x', 1, [n])],
                          [helper.make_tensor_value_info('y', out_type, [n])], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    v = values()
    np.save(os.path.join(out, 'x.npy'), v)
    n = len(v)
    names = []
    for t, code in TYPES.items():
        if t == 'f8e8m0':
            for mode in ['up', 'down', 'nearest']:
                for sat in [1, 0]:
                    name = f'cast_{t}_{mode}_sat{sat}'
                    save(out, name, helper.make_node('Cast', ['x'], ['y'], to=code, saturate=sat,
                                                     round_mode=mode), n, code, opset=24)
                    names.append(name)
            continue
        for sat in [1, 0]:
            name = f'cast_{t}_sat{sat}'
            save(out, name, helper.make_node('Cast', ['x'], ['y'], to=code, saturate=sat), n, code)
            names.append(name)
        # QuantizeLinear with scale 2 and a zero point of 1 (0.5 for float4) of the type.
        zp = TensorProto()
        zp.name, zp.data_type = 'zp', code
        zp.int32_data.append({'f8e4m3fn': 0x38, 'f8e4m3fnuz': 0x40, 'f8e5m2': 0x3C,
                              'f8e5m2fnuz': 0x40, 'f4e2m1': 0x1}[t])
        s = helper.make_tensor('s', 1, [], [2.0])
        for sat in [1, 0]:
            name = f'quantize_{t}_sat{sat}'
            save(out, name, helper.make_node('QuantizeLinear', ['x', 's', 'zp'], ['y'],
                                             saturate=sat), n, code, [s, zp])
            names.append(name)
    with open(os.path.join(out, 'names.txt'), 'w') as f:
        f.write('\n'.join(names) + '\n')


if __name__ == '__main__':
    main(sys.argv[1])
