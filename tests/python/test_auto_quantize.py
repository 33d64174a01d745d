"""kiln.compile(precision='auto') and kiln.quantize: the same code as `kiln compile --precision
auto` and `kiln quantize` (src/calibrate), so the artifact records the same choice as the CLI's
(tests/cli/precision.test) and the quantised models run in kiln (tests/cli/quantize.test)."""
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from conftest import MODELS, ROOT, SQUEEZENET

PEROP = os.path.join(ROOT, 'tests', 'cli', 'Inputs', 'perop_overflow.onnx')
# The CLI built beside the package: build/python/kiln -> build/bin/kiln.
KILN_CLI = os.path.abspath(os.path.join(os.path.dirname(kiln.__file__), '..', '..', 'bin', 'kiln'))
needs_cli = pytest.mark.skipif(not os.path.exists(KILN_CLI), reason='no kiln CLI beside the package')


def cli(*args):
    p = subprocess.run([KILN_CLI, *map(str, args)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def precision_line(artifact):
    lines = [l for l in cli('inspect', artifact).splitlines() if l.startswith('precision:')]
    assert len(lines) == 1, lines
    return lines[0]


@needs_cli
def test_auto_precision_records_the_clis_choice(tmp_path):
    # The MatMul 'blowup' overflows f16 on the seeded inputs: kept f32, as the CLI keeps it.
    py_artifact = tmp_path / 'py.kiln'
    assert kiln.compile(PEROP, target='cpu', precision='auto', output=py_artifact) is None
    line = precision_line(py_artifact)
    assert re.fullmatch(r"precision: auto \(fp16 within 0\.01 of each output's range\): 2 nodes "
                        r"fp16, 1 kept f32: 'blowup'; output errors [0-9.e-]+, 0", line), line
    cli_artifact = tmp_path / 'cli.kiln'
    cli('compile', PEROP, '-o', cli_artifact, '--target', 'cpu', '--precision', 'auto')
    assert precision_line(cli_artifact) == line
    assert py_artifact.read_bytes() == cli_artifact.read_bytes()


@needs_cli
def test_auto_precision_budget_and_inputs(tmp_path):
    # A tight budget keeps every node f32 (as precision.test's TIGHTAUTO); calibration inputs
    # given by name are those the CLI reads with --input.
    artifact = tmp_path / 'tight.kiln'
    kiln.compile(PEROP, target='cpu', precision='auto', max_error=1e-9, output=artifact)
    assert "0 nodes fp16, 3 kept f32: 'act', 'blowup', 'embed'" in precision_line(artifact)
    x = np.random.default_rng(7).uniform(-1, 1, (4, 16)).astype(np.float32)
    np.save(tmp_path / 'x.npy', x)
    py_artifact = tmp_path / 'given.kiln'
    kiln.compile(PEROP, target='cpu', precision='auto', inputs={'x': x}, output=py_artifact)
    cli_artifact = tmp_path / 'given_cli.kiln'
    cli('compile', PEROP, '-o', cli_artifact, '--target', 'cpu', '--precision', 'auto', '--input',
        f'x={tmp_path / "x.npy"}')
    assert precision_line(py_artifact) == precision_line(cli_artifact)
    # The artifact runs, within the budget of the f32 reference.
    m = kiln.load(kiln.compile(PEROP, target='cpu', precision='auto', inputs={'x': x}),
                  device='cpu')
    want = kiln.load(PEROP, device='cpu-ref').run({'x': x})
    got = m.run({'x': x})
    for name, w in want.items():
        if w.dtype.kind == 'f':
            assert np.abs(got[name] - w).max() <= 1e-2 * max(np.ptp(w), 1.0)


def test_auto_precision_errors():
    x = np.zeros((4, 16), np.float32)
    with pytest.raises(ValueError, match=r"max_error=0: expected a positive fraction"):
        kiln.compile(PEROP, target='cpu', precision='auto', max_error=0)
    with pytest.raises(TypeError, match='max_error: expected a float, got str'):
        kiln.compile(PEROP, target='cpu', precision='auto', max_error='1e-2')
    with pytest.raises(ValueError, match=r"max_error applies to precision='auto' only"):
        kiln.compile(PEROP, target='cpu', precision='fp16', max_error=0.1)
    with pytest.raises(ValueError, match=r"inputs applies to precision='auto' only"):
        kiln.compile(PEROP, target='cpu', inputs={'x': x})
    with pytest.raises(TypeError, match=r'inputs: expected a dict'):
        kiln.compile(PEROP, target='cpu', precision='auto', inputs=[x])
    with pytest.raises(ValueError, match=r"inputs: unknown input 'y' \(the model's inputs: x\)"):
        kiln.compile(PEROP, target='cpu', precision='auto', inputs={'y': x})
    with pytest.raises(ValueError, match=r"inputs: input 'x': expected tensor<4x16xf32>, got tensor<2x16xf32>"):
        kiln.compile(PEROP, target='cpu', precision='auto', inputs={'x': np.zeros((2, 16), np.float32)})
    with pytest.raises(ValueError, match=r"inputs\['x'\]: numpy dtype complex64"):
        kiln.compile(PEROP, target='cpu', precision='auto', inputs={'x': x.astype(np.complex64)})
    with pytest.raises(kiln.Error, match="precision 'fp8' is not supported: expected None, 'fp32', "
                                         "'fp16', 'bf16' or 'auto'"):
        kiln.compile(PEROP, target='cpu', precision='fp8')
    with pytest.raises(kiln.Error, match="--precision fp16: target 'vulkan' lacks shaderFloat16"):
        kiln.compile(PEROP, target='vulkan', precision='auto')


def mlp_model(path):
    """x[2,16] -> MatMul(16x8) -> Relu -> MatMul(8x4): two quantisable MatMuls, opset 13."""
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array(rng.uniform(-1, 1, (16, 8)).astype(np.float32), 'w1')
    w2 = numpy_helper.from_array(rng.uniform(-1, 1, (8, 4)).astype(np.float32), 'w2')
    g = helper.make_graph(
        [helper.make_node('MatMul', ['x', 'w1'], ['h'], name='fc1'),
         helper.make_node('Relu', ['h'], ['r'], name='relu'),
         helper.make_node('MatMul', ['r', 'w2'], ['y'], name='fc2')],
        'mlp', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 4])], [w1, w2])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), path)


