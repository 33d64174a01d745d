#!/usr/bin/python3
"""Writes the hostile inputs of tests/hostile into a folder (lit's Output dir).

  make_cases.py OUTDIR               every .onnx, .npy and external-data case
  make_cases.py corrupt IN OUT KIND  a damaged copy of the artifact IN (KIND: see corrupt())

Each model is tiny and valid except for the one thing its name says is wrong, so the error
kiln reports can only come from that. Files that protobuf cannot build through the onnx helpers
(10,000 nested Ifs, a varint cut in half) are encoded by hand.
"""
import hashlib
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, dtype=F32, shape=(2,)):
    return helper.make_tensor_value_info(name, dtype, list(shape) if shape is not None else None)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8, value_info=()):
    g = helper.make_graph(list(nodes), 'g', list(inputs), list(outputs), list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = ir
    return m


def save(out, name, m):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(m.SerializeToString() if not isinstance(m, bytes) else m)


def raw_tensor(name, dtype, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def typed_tensor(name, dtype, dims, field, values):
    """A TensorProto with `values` in the typed field (float_data, ...), whatever dims say."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    getattr(t, field).extend(values)
    return t


def add_with(init):
    """y = x + W for a 2-element x and the initializer W."""
    return model([helper.make_node('Add', ['x', init.name], ['y'], name='add')],
                 [vi('x')], [vi('y')], [init])


def shape_op_model(op, shape, x_shape=(2,)):
    """y = op(x, shape-constant): Reshape/Expand with an absurd shape operand."""
    shp = helper.make_tensor('shape', I64, [len(shape)], list(shape))
    node = helper.make_node(op, ['x', 'shape'], ['y'], name=op.lower())
    return model([node], [vi('x', shape=x_shape)], [vi('y', shape=None)], [shp])


# ---- hand-written protobuf (for nesting deeper than the python protobuf can recurse) --------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def nested_if(depth):
    """A model whose graph is If(c) { If(c) { ... Identity(x) } } `depth` levels deep."""
    leaf = helper.make_graph([helper.make_node('Identity', ['x'], ['leaf_y'])], 'leaf', [],
                             [vi('leaf_y')]).SerializeToString()
    # GraphProto: node = 1, output = 12. NodeProto: input 1, output 2, name 3, op_type 4,
    # attribute 5. AttributeProto: name 1, g 6, type 20 (GRAPH = 5).
    prefixes = []
    inner_len = len(leaf)
    for level in range(depth):
        out = 'y%d' % level
        else_attr = field_bytes(1, b'else_branch') + field_varint(20, 5) + field_bytes(6, leaf)
        then_head = field_bytes(1, b'then_branch') + field_varint(20, 5)
        then_attr_len = len(then_head) + len(varint(6 << 3 | 2)) + len(varint(inner_len)) + inner_len
        node_head = (field_bytes(1, b'c') + field_bytes(2, out.encode()) + field_bytes(4, b'If') +
                     field_bytes(5, else_attr) + varint(5 << 3 | 2) + varint(then_attr_len) +
                     then_head + varint(6 << 3 | 2) + varint(inner_len))
        node_len = len(node_head) + inner_len
        graph_head = (field_bytes(2, b'g%d' % level) + field_bytes(12, vi(out).SerializeToString()) +
                      varint(1 << 3 | 2) +
                      varint(node_len) + node_head)
        prefixes.append(graph_head)
        inner_len = len(graph_head) + inner_len
    top = b''.join(reversed(prefixes)) + leaf
    # The outermost graph also declares the inputs c and x and a name.
    top = (field_bytes(11, vi('c', TensorProto.BOOL, ()).SerializeToString()) +
           field_bytes(11, vi('x').SerializeToString()) + top)
    opset = helper.make_opsetid('', 17).SerializeToString()
    return field_varint(1, 8) + field_bytes(8, opset) + field_bytes(7, top)


# ---- .npy files ----------------------------------------------------------------------------

def npy(header, data=b'', version=1):
    h = header.encode('latin1')
    h += b' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + b'\n'
    if version == 1:
        pre = b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h))
    else:
        pre = b'\x93NUMPY' + bytes([version, 0]) + struct.pack('<I', len(h))
    return pre + h + data


def write_npys(out):
    ok = lambda shape, descr='<f4': "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    cases = {
        'npy_huge_shape.npy': npy(ok('(1000000, 1000000, 1000000)'), b'\0' * 8),
        'npy_overflow_digits.npy': npy(ok('(99999999999999999999999,)'), b'\0' * 8),
        'npy_negative_dim.npy': npy(ok('(-2,)'), b'\0' * 8),
        'npy_bad_descr.npy': npy(ok('(2,)', 'garbage'), b'\0' * 8),
        'npy_complex.npy': npy(ok('(2,)', '<c8'), b'\0' * 16),
        'npy_object.npy': npy(ok('(2,)', '|O'), b'\0' * 16),
        'npy_big_endian.npy': npy(ok('(2,)', '>f4'), b'\0' * 8),
        'npy_fortran.npy': npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", b'\0' * 8),
        'npy_truncated_data.npy': npy(ok('(2,)'), b'\0' * 5),
        'npy_no_shape.npy': npy("{'descr': '<f4', 'fortran_order': False, }", b'\0' * 8),
        'npy_shape_not_tuple.npy': npy(ok('7'), b'\0' * 28),
        'npy_bad_version.npy': npy(ok('(2,)'), b'\0' * 8, version=9),
        'npy_header_past_end.npy': b'\x93NUMPY\x01\x00' + struct.pack('<H', 60000) + b"{'descr'",
        'npy_v2_huge_header.npy': b'\x93NUMPY\x02\x00' + struct.pack('<I', 0xffffffff) + b"{}",
        'npy_wrong_dtype.npy': npy(ok('(2,)', '<i4'), b'\0' * 8),
        'npy_wrong_shape.npy': npy(ok('(3,)'), b'\0' * 12),
    }
    for name, data in cases.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
    # TensorProto (.pb) inputs.
    pbs = {
        'pb_garbage.pb': b'\xff' * 64,
        'pb_raw_short.pb': raw_tensor('x', F32, [2], b'\0' * 5).SerializeToString(),
        'pb_negative_dim.pb': raw_tensor('x', F32, [-2], b'').SerializeToString(),
    }
    t = raw_tensor('x', F32, [2], b'')
    t.ClearField('raw_data')
    t.data_location = TensorProto.EXTERNAL
    for k, v in [('location', '../secret.bin')]:
        e = t.external_data.add()
        e.key, e.value = k, v
    pbs['pb_external_outside.pb'] = t.SerializeToString()
    os.makedirs(os.path.join(out, 'pb'), exist_ok=True)
    for name, data in pbs.items():
        with open(os.path.join(out, 'pb', name), 'wb') as f:
            f.write(data)
    # Not regular files: opening a FIFO blocks, /dev/zero never ends.
    for name in ['fifo.npy', 'fifo.pb', 'fifo.kiln', 'fifo.onnx', 'fifo.mlir']:
        os.mkfifo(os.path.join(out, name))
    os.symlink('/dev/zero', os.path.join(out, 'zero.npy'))
    os.symlink('/dev/zero', os.path.join(out, 'zero.kiln'))
    os.symlink('/dev/zero', os.path.join(out, 'zero.mlir'))
    np.save(os.path.join(out, 'x2.npy'), np.array([1, 2], np.float32))
    np.save(os.path.join(out, 'x4.npy'), np.arange(4, dtype=np.float32))
    np.save(os.path.join(out, 'x1.npy'), np.ones(1, np.float32))
    np.save(os.path.join(out, 'c_true.npy'), np.array(True))
    np.save(os.path.join(out, 'shape_4k.npy'), np.array([4, 1024], np.int64))
    np.save(os.path.join(out, 'shape_2p40.npy'), np.array([1 << 20, 1 << 20], np.int64))


# ---- models --------------------------------------------------------------------------------

def write_models(out):
    w2 = helper.make_tensor('W', F32, [2], [1.0, 2.0])
    ok = add_with(w2)
    save(out, 'ok_add.onnx', ok)
    data = ok.SerializeToString()
    save(out, 'garbage.onnx', bytes((i * 197 + 13) % 256 for i in range(4096)))
    save(out, 'empty.onnx', b'')
    save(out, 'text.onnx', b'ir_version: 8\ngraph { node { op_type: "Add" } }\n')
    save(out, 'truncated_tiny.onnx', data[:len(data) * 2 // 3])
    # A length-delimited field whose varint length is cut off after its continuation byte.
    save(out, 'truncated_varint.onnx', b'\x3a\xff')

    # Shapes in value_info and graph inputs.
    save(out, 'input_negative_dim.onnx',
         model([helper.make_node('Relu', ['x'], ['y'])], [vi('x', shape=(2, -3))], [vi('y', shape=None)]))
    save(out, 'input_overflow_dims.onnx',
         model([helper.make_node('Relu', ['x'], ['y'])], [vi('x', shape=(1 << 40, 1 << 40))],
               [vi('y', shape=None)]))
    save(out, 'input_huge_dims.onnx',
         model([helper.make_node('Relu', ['x'], ['y'])], [vi('x', shape=(1 << 20, 1 << 20))],
               [vi('y', shape=None)]))
    # Only the shape of the huge input is used: the import is fine, its buffer is not.
    save(out, 'shape_of_huge_input.onnx',
         model([helper.make_node('Shape', ['x'], ['y'])], [vi('x', shape=(1 << 20, 1 << 20))],
               [vi('y', I64, (2,))]))
    save(out, 'value_info_negative.onnx',
         model([helper.make_node('Relu', ['x'], ['r']), helper.make_node('Neg', ['r'], ['y'])],
               [vi('x')], [vi('y')], value_info=[vi('r', shape=(-5,))]))

    # Initializers.
    save(out, 'init_negative_dim.onnx', add_with(raw_tensor('W', F32, [-2], b'\0' * 8)))
    save(out, 'init_overflow_dims.onnx', add_with(raw_tensor('W', F32, [1 << 40, 1 << 40], b'\0' * 8)))
    save(out, 'init_huge_dims.onnx', add_with(raw_tensor('W', F32, [1 << 30, 1 << 30], b'\0' * 8)))
    save(out, 'init_raw_short.onnx', add_with(raw_tensor('W', F32, [2], b'\0' * 7)))
    save(out, 'init_raw_long.onnx', add_with(raw_tensor('W', F32, [2], b'\0' * 12)))
    t = typed_tensor('W', F32, [2], 'float_data', [1.0, 2.0, 3.0])
    save(out, 'init_float_data_count.onnx', add_with(t))
    t = typed_tensor('W', TensorProto.INT32, [3], 'int32_data', [1, 2])
    save(out, 'init_int32_data_count.onnx',
         model([helper.make_node('Cast', ['W'], ['y'], to=F32)], [], [vi('y', shape=(3,))], [t]))
    t = typed_tensor('W', TensorProto.DOUBLE, [2, 2], 'double_data', [1.0])
    save(out, 'init_double_data_count.onnx',
         model([helper.make_node('Cast', ['W'], ['y'], to=F32)], [], [vi('y', shape=(2, 2))], [t]))
    t = typed_tensor('W', I64, [4], 'int64_data', [])
    save(out, 'init_int64_data_missing.onnx',
         model([helper.make_node('Cast', ['W'], ['y'], to=F32)], [], [vi('y', shape=(4,))], [t]))
    t = helper.make_tensor('W', TensorProto.STRING, [1], [b'hi'])
    save(out, 'init_string.onnx',
         model([helper.make_node('Identity', ['W'], ['y'])], [], [vi('y', TensorProto.STRING, (1,))], [t]))
    t = typed_tensor('W', 1234, [2], 'float_data', [1.0, 2.0])
    save(out, 'init_unknown_dtype.onnx', add_with(t))
    # 3000 floats: refused when KILN_MAX_TENSOR_BYTES is 4096.
    big = helper.make_tensor('W', F32, [3000], np.zeros(3000, np.float32).tobytes(), raw=True)
    save(out, 'init_12k.onnx',
         model([helper.make_node('ReduceSum', ['W'], ['y'], keepdims=0)], [], [vi('y', shape=())], [big]))

    # Shape operands whose product is absurd or overflows int64.
    save(out, 'reshape_overflow.onnx', shape_op_model('Reshape', [1 << 40, 1 << 40, 1 << 40]))
    save(out, 'reshape_negative.onnx', shape_op_model('Reshape', [-7, 2]))
    save(out, 'reshape_two_minus_one.onnx', shape_op_model('Reshape', [-1, -1]))
    save(out, 'expand_overflow.onnx', shape_op_model('Expand', [1 << 32, 1 << 32, 1 << 32], (1,)))
    save(out, 'expand_2p40.onnx', shape_op_model('Expand', [1 << 20, 1 << 20], (1,)))
    save(out, 'expand_negative.onnx', shape_op_model('Expand', [-4, 2]))
    cos = lambda shape: model(
        [helper.make_node('ConstantOfShape', ['shape'], ['y'], name='cos',
                          value=helper.make_tensor('v', F32, [1], [1.0]))],
        [], [vi('y', shape=None)], [helper.make_tensor('shape', I64, [len(shape)], shape)])
    save(out, 'cos_2p40.onnx', cos([1 << 40]))
    save(out, 'cos_overflow.onnx', cos([1 << 62, 1 << 62]))
    save(out, 'cos_negative.onnx', cos([3, -1]))
    save(out, 'cos_4k.onnx', cos([4, 1024]))
    # The shape is a graph input: the result's dims are only known at run time.
    save(out, 'cos_dynamic.onnx', model(
        [helper.make_node('ConstantOfShape', ['shape'], ['y'], name='cos',
                          value=helper.make_tensor('v', F32, [1], [1.0]))],
        [vi('shape', I64, (2,))], [vi('y', shape=None)]))
    save(out, 'tile_overflow.onnx', model(
        [helper.make_node('Tile', ['x', 'r'], ['y'], name='tile')], [vi('x')], [vi('y', shape=None)],
        [helper.make_tensor('r', I64, [1], [1 << 62])]))
    save(out, 'pad_huge.onnx', model(
        [helper.make_node('Pad', ['x', 'p'], ['y'], name='pad')], [vi('x')], [vi('y', shape=None)],
        [helper.make_tensor('p', I64, [2], [1 << 62, 1 << 62])]))
    # Shape arithmetic of hostile dims and attributes overflowing int64 (shape_overflow.test).
    i64max = (1 << 63) - 1
    w3 = helper.make_tensor('W', F32, [1, 1, 3, 3], [0.0] * 9)
    conv = lambda op, **attrs: model(
        [helper.make_node(op, ['x', 'W'], ['y'], name='conv', **attrs)],
        [vi('x', shape=(1, 1, 4, 4))], [vi('y', shape=None)], [w3])
    save(out, 'conv_pads_overflow.onnx', conv('Conv', pads=[0, 0, i64max, i64max]))
    save(out, 'conv_dilation_overflow.onnx', conv('Conv', dilations=[i64max, 1]))
    save(out, 'convt_output_padding_overflow.onnx', conv('ConvTranspose', output_padding=[i64max, 0]))
    save(out, 'maxpool_pads_overflow.onnx', model(
        [helper.make_node('MaxPool', ['x'], ['y'], name='pool', kernel_shape=[2, 2],
                          pads=[i64max, 0, 1, 0])],
        [vi('x', shape=(1, 1, 4, 4))], [vi('y', shape=None)]))
    save(out, 'concat_overflow.onnx', model(
        [helper.make_node('Concat', ['a', 'b'], ['y'], name='concat', axis=0)],
        [vi('a', shape=(1 << 62, 1)), vi('b', shape=(1 << 62, 1))], [vi('y', shape=None)]))
    save(out, 'd2s_blocksize_overflow.onnx', model(
        [helper.make_node('DepthToSpace', ['x'], ['y'], name='d2s', blocksize=1 << 32)],
        [vi('x', shape=(1, 4, 2, 2))], [vi('y', shape=None)]))
    save(out, 'expand_shape_rank.onnx', model(
        [helper.make_node('Expand', ['x', 'shape'], ['y'], name='expand')],
        [vi('x', shape=(1,)), vi('shape', I64, (1 << 40,))], [vi('y', shape=None)]))

    # Graph structure.
    save(out, 'cycle.onnx', model(
        [helper.make_node('Add', ['x', 'b'], ['a'], name='n1'),
         helper.make_node('Relu', ['a'], ['b'], name='n2')], [vi('x')], [vi('b')]))
    save(out, 'self_loop.onnx', model(
        [helper.make_node('Add', ['x', 'a'], ['a'], name='loop')], [vi('x')], [vi('a')]))
    save(out, 'duplicate_output.onnx', model(
        [helper.make_node('Relu', ['x'], ['y'], name='first'),
         helper.make_node('Neg', ['x'], ['y'], name='second')], [vi('x')], [vi('y')]))
    save(out, 'output_shadows_input.onnx', model(
        [helper.make_node('Relu', ['x'], ['x'], name='relu')], [vi('x')], [vi('x')]))
    save(out, 'output_shadows_init.onnx', model(
        [helper.make_node('Relu', ['x'], ['W'], name='relu'),
         helper.make_node('Add', ['x', 'W'], ['y'], name='add')], [vi('x')], [vi('y')], [w2]))
    save(out, 'duplicate_input.onnx', model(
        [helper.make_node('Add', ['x', 'x'], ['y'])], [vi('x'), vi('x')], [vi('y')]))
    save(out, 'duplicate_init.onnx', model(
        [helper.make_node('Add', ['x', 'W'], ['y'])], [vi('x')], [vi('y')],
        [w2, helper.make_tensor('W', F32, [2], [5.0, 6.0])]))
    # Legal: an input that also has an initializer (IR version 3: the initializer is its value).
    save(out, 'input_is_init_ir3.onnx', model(
        [helper.make_node('Add', ['x', 'W'], ['y'])], [vi('x'), vi('W')], [vi('y')], [w2], opset=9, ir=3))
    save(out, 'undefined_input.onnx', model(
        [helper.make_node('Add', ['x', 'bias'], ['y'], name='add')], [vi('x')], [vi('y')]))
    save(out, 'output_never_produced.onnx', model(
        [helper.make_node('Relu', ['x'], ['y'])], [vi('x')], [vi('z')]))
    # No graph outputs at all: nothing to compute, refused by name (not an empty artifact).
    save(out, 'no_outputs.onnx', model(
        [helper.make_node('Relu', ['x'], ['y'], name='relu')], [vi('x')], []))
    save(out, 'unknown_op.onnx', model(
        [helper.make_node('FrobnicateTensor', ['x'], ['y'], name='frob')], [vi('x')], [vi('y')]))

    # Opsets and IR versions.
    save(out, 'opset_huge.onnx', model([helper.make_node('Relu', ['x'], ['y'])], [vi('x')], [vi('y')],
                                       opset=(1 << 32) + 13))
    save(out, 'opset_absurd.onnx', model([helper.make_node('Relu', ['x'], ['y'])], [vi('x')], [vi('y')],
                                         opset=1 << 62))
    save(out, 'opset_negative.onnx', model([helper.make_node('Relu', ['x'], ['y'])], [vi('x')], [vi('y')],
                                           opset=-3))

    # Model-local functions: legal, recursive, mutually recursive, and doubling at each of 40
    # levels (2^40 nodes once inlined).
    write_functions(out)

    # Nesting.
    save(out, 'if_deep_10000.onnx', nested_if(10000))
    save(out, 'if_deep_3.onnx', nested_if(3))

    # For artifacts: several kernels and a transient arena.
    n = helper.make_node
    save(out, 'mm.onnx', model(
        [n('MatMul', ['a', 'b'], ['m']), n('Relu', ['m'], ['r']), n('Softmax', ['r'], ['s'], axis=1),
         n('Add', ['s', 'm'], ['y'])], [vi('a', shape=(8, 8)), vi('b', shape=(8, 8))],
        [vi('y', shape=(8, 8))]))
    np.save(os.path.join(out, 'a8.npy'), np.arange(64, dtype=np.float32).reshape(8, 8) / 64)
    # One reduction over 100,000 elements (a kernel loop longer than 65,535 iterations).
    save(out, 'reduce_100k.onnx', model(
        [n('ReduceSum', ['x'], ['y'], keepdims=1)], [vi('x', shape=(100000,))],
        [vi('y', shape=(1,))], opset=13))
    np.save(os.path.join(out, 'ones_100k.npy'), np.ones(100000, np.float32))
    # A 136 MiB intermediate: one binding on vulkan-nvidia (4 GiB storage buffer range), split
    # into chunks for lavapipe (128 MiB).
    save(out, 'wide.onnx', model(
        [n('Expand', ['x', 's'], ['e']), n('ReduceSum', ['e'], ['y'], keepdims=1)],
        [vi('x', shape=(1,))], [vi('y', shape=(1,))],
        [helper.make_tensor('s', I64, [1], [34 << 20])], opset=13))
    # The same with ReduceLogSumExp (split max and sum-of-exp reductions).
    save(out, 'wide_lse.onnx', model(
        [n('Expand', ['x', 's'], ['e']), n('ReduceLogSumExp', ['e'], ['y'], keepdims=1)],
        [vi('x', shape=(1,))], [vi('y', shape=(1,))],
        [helper.make_tensor('s', I64, [1], [34 << 20])], opset=13))
    # ArgMax, which loops over every element in one invocation.
    save(out, 'wide_argmax.onnx', model(
        [n('Expand', ['x', 's'], ['e']), n('ArgMax', ['e'], ['y'], axis=0, keepdims=1)],
        [vi('x', shape=(1,))], [vi('y', dtype=I64, shape=(1,))],
        [helper.make_tensor('s', I64, [1], [34 << 20])], opset=13))
    # The same 136 MiB intermediate without a long reduction loop (wrong-target artifact test).
    save(out, 'wide_slice.onnx', model(
        [n('Expand', ['x', 's'], ['e']), n('Relu', ['e'], ['r']),
         n('Slice', ['r', 'b', 'f'], ['y'])],
        [vi('x', shape=(1,))], [vi('y', shape=(1,))],
        [helper.make_tensor('s', I64, [1], [34 << 20]), helper.make_tensor('b', I64, [1], [5]),
         helper.make_tensor('f', I64, [1], [6])], opset=13))
    # Scan with two scan inputs but one scan_input_axes entry.
    body = helper.make_graph(
        [helper.make_node('Add', ['a', 'b'], ['c'])], 'body',
        [vi('a', shape=()), vi('b', shape=())], [vi('c', shape=())])
    save(out, 'scan_short_axes.onnx', model(
        [helper.make_node('Scan', ['x', 'x'], ['y'], name='scan', body=body, num_scan_inputs=2,
                          scan_input_axes=[0])],
        [vi('x')], [vi('y')]))

    write_external(out)


def fn_model(functions, call='F'):
    ops = [helper.make_opsetid('', 17), helper.make_opsetid('local', 1)]
    fns = [helper.make_function('local', name, ['a'], ['b'], nodes, ops) for name, nodes in functions]
    g = helper.make_graph([helper.make_node(call, ['x'], ['y'], domain='local', name='call')], 'g',
                          [vi('x')], [vi('y')])
    m = helper.make_model(g, opset_imports=ops, functions=fns)
    m.ir_version = 8
    return m


def write_functions(out):
    n = helper.make_node
    save(out, 'fn_ok.onnx', fn_model([('F', [n('Relu', ['a'], ['t']), n('Neg', ['t'], ['b'])])]))
    save(out, 'fn_recursive.onnx', fn_model([('F', [n('F', ['a'], ['b'], domain='local')])]))
    save(out, 'fn_mutual.onnx', fn_model([('F', [n('G', ['a'], ['b'], domain='local')]),
                                          ('G', [n('F', ['a'], ['b'], domain='local')])]))
    fanout = []
    for i in range(40):
        callee = 'F%d' % (i + 1)
        fanout.append(('F%d' % i, [n('Relu', ['a'], ['b'])] if i == 39 else
                       [n(callee, ['a'], ['t'], domain='local'), n(callee, ['t'], ['b'], domain='local')]))
    save(out, 'fn_fanout.onnx', fn_model(fanout, call='F0'))


def ext_model(location, offset=None, length=None, dims=(2,), extra=()):
    t = TensorProto()
    t.name = 'W'
    t.data_type = F32
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in [('location', location), ('offset', offset), ('length', length)] + list(extra):
        if v is not None:
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
    return add_with(t)


def write_external(out):
    ext = os.path.join(out, 'ext')
    os.makedirs(ext, exist_ok=True)
    with open(os.path.join(out, 'secret.bin'), 'wb') as f:
        f.write(np.array([7, 8], np.float32).tobytes())
    with open(os.path.join(ext, 'w.bin'), 'wb') as f:
        f.write(np.array([1, 2, 3, 4], np.float32).tobytes())
    link = os.path.join(ext, 'link.bin')
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join('..', 'secret.bin'), link)
    cases = {
        'ext_ok.onnx': ext_model('w.bin', 8, 8),
        'ext_dotdot.onnx': ext_model('../secret.bin'),
        'ext_absolute.onnx': ext_model(os.path.join(out, 'secret.bin')),
        'ext_symlink.onnx': ext_model('link.bin'),
        'ext_missing_file.onnx': ext_model('nope.bin'),
        'ext_directory.onnx': ext_model('.'),
        'ext_past_end.onnx': ext_model('w.bin', 12, 8),
        'ext_huge_offset.onnx': ext_model('w.bin', 1 << 62, 8),
        'ext_huge_length.onnx': ext_model('w.bin', 8, (1 << 63) - 1),
        'ext_negative_offset.onnx': ext_model('w.bin', -8, 8),
        'ext_bad_offset.onnx': ext_model('w.bin', '8abc', 8),
        'ext_wrong_length.onnx': ext_model('w.bin', 0, 12),
        'ext_no_location.onnx': ext_model(None, 0, 8),
        'ext_fifo.onnx': ext_model('fifo.bin', 0, 8),
    }
    os.mkfifo(os.path.join(ext, 'fifo.bin'))
    for name, m in cases.items():
        save(ext, name, m)


# ---- NaN / Inf propagation -----------------------------------------------------------------

def write_nonfinite(out):
    """nonfinite.onnx: elementwise and reducing ops; inputs with NaN and +-Inf in known places."""
    n = helper.make_node
    nodes = [
        n('Add', ['a', 'b'], ['add']),
        n('Mul', ['a', 'b'], ['mul']),
        n('Div', ['a', 'b'], ['div']),
        n('Exp', ['a'], ['exp']),
        n('Sqrt', ['a'], ['sqrt']),
        n('Relu', ['a'], ['relu']),
        n('Sigmoid', ['a'], ['sigmoid']),
        n('Tanh', ['a'], ['tanh']),
        n('ReduceSum', ['a'], ['rsum'], axes=[1], keepdims=0),
        n('ReduceMax', ['a'], ['rmax'], axes=[1], keepdims=0),
        n('Softmax', ['a'], ['softmax'], axis=1),
        n('Max', ['a', 'b'], ['max']),
        n('Min', ['a', 'b'], ['min']),
        n('Log', ['a'], ['log']),
        n('Abs', ['a'], ['abs']),
        n('ReduceMin', ['a'], ['rmin'], axes=[1], keepdims=0),
        n('Transpose', ['b'], ['bt'], perm=[1, 0]),
        n('MatMul', ['a', 'bt'], ['matmul']),
    ]
    outs = ['add', 'mul', 'div', 'exp', 'sqrt', 'relu', 'sigmoid', 'tanh', 'rsum', 'rmax',
            'softmax', 'matmul', 'max', 'min', 'log', 'abs', 'rmin']
    shapes = {'rsum': (4,), 'rmax': (4,), 'rmin': (4,)}
    m = model(nodes, [vi('a', shape=(4, 4)), vi('b', shape=(4, 4))],
              [vi(o, shape=shapes.get(o, (4, 4))) for o in outs], opset=11)
    save(out, 'nonfinite.onnx', m)
    nan, inf = np.nan, np.inf
    a = np.array([[nan, 1, 2, 3],
                  [inf, 1, -2, 0.5],
                  [-inf, 0, 4, 1],
                  [1, 2, 3, 4]], np.float32)
    b = np.array([[1, nan, 0, 2],
                  [-inf, 0, 1, 1],
                  [2, inf, 0, -1],
                  [1, 1, 1, 1]], np.float32)
    np.save(os.path.join(out, 'nonfinite.a.npy'), a)
    np.save(os.path.join(out, 'nonfinite.b.npy'), b)


# ---- StableHLO text -----------------------------------------------------------------------

def shlo(body, args='%arg0: tensor<2xf32>', results='tensor<2xf32>'):
    return ('module @m {\n  func.func public @main(%s) -> (%s) {\n%s\n  }\n}\n'
            % (args, results, body))


def write_stablehlo(out):
    add = '    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>\n    return %0 : tensor<2xf32>'
    ok = shlo(add)
    deep = 20000
    cases = {
        'shlo_ok.mlir': ok,
        'shlo_empty.mlir': '',
        'shlo_garbage.mlir': ''.join(chr(33 + (i * 97) % 90) for i in range(2000)),
        'shlo_truncated.mlir': ok[:len(ok) * 2 // 3],
        'shlo_unbalanced.mlir': ok.rstrip()[:-1],
        'shlo_extra_brace.mlir': ok + '}\n',
        'shlo_wrong_types.mlir': shlo('    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>\n'
                                      '    return %0 : tensor<3xf32>', results='tensor<3xf32>'),
        'shlo_wrong_return.mlir': shlo('    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>\n'
                                       '    return %0 : tensor<2xi32>', results='tensor<2xi32>'),
        'shlo_unknown_op.mlir': shlo('    %0 = stablehlo.frobnicate %arg0 : tensor<2xf32>\n'
                                     '    return %0 : tensor<2xf32>'),
        'shlo_custom_call.mlir': shlo('    %0 = stablehlo.custom_call @my_kernel(%arg0) : '
                                      '(tensor<2xf32>) -> tensor<2xf32>\n'
                                      '    return %0 : tensor<2xf32>'),
        'shlo_undefined.mlir': shlo('    %0 = stablehlo.add %arg0, %7 : tensor<2xf32>\n'
                                    '    return %0 : tensor<2xf32>'),
        'shlo_redefined.mlir': shlo('    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>\n'
                                    '    %0 = stablehlo.multiply %arg0, %arg0 : tensor<2xf32>\n'
                                    '    return %0 : tensor<2xf32>'),
        'shlo_no_main.mlir': ok.replace('@main', '@other'),
        'shlo_no_outputs.mlir': shlo('    return', results=''),
        'shlo_negative_dim.mlir': shlo('    return %arg0 : tensor<-3xf32>', '%arg0: tensor<-3xf32>',
                                       'tensor<-3xf32>'),
        'shlo_huge_arg.mlir': shlo('    %0 = stablehlo.add %arg0, %arg0 : tensor<1099511627776x1099511627776xf32>\n'
                                   '    return %0 : tensor<1099511627776x1099511627776xf32>',
                                   '%arg0: tensor<1099511627776x1099511627776xf32>',
                                   'tensor<1099511627776x1099511627776xf32>'),
        'shlo_dim_digits.mlir': shlo('    return %arg0 : tensor<99999999999999999999999xf32>',
                                     '%arg0: tensor<99999999999999999999999xf32>',
                                     'tensor<99999999999999999999999xf32>'),
        'shlo_broadcast_2p40.mlir': shlo(
            '    %cst = stablehlo.constant dense<1.0> : tensor<f32>\n'
            '    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1048576x1048576xf32>\n'
            '    return %0 : tensor<1048576x1048576xf32>', '', 'tensor<1048576x1048576xf32>'),
        'shlo_dense_count.mlir': shlo(
            '    %cst = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n'
            '    return %cst : tensor<2xf32>', ''),
        'shlo_dense_hex_short.mlir': shlo(
            '    %cst = stablehlo.constant dense<"0x0000803F0000"> : tensor<2xf32>\n'
            '    return %cst : tensor<2xf32>', ''),
        'shlo_int_overflow.mlir': shlo(
            '    %cst = stablehlo.constant dense<99999999999999999999999> : tensor<i64>\n'
            '    return %cst : tensor<i64>', '', 'tensor<i64>'),
        'shlo_deep_brackets.mlir': shlo(
            '    %cst = stablehlo.constant dense<' + '[' * deep + '1.0' + ']' * deep +
            '> : tensor<1xf32>\n    return %cst : tensor<1xf32>', '', 'tensor<1xf32>'),
        'shlo_deep_types.mlir': shlo('    return %arg0 : tensor<2xf32>',
                                     '%arg0: ' + 'tuple<' * deep + 'tensor<2xf32>' + '>' * deep),
        'shlo_nul_byte.mlir': ok.replace('stablehlo.add', 'stablehlo.a\0dd'),
    }
    # 10,000 nested stablehlo.case regions (each returns its operand).
    n = 10000
    body = ['    %p = stablehlo.constant dense<0> : tensor<i32>']
    for i in range(n):
        body.append('  ' * 0 + '    %%c%d = "stablehlo.case"(%%p) ({' % i)
    body.append('      "stablehlo.return"(%arg0) : (tensor<2xf32>) -> ()')
    for i in reversed(range(n)):
        body.append('    }) : (tensor<i32>) -> tensor<2xf32>')
        if i:
            body.append('      "stablehlo.return"(%%c%d) : (tensor<2xf32>) -> ()' % i)
    body.append('    return %c0 : tensor<2xf32>')
    cases['shlo_deep_regions.mlir'] = shlo('\n'.join(body))
    for name, text in cases.items():
        with open(os.path.join(out, name), 'w', encoding='latin1') as f:
            f.write(text)


# ---- artifact damage -----------------------------------------------------------------------

def fb_field(buf, table, index):
    """Absolute position of field `index` of the FlatBuffers table at `table`, or None."""
    vtable = table - struct.unpack_from('<i', buf, table)[0]
    vt_size = struct.unpack_from('<H', buf, vtable)[0]
    if 4 + 2 * index >= vt_size:
        return None
    off = struct.unpack_from('<H', buf, vtable + 4 + 2 * index)[0]
    return table + off if off else None


def fb_deref(buf, pos):
    return pos + struct.unpack_from('<I', buf, pos)[0]


def spirv_words(buf, exe):
    """The SPIR-V word vector of the Executable table at `exe` (schema version 3: field 8, the
    ExecutableCode union's SpirvCode table, whose field 0 holds the words)."""
    code = fb_deref(buf, fb_field(buf, exe, 8))
    return fb_deref(buf, fb_field(buf, code, 0))


def corrupt(src, dst, kind):
    """Damages an artifact; KIND ending in '+reseal' then recomputes its SHA-256 trailer."""
    reseal = kind.endswith('+reseal')
    kind = kind[:-len('+reseal')] if reseal else kind
    buf = bytearray(open(src, 'rb').read())
    root = struct.unpack_from('<I', buf, 0)[0]
    # Model fields: 0 schema_version, 1 producer, 2 target, 3 inputs, 4 outputs, 5 constants,
    # 6 constant_data, 7 executables, 8 commands, 9 arena_bytes, 10 native_library,
    # 11 precision, 12 init_commands, 13 derived_bytes.
    if kind == 'truncate':
        buf = buf[:len(buf) // 2]
    elif kind == 'header':
        buf = buf[:6]
    elif kind == 'identifier':
        buf[4:8] = b'XXXX'
    elif kind == 'version':
        struct.pack_into('<I', buf, fb_field(buf, root, 0), 999)
    elif kind == 'version2':
        struct.pack_into('<I', buf, fb_field(buf, root, 0), 2)
    elif kind == 'flip-root':
        struct.pack_into('<I', buf, 0, len(buf) + 1000)
    elif kind == 'flip-spirv':
        # First executable's SPIR-V vector: overwrite the magic number.
        exes = fb_deref(buf, fb_field(buf, root, 7))
        exe = fb_deref(buf, exes + 4)
        spirv = spirv_words(buf, exe)
        struct.pack_into('<I', buf, spirv + 4, 0xdeadbeef)
    elif kind == 'spirv-wordcount':
        # Inflate the word count of the first instruction after the 5-word SPIR-V header.
        exes = fb_deref(buf, fb_field(buf, root, 7))
        exe = fb_deref(buf, exes + 4)
        spirv = spirv_words(buf, exe)
        first = spirv + 4 + 5 * 4
        word = struct.unpack_from('<I', buf, first)[0]
        struct.pack_into('<I', buf, first, (0xffff << 16) | (word & 0xffff))
    elif kind == 'arena-huge':
        pos = fb_field(buf, root, 9)
        if pos is None:
            raise SystemExit('artifact has no arena_bytes field')
        struct.pack_into('<Q', buf, pos, 1 << 62)
    elif kind in ('derived-huge', 'derived-small'):
        # An artifact with init commands: its derived bytes absurd, or too few for its derived
        # constants.
        pos = fb_field(buf, root, 13)
        if pos is None:
            raise SystemExit('artifact has no derived_bytes field')
        struct.pack_into('<Q', buf, pos, (1 << 62) if kind == 'derived-huge' else 64)
    elif kind == 'input-dim-huge':
        sigs = fb_deref(buf, fb_field(buf, root, 3))
        sig = fb_deref(buf, sigs + 4)
        shape = fb_deref(buf, fb_field(buf, sig, 2))
        struct.pack_into('<q', buf, shape + 4, 1 << 61)
    elif kind == 'workgroup-huge':
        # The first executable asks for a 4096x1x1 workgroup (more than lavapipe's 1024).
        exes = fb_deref(buf, fb_field(buf, root, 7))
        exe = fb_deref(buf, exes + 4)
        wg = fb_deref(buf, fb_field(buf, exe, 3))
        struct.pack_into('<I', buf, wg + 4, 4096)
    elif kind == 'binding-past-end':
        # The first binding of the first dispatch: a range far past its buffer.
        cmds = fb_deref(buf, fb_field(buf, root, 8))
        entry = fb_deref(buf, cmds + 4)
        disp = fb_deref(buf, fb_field(buf, entry, 1))
        refs = fb_deref(buf, fb_field(buf, disp, 1))
        ref = fb_deref(buf, refs + 4)
        pos = fb_field(buf, ref, 2)  # BufferRef: kind, index, offset, size
        if pos is None:
            pos = fb_field(buf, ref, 3)
        struct.pack_into('<Q', buf, pos, (1 << 64) - 8)
    elif kind == 'flip-all':
        for i in range(8, len(buf), 7):
            buf[i] ^= 0x5a
    elif kind == 'flip-one':
        buf[len(buf) // 3] ^= 0x01
    elif kind == 'no-trailer':
        buf = buf[:-40]
    else:
        raise SystemExit('unknown corruption ' + kind)
    if reseal:
        # A correct digest trailer for the damaged content, so that the checks behind the
        # digest (schema version, sizes, offsets, device requirements) are what refuses it.
        payload = bytes(buf[:-40])
        buf = bytearray(payload + hashlib.sha256(payload).digest() + b'KLNSHA2\0')
    with open(dst, 'wb') as f:
        f.write(bytes(buf))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'corrupt':
        corrupt(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_models(out)
    write_npys(out)
    write_nonfinite(out)
    write_stablehlo(out)


if __name__ == '__main__':
    main()
