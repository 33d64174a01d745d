"""kiln's Python package: compile, load, run on cpu-ref, the cpu device and Vulkan (lavapipe in
CI) against the golden outputs in models/, signatures, errors and dtype round trips."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import SQUEEZENET, vulkan_target

# The tolerance of `kiln conform` on the models folder.
RTOL, ATOL = 1e-4, 1e-5


def test_package():
    assert isinstance(kiln.__version__, str)
    assert issubclass(kiln.Error, RuntimeError)
    assert 'cpu' in kiln.targets() and 'vulkan' in kiln.targets()
    uris = [d['uri'] for d in kiln.devices()]
    assert uris[0] == 'cpu-ref'
    assert 'cpu:0' in uris


def test_compile_returns_an_artifact(cpu_artifact):
    assert isinstance(cpu_artifact, bytes)
    assert cpu_artifact[4:8] == b'KLN1'


def test_compile_to_file(tmp_path, squeezenet_io):
    path = tmp_path / 'sq.kiln'
    assert kiln.compile(SQUEEZENET, target='cpu', output=path, precision='fp32') is None
    x, golden = squeezenet_io
    m = kiln.load(path, device='cpu')  # an artifact file, by os.PathLike
    np.testing.assert_allclose(m.run({'input': x})['logits'], golden, rtol=RTOL, atol=ATOL)


def test_compile_fp16(squeezenet_io):
    # Weights and activations in f16, f32 accumulation; the signature stays f32 and the logits
    # match the golden ones within 1e-2 of their range, with the same top-1 class.
    x, golden = squeezenet_io
    m = kiln.load(kiln.compile(SQUEEZENET, target='cpu', precision='fp16'), device='cpu')
    assert m.inputs[0].dtype == np.dtype(np.float32) and m.outputs[0].dtype == np.dtype(np.float32)
    got = m.run({'input': x})['logits']
    assert np.abs(got - golden).max() <= 1e-2 * (golden.max() - golden.min())
    assert got.argmax() == golden.argmax()
    assert not np.array_equal(got, golden)


def test_signature(cpu_module):
    (i,), (o,) = cpu_module.inputs, cpu_module.outputs
    assert (i.name, i.shape, i.dtype) == ('input', (1, 3, 224, 224), np.dtype(np.float32))
    assert (o.name, o.shape, o.dtype) == ('logits', (1, 1000), np.dtype(np.float32))
    assert cpu_module.device == 'cpu'
    assert 'input' in repr(i)


def test_cpu_device(cpu_module, squeezenet_io):
    x, golden = squeezenet_io
    out = cpu_module.run({'input': x})
    assert list(out) == ['logits']
    np.testing.assert_allclose(out['logits'], golden, rtol=RTOL, atol=ATOL)
    # By keyword, by position, as a list: the same answer.
    for got in (cpu_module(input=x), cpu_module(x), cpu_module.run([x])):
        np.testing.assert_array_equal(got['logits'], out['logits'])


def test_non_contiguous_input_is_copied(cpu_module, squeezenet_io):
    x, _ = squeezenet_io
    # A transposed view of the same values: kiln gets a C-contiguous copy.
    t = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not t.flags.c_contiguous
    np.testing.assert_array_equal(cpu_module(input=t)['logits'], cpu_module(input=x)['logits'])


def test_reference_executor(squeezenet_io):
    x, golden = squeezenet_io
    m = kiln.load(SQUEEZENET, device='cpu-ref')
    assert m.inputs[0].shape == (1, 3, 224, 224)
    np.testing.assert_allclose(m(input=x)['logits'], golden, rtol=RTOL, atol=ATOL)


@pytest.mark.skipif(vulkan_target() is None, reason='no Vulkan device')
def test_vulkan(squeezenet_io):
    x, golden = squeezenet_io
    artifact = kiln.compile(SQUEEZENET, target=vulkan_target())
    m = kiln.load(artifact, device='vulkan')
    np.testing.assert_allclose(m(input=x)['logits'], golden, rtol=RTOL, atol=ATOL)


@pytest.mark.skipif(vulkan_target() is None, reason='no Vulkan device')
def test_model_on_a_device_is_compiled_for_it(squeezenet_io):
    x, golden = squeezenet_io
    m = kiln.load(SQUEEZENET, device='vulkan')
    np.testing.assert_allclose(m(input=x)['logits'], golden, rtol=RTOL, atol=ATOL)


# ---- errors: kiln.Error with kiln's message ---------------------------------------------------

def test_bad_path():
    with pytest.raises(kiln.Error, match='no_such_model.onnx'):
        kiln.load('/nonexistent/no_such_model.onnx', device='cpu-ref')
    with pytest.raises(kiln.Error, match='no_such_model.onnx'):
        kiln.compile('/nonexistent/no_such_model.onnx', target='cpu')


def test_wrong_input_shape(cpu_module):
    with pytest.raises(kiln.Error, match=r"input 0 'input': expected shape \[1,3,224,224\], "
                                         r"got \[1,3,224,223\]") as e:
        cpu_module(input=np.zeros((1, 3, 224, 223), np.float32))
    assert e.value.code == 'INVALID_ARGUMENT'


def test_wrong_dtype(cpu_module):
    with pytest.raises(kiln.Error, match="input 0 'input': expected dtype f32, got f64"):
        cpu_module(input=np.zeros((1, 3, 224, 224), np.float64))
    with pytest.raises(kiln.Error, match='numpy dtype complex64 has no kiln equivalent'):
        cpu_module(input=np.zeros((1, 3, 224, 224), np.complex64))


def test_unknown_and_missing_inputs(cpu_module):
    x = np.zeros((1, 3, 224, 224), np.float32)
    with pytest.raises(kiln.Error, match=r"unknown input 'image' \(the model's inputs: input\)"):
        cpu_module(image=x)
    with pytest.raises(kiln.Error, match="missing input 'input'"):
        cpu_module.run({})
    with pytest.raises(kiln.Error, match="input 'input' is given twice"):
        cpu_module(x, input=x)
    with pytest.raises(kiln.Error, match="expected at most 1 inputs"):
        cpu_module(x, x)
    with pytest.raises(TypeError, match="a dict"):
        cpu_module.run(x)


def test_reference_errors():
    m = kiln.load(SQUEEZENET, device='cpu-ref')
    with pytest.raises(kiln.Error, match="input"):
        m(input=np.zeros((1, 3, 2, 2), np.float32))


def test_load_errors(cpu_artifact):
    with pytest.raises(kiln.Error, match="runs models, not artifacts"):
        kiln.load(cpu_artifact, device='cpu-ref')
    with pytest.raises(kiln.Error) as e:
        kiln.load(cpu_artifact[:100], device='cpu')
    assert e.value.code == 'INVALID_ARTIFACT'
    with pytest.raises(kiln.Error) as e:
        kiln.load(cpu_artifact, device='nosuchdriver')
    assert e.value.code == 'NOT_FOUND'


def test_compile_errors():
    with pytest.raises(kiln.Error, match="unknown target 'tpu'"):
        kiln.compile(SQUEEZENET, target='tpu')
    with pytest.raises(kiln.Error, match="precision 'int4' is not supported"):
        kiln.compile(SQUEEZENET, target='cpu', precision='int4')
    with pytest.raises(kiln.Error, match="--precision bf16: target 'cpu' cannot run bf16"):
        kiln.compile(SQUEEZENET, target='cpu', precision='bf16')
    with pytest.raises(kiln.Error, match="--precision fp16: target 'vulkan' lacks shaderFloat16"):
        kiln.compile(SQUEEZENET, target='vulkan', precision='fp16')


def test_model_without_outputs(tmp_path):
    g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])], [])
    path = tmp_path / 'no_outputs.onnx'
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), str(path))
    with pytest.raises(kiln.Error, match='no_outputs.onnx: the model has no outputs'):
        kiln.compile(path, target='cpu')


# ---- dtypes: every numpy dtype kiln has, through a transpose, on every device ---------------

DTYPES = [np.float32, np.float16, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint8,
          np.bool_]


def transpose_model(tmp_path, dtype):
    """y = Transpose(x) and z = Reshape(x, [15]) for a 3x5 x of `dtype`."""
    t = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    g = helper.make_graph(
        [helper.make_node('Transpose', ['x'], ['y'], perm=[1, 0]),
         helper.make_node('Reshape', ['x', 'flat'], ['z'])], 'g',
        [helper.make_tensor_value_info('x', t, [3, 5])],
        [helper.make_tensor_value_info('y', t, [5, 3]),
         helper.make_tensor_value_info('z', t, [15])],
        [helper.make_tensor('flat', TensorProto.INT64, [1], [15])])
    path = tmp_path / ('t_%s.onnx' % np.dtype(dtype).name)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), str(path))
    return path


def sample(dtype):
    v = np.arange(15).reshape(3, 5) * 7 - 40
    if dtype == np.bool_:
        return (v % 3) == 0
    if np.issubdtype(dtype, np.unsignedinteger):
        v = np.abs(v)
    return v.astype(dtype) / (4 if np.issubdtype(dtype, np.floating) else 1)


DEVICES = ['cpu-ref', 'cpu'] + (['vulkan'] if vulkan_target() else [])


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('dtype', DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtype_round_trip(tmp_path, device, dtype):
    m = kiln.load(transpose_model(tmp_path, dtype), device=device)
    assert m.inputs[0].dtype == np.dtype(dtype)
    x = np.asarray(sample(dtype), dtype=dtype)
    out = m(x=x)
    assert out['y'].dtype == np.dtype(dtype) and out['z'].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out['y'], x.T)
    np.testing.assert_array_equal(out['z'], x.reshape(15))
    # A list of Python values becomes an array of the input's dtype.
    np.testing.assert_array_equal(m(x=x.tolist())['y'], x.T)
