#!/usr/bin/python3
"""Writes the hostile TFLite and NNEF inputs of tests/hostile/{tflite,nnef}.test into a folder.

  make_fe_cases.py OUTDIR

TFLite files are written as flatbuffer JSON against kiln's schema subset
(src/frontend/tflite/tflite.fbs) and compiled with Debian's flatc; byte-level damage (cut short,
garbage, a broken root offset) is applied afterwards. NNEF cases are folders holding graph.nnef
and .dat files. Each case is valid except for the one thing its name says is wrong.
"""
import io
import json
import tarfile
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, '..', '..', 'src', 'frontend', 'tflite', 'tflite.fbs')


def f32_bytes(values):
    return list(np.asarray(values, dtype='<f4').tobytes())


def base_tflite():
    """y = RELU(x + c), x and y f32 [2], c a constant [2]."""
    return {
        'version': 3,
        'operator_codes': [{'deprecated_builtin_code': 0, 'version': 1},
                           {'deprecated_builtin_code': 19, 'version': 1}],
        'subgraphs': [{
            'tensors': [
                {'shape': [2], 'type': 'FLOAT32', 'buffer': 0, 'name': 'x'},
                {'shape': [2], 'type': 'FLOAT32', 'buffer': 1, 'name': 'c'},
                {'shape': [2], 'type': 'FLOAT32', 'buffer': 0, 'name': 's'},
                {'shape': [2], 'type': 'FLOAT32', 'buffer': 0, 'name': 'y'},
            ],
            'inputs': [0],
            'outputs': [3],
            'operators': [
                {'opcode_index': 0, 'inputs': [0, 1], 'outputs': [2],
                 'builtin_options_type': 'AddOptions', 'builtin_options': {}},
                {'opcode_index': 1, 'inputs': [2], 'outputs': [3]},
            ],
            'name': 'main',
        }],
        'buffers': [{}, {'data': f32_bytes([1.0, -5.0])}],
    }


def write_tflite(out, name, model):
    js = os.path.join(out, name + '.json')
    with open(js, 'w') as f:
        json.dump(model, f)
    subprocess.run(['flatc', '-b', '-o', out, SCHEMA, js], check=True)
    os.remove(js)
    with open(os.path.join(out, name + '.tflite'), 'rb') as f:
        return f.read()


def write_bytes(out, name, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)