def test_quantize_dynamic_runs_in_kiln(tmp_path):
    model, out = tmp_path / 'mlp.onnx', tmp_path / 'mlp.q.onnx'
    mlp_model(model)
    s = kiln.quantize(model, out, mode='dynamic')
    assert (s['nodes'], s['weights'], s['calibration_samples']) == (2, 2, 0)
    assert s['weight_bytes_after'] < s['weight_bytes_before']
    ops = {n.op_type for n in onnx.load(out).graph.node}
    assert {'DynamicQuantizeLinear', 'DequantizeLinear'} <= ops
    x = np.random.default_rng(5).uniform(-1, 1, (2, 16)).astype(np.float32)
    want = kiln.load(model, device='cpu-ref').run({'x': x})['y']
    ref = kiln.load(out, device='cpu-ref').run({'x': x})['y']
    cpu = kiln.load(kiln.compile(out, target='cpu'), device='cpu').run({'x': x})['y']
    assert np.abs(ref - want).max() <= 0.05 * np.ptp(want)
    np.testing.assert_allclose(cpu, ref, rtol=1e-3, atol=1e-3 * np.ptp(ref))


def test_quantize_static_squeezenet(tmp_path, squeezenet_io):
    # As tests/cli/quantize.test: static, calibrated on the model's own input; within 3% of the
    # float model's output range, same top-1, on the cpu device.
    cal = tmp_path / 'cal'
    cal.mkdir()
    shutil.copy(os.path.join(MODELS, 'squeezenet1_1.in.input.npy'), cal / 'input.npy')
    out = tmp_path / 'sq_u8.onnx'
    s = kiln.quantize(SQUEEZENET, out, calibrate=cal)
    assert (s['nodes'], s['activations'], s['calibration_samples'], s['skipped']) == (26, 36, 1, [])
    x, golden = squeezenet_io
    got = kiln.load(kiln.compile(out, target='cpu'), device='cpu').run({'input': x})['logits']
    assert np.abs(got - golden).max() <= 0.03 * np.ptp(golden)
    assert got.argmax() == golden.argmax()


def test_quantize_errors(tmp_path):
    model, out = tmp_path / 'mlp.onnx', tmp_path / 'e.onnx'
    mlp_model(model)
    cases = [
        (dict(mode='int8'), ValueError, r"mode='int8': expected 'static', 'dynamic' or 'weight-only'"),
        (dict(mode='dynamic', method='mse'), ValueError, r"method='mse': expected 'minmax' or"),
        (dict(mode='dynamic', percentile=40), ValueError, r'percentile=40: expected a value in \(50, 100\]'),
        (dict(mode='dynamic', activations='i4'), ValueError, r"activations='i4': expected 'u8' or 'i8'"),
        (dict(mode='dynamic', weights='f8'), ValueError, r"weights='f8': expected 'i8', 'u8'"),
        (dict(mode='dynamic', weights='i4'), ValueError, r"weights='i4': mode='dynamic' takes 'i8' or 'u8'"),
        (dict(mode='weight-only', weights='u8'), ValueError, r"weights='u8': mode='weight-only' takes"),
        (dict(mode='weight-only', block_size=-2), ValueError, r'block_size=-2: expected >= 0'),
        (dict(mode='dynamic', block_size=16), ValueError, r"block_size=16 needs mode='weight-only'"),
        (dict(mode='dynamic', calibrate=tmp_path), ValueError, r"calibrate applies to mode='static' only"),
        (dict(calibrate=tmp_path / 'nowhere'), ValueError, r"calibrate='.*nowhere': not a folder"),
        (dict(mode='dynamic', op_types='MatMul'), TypeError, r'op_types: expected a list of str'),
        (dict(mode='dynamic', exclude=[1]), TypeError, r'exclude: expected a list of str'),
        (dict(), kiln.Error, r"static quantisation needs calibration inputs: calibrate=DIR"),
        (dict(calibrate=tmp_path), kiln.Error, r"calibrate='.*': no .npy files and no sample folders"),
    ]
    for kwargs, exc, message in cases:
        with pytest.raises(exc, match=message):
            kiln.quantize(model, out, **kwargs)
    assert not out.exists()
    (tmp_path / 'cal').mkdir()
    np.save(tmp_path / 'cal' / 'input.npy', np.zeros((2, 16), np.float32))
    with pytest.raises(kiln.Error, match=r"calibration sample .*cal: no x.npy for input 'x'"):
        kiln.quantize(model, out, calibrate=tmp_path / 'cal')
    # The calibrated static model: the same run as the CLI's.
    np.save(tmp_path / 'cal' / 'x.npy', np.random.default_rng(1).uniform(-1, 1, (2, 16)).astype(np.float32))
    s = kiln.quantize(model, out, calibrate=tmp_path / 'cal', method='percentile', percentile=99.9)
    assert (s['nodes'], s['calibration_samples']) == (2, 1)
    assert out.exists()