def tflite_cases(out):
    ok = write_tflite(out, 'tfl_ok', base_tflite())
    write_bytes(out, 'tfl_empty.tflite', b'')
    write_bytes(out, 'tfl_garbage.tflite', bytes((i * 37 + 11) % 256 for i in range(512)))
    write_bytes(out, 'tfl_truncated.tflite', ok[:len(ok) // 2])
    # Root offset pointing far past the end; the identifier stays in place.
    write_bytes(out, 'tfl_bad_root.tflite', struct.pack('<I', 0x7ffffff0) + ok[4:])

    def case(name, edit):
        m = base_tflite()
        edit(m)
        write_tflite(out, name, m)

    sg = lambda m: m['subgraphs'][0]
    case('tfl_version2', lambda m: m.update(version=2))
    case('tfl_no_subgraph', lambda m: m.update(subgraphs=[]))
    case('tfl_buffer_oob', lambda m: sg(m)['tensors'][1].update(buffer=99))
    case('tfl_buffer_size', lambda m: m['buffers'][1].update(data=f32_bytes([1.0])))
    case('tfl_negative_dim', lambda m: sg(m)['tensors'][0].update(shape=[-3]))
    case('tfl_huge_shape', lambda m: sg(m)['tensors'][2].update(shape=[1 << 30, 1 << 30, 1 << 30]))
    case('tfl_tensor_oob', lambda m: sg(m)['operators'][0].update(inputs=[0, 50]))
    case('tfl_opcode_oob', lambda m: sg(m)['operators'][1].update(opcode_index=7))

    def cycle(m):  # operator 0 reads what operator 1 writes, and the other way round
        ops = sg(m)['operators']
        ops[0]['inputs'] = [3, 1]
        ops[1]['outputs'] = [3]
        ops[1]['inputs'] = [2]
    case('tfl_cycle', cycle)
    case('tfl_double_write', lambda m: sg(m)['operators'][1].update(outputs=[2]))

    def unsupported(m):
        m['operator_codes'] += [{'deprecated_builtin_code': 32, 'custom_code': 'MyOp', 'version': 1},
                                {'deprecated_builtin_code': 16, 'version': 2},
                                {'builtin_code': 200, 'deprecated_builtin_code': 127, 'version': 3}]
        sg(m)['tensors'] += [{'shape': [2], 'type': 'FLOAT32', 'name': f'u{i}'} for i in range(3)]
        sg(m)['operators'] += [{'opcode_index': 2 + i, 'inputs': [3], 'outputs': [4 + i]} for i in range(3)]
    case('tfl_unsupported', unsupported)
    case('tfl_string_tensor', lambda m: sg(m)['tensors'][2].update(type='STRING'))
    case('tfl_complex_tensor', lambda m: sg(m)['tensors'][0].update(type='COMPLEX64'))

    def quant(scale, zp, dim=0, shape=None):
        def edit(m):
            t = sg(m)['tensors'][1]
            t['type'] = 'INT8'
            t['quantization'] = {'scale': scale, 'zero_point': zp, 'quantized_dimension': dim}
            m['buffers'][1] = {'data': [1, 2]}
        return edit
    case('tfl_quant_zero_scale', quant([0.0], [0]))
    case('tfl_quant_channels', quant([0.1, 0.2, 0.3], [0, 0, 0]))
    case('tfl_quant_zero_points', quant([0.1, 0.2], [0]))
    case('tfl_variable', lambda m: sg(m)['tensors'][2].update(is_variable=True))
    case('tfl_output_unwritten', lambda m: sg(m).update(outputs=[3, 2], operators=sg(m)['operators'][:1]))
    case('tfl_no_outputs', lambda m: sg(m).update(outputs=[]))

    def conv_no_options(m):
        m['operator_codes'][0] = {'deprecated_builtin_code': 3, 'version': 1}
        del sg(m)['operators'][0]['builtin_options_type']
        del sg(m)['operators'][0]['builtin_options']
    case('tfl_conv_no_options', conv_no_options)

    def conv_rank(m):
        m['operator_codes'][0] = {'deprecated_builtin_code': 3, 'version': 1}
        sg(m)['tensors'][0]['shape'] = [1, 2, 2, 1]
        sg(m)['operators'][0]['builtin_options_type'] = 'Conv2DOptions'
        sg(m)['operators'][0]['builtin_options'] = {'stride_w': 1, 'stride_h': 1}
    case('tfl_conv_weight_rank', conv_rank)
    case('tfl_wrong_output_shape', lambda m: sg(m)['tensors'][3].update(shape=[3]))

    def sparse(m):
        t = sg(m)['tensors'][1]
        t['sparsity'] = {'traversal_order': [0, 1], 'dim_metadata': [{'format': 'DENSE', 'dense_size': 2}]}
    case('tfl_sparse_bad', sparse)

    def sparse_index(m):
        t = sg(m)['tensors'][1]
        t['sparsity'] = {'traversal_order': [0], 'dim_metadata': [{
            'format': 'SPARSE_CSR',
            'array_segments_type': 'Int32Vector', 'array_segments': {'values': [0, 2]},
            'array_indices_type': 'Int32Vector', 'array_indices': {'values': [0, 9]}}]}
    case('tfl_sparse_index', sparse_index)
    def hybrid(m):  # FULLY_CONNECTED with float input and int8 weights, no DEQUANTIZE
        m['operator_codes'][0] = {'deprecated_builtin_code': 9, 'version': 1}
        t = sg(m)['tensors']
        t[0]['shape'] = [1, 2]
        t[1].update(shape=[2, 1], type='INT8', quantization={'scale': [0.1], 'zero_point': [0]})
        t[2]['shape'] = [1, 2]
        m['buffers'][1] = {'data': [1, 2]}
        sg(m)['operators'][0].update(builtin_options_type='FullyConnectedOptions', builtin_options={})
    case('tfl_hybrid', hybrid)
    case('tfl_reshape_count', lambda m: (
        m['operator_codes'].__setitem__(1, {'deprecated_builtin_code': 22, 'version': 1}),
        sg(m)['tensors'][3].update(shape=[5])))


# ---- NNEF ----

def dat(array, code=0, bits=None, version=(1, 0), extra=b'', magic=b'\x4e\xef', rank=None,
        length=None, params=(0.0,) * 8):
    a = np.asarray(array)
    bits = bits if bits is not None else a.dtype.itemsize * 8
    data = a.tobytes() + extra
    shape = list(a.shape)
    head = magic + bytes(version)
    head += struct.pack('<I', len(a.tobytes()) if length is None else length)
    head += struct.pack('<I', len(shape) if rank is None else rank)
    head += struct.pack('<8I', *(shape + [0] * (8 - len(shape)))[:8])
    head += struct.pack('<II', bits, code)
    head += struct.pack('<8f', *params)
    head += b'\0' * (128 - len(head))
    return head + data


GOOD_GRAPH = """version 1.0;

graph g( x ) -> ( y )
{
    x = external<scalar>(shape = [1, 2]);
    w = variable<scalar>(shape = [1, 2], label = 'w');
    s = add(x, w);
    y = relu(s);
}
"""


def nnef_folder(out, name, graph, files=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'graph.nnef'), 'w') as f:
        f.write(graph)
    if files is None:
        files = {'w.dat': dat(np.array([[1.0, -5.0]], dtype='<f4'))}
    for fn, data in files.items():
        p = os.path.join(d, fn)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb') as f:
            f.write(data)


def nnef_cases(out):
    w = np.array([[1.0, -5.0]], dtype='<f4')
    nnef_folder(out, 'nnef_ok', GOOD_GRAPH)
    nnef_folder(out, 'nnef_empty', '')
    nnef_folder(out, 'nnef_no_semicolon', GOOD_GRAPH.replace("s = add(x, w);", "s = add(x, w)"))
    nnef_folder(out, 'nnef_unterminated', GOOD_GRAPH.replace("label = 'w'", "label = 'w"))
    nnef_folder(out, 'nnef_bad_char', GOOD_GRAPH.replace("y = relu(s);", "y = relu(s) $;"))
    nnef_folder(out, 'nnef_arith', GOOD_GRAPH.replace("s = add(x, w);", "s = x + w;"))
    nnef_folder(out, 'nnef_version', GOOD_GRAPH.replace("version 1.0;", "version 2.0;"))
    nnef_folder(out, 'nnef_unknown_ops', GOOD_GRAPH.replace("y = relu(s);", "t = frobnicate(s);\n    y = twiddle(t);"))
    nnef_folder(out, 'nnef_undefined', GOOD_GRAPH.replace("y = relu(s);", "y = relu(q);"))
    nnef_folder(out, 'nnef_redefined', GOOD_GRAPH.replace("y = relu(s);", "s = relu(s);\n    y = relu(s);"))
    nnef_folder(out, 'nnef_unassigned_output', GOOD_GRAPH.replace("y = relu(s);", "z = relu(s);"))
    nnef_folder(out, 'nnef_external_not_input', GOOD_GRAPH.replace("s = add(x, w);", "e = external<scalar>(shape = [1, 2]);\n    s = add(x, w);"))
    nnef_folder(out, 'nnef_negative_shape', GOOD_GRAPH.replace("shape = [1, 2]);\n    w", "shape = [1, -2]);\n    w"))
    nnef_folder(out, 'nnef_huge_shape', GOOD_GRAPH.replace("shape = [1, 2]);\n    w", "shape = [1073741824, 1073741824, 1073741824]);\n    w"))
    nnef_folder(out, 'nnef_missing_dat', GOOD_GRAPH, files={})
    nnef_folder(out, 'nnef_dat_magic', GOOD_GRAPH, files={'w.dat': dat(w, magic=b'NN')})
    nnef_folder(out, 'nnef_dat_version', GOOD_GRAPH, files={'w.dat': dat(w, version=(2, 0))})
    nnef_folder(out, 'nnef_dat_short', GOOD_GRAPH, files={'w.dat': dat(w)[:100]})
    nnef_folder(out, 'nnef_dat_truncated', GOOD_GRAPH, files={'w.dat': dat(w)[:-4]})
    nnef_folder(out, 'nnef_dat_length', GOOD_GRAPH, files={'w.dat': dat(w, length=4, extra=b'')[:-4]})
    nnef_folder(out, 'nnef_dat_shape', GOOD_GRAPH, files={'w.dat': dat(np.zeros((2, 1), '<f4'))})
    nnef_folder(out, 'nnef_dat_rank', GOOD_GRAPH, files={'w.dat': dat(w, rank=9)})
    nnef_folder(out, 'nnef_dat_log', GOOD_GRAPH, files={'w.dat': dat(np.zeros((1, 2), 'u1'), code=0x11)})
    nnef_folder(out, 'nnef_dat_code', GOOD_GRAPH, files={'w.dat': dat(w, code=0x7)})
    nnef_folder(out, 'nnef_dat_bits', GOOD_GRAPH, files={'w.dat': dat(np.zeros((1, 2), 'u1'), bits=12, length=3, extra=b'\0')})
    nnef_folder(out, 'nnef_escape', GOOD_GRAPH.replace("label = 'w'", "label = '../../outside'"))
    nnef_folder(out, 'nnef_absolute', GOOD_GRAPH.replace("label = 'w'", "label = '/etc/passwd'"))
    nnef_folder(out, 'nnef_link', GOOD_GRAPH.replace("label = 'w'", "label = 'sub/w'"), files={})
    os.makedirs(os.path.join(out, 'nnef_outside'), exist_ok=True)
    with open(os.path.join(out, 'nnef_outside', 'w.dat'), 'wb') as f:
        f.write(dat(w))
    link = os.path.join(out, 'nnef_link', 'sub')
    if not os.path.lexists(link):
        os.symlink(os.path.join(out, 'nnef_outside'), link)
    rec = """version 1.0;
extension KHR_enable_fragment_definitions;

fragment loop( a: tensor<scalar> ) -> ( b: tensor<scalar> )
{
    b = loop(a);
}

graph g( x ) -> ( y )
{
    x = external<scalar>(shape = [1, 2]);
    y = loop(x);
}
"""
    nnef_folder(out, 'nnef_recursive', rec, files={})
    nnef_folder(out, 'nnef_conv_bias', """version 1.0;

graph g( x ) -> ( y )
{
    x = external<scalar>(shape = [1, 1, 4, 4]);
    w = variable<scalar>(shape = [2, 1, 1, 1], label = 'w');
    b = variable<scalar>(shape = [1, 3], label = 'b');
    y = conv(x, w, b);
}
""", files={'w.dat': dat(np.ones((2, 1, 1, 1), '<f4')), 'b.dat': dat(np.ones((1, 3), '<f4'))})
    nnef_folder(out, 'nnef_bad_arg', GOOD_GRAPH.replace("y = relu(s);", "y = relu(s, alpha = 2.0);"))


def tgz(out, name, entries):
    """entries: (arcname, bytes) for files, (arcname, None, target) for a symlink."""
    with tarfile.open(os.path.join(out, name), 'w:gz') as t:
        for e in entries:
            info = tarfile.TarInfo(e[0])
            if e[1] is None:
                info.type = tarfile.SYMTYPE
                info.linkname = e[2]
                t.addfile(info)
            else:
                info.size = len(e[1])
                t.addfile(info, io.BytesIO(e[1]))


def tgz_cases(out):
    w = dat(np.array([[1.0, -5.0]], dtype='<f4'))
    g = GOOD_GRAPH.encode()
    tgz(out, 'nnef_tgz_ok.tgz', [('m/graph.nnef', g), ('m/w.dat', w)])
    tgz(out, 'nnef_tgz_escape.tgz', [('graph.nnef', g), ('w.dat', w), ('../evil.dat', w)])
    tgz(out, 'nnef_tgz_link.tgz', [('graph.nnef', g), ('w.dat', None, '/etc/passwd')])
    tgz(out, 'nnef_tgz_no_graph.tgz', [('w.dat', w)])
    tgz(out, 'nnef_tgz_missing_dat.tgz', [('graph.nnef', g)])
    with open(os.path.join(out, 'nnef_tgz_ok.tgz'), 'rb') as f:
        data = f.read()
    write_bytes(out, 'nnef_tgz_truncated.tgz', data[:len(data) // 2])
    write_bytes(out, 'nnef_tgz_garbage.tgz', bytes((i * 31 + 7) % 256 for i in range(300)))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, 'x2.npy'), np.array([0.5, 2.0], dtype=np.float32))
    np.save(os.path.join(out, 'x12.npy'), np.array([[0.5, 2.0]], dtype=np.float32))
    tflite_cases(out)
    nnef_cases(out)
    tgz_cases(out)


if __name__ == '__main__':
    main()
