#!/usr/bin/env python3
"""Writes the ONNX Runtime-quantised test models of tests/quant/ and their golden outputs.

Runs where onnxruntime (with its quantisation tools) is installed, i.e. on the GPU machine:
    python3 tests/quant/ort_gen.py --models DIR_WITH_SOURCE_MODELS --out DIR
The goldens are ONNX Runtime's own outputs for the quantised models on its CPU provider
(graph optimisations on, so QDQ groups run as its integer kernels). Each model NAME gets
NAME.onnx, NAME.in.INPUT.npy and NAME.out.OUTPUT.npy (kiln's naming for models with goldens).

  squeezenet1_1_qdq_s8c  static QDQ, int8 activations, per-channel int8 weights (MinMax)
  squeezenet1_1_qdq_u8   static QDQ, uint8 activations and weights, per tensor (MinMax)
  mobilenet_v2_qdq_s8c   as squeezenet1_1_qdq_s8c (int8 speed figures)
  mobilenet_v2_qdq_u8s8c static QDQ, uint8 activations, per-channel int8 weights (ORT's usual
                         choice on x86)
  bert_tiny_dyn_s8       dynamic quantisation (DynamicQuantizeLinear + MatMulInteger)
  bert_tiny_w4           weight-only int4: DequantizeLinear with block_size 32 on the MatMul
                         weights (QDQ format, symmetric)
"""
import argparse
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime import quantization as q


def save_io(sess, feeds, out_dir, name):
    for k, v in feeds.items():
        np.save(os.path.join(out_dir, f"{name}.in.{k}.npy"), v)
    outs = sess.run(None, feeds)
    for o, v in zip(sess.get_outputs(), outs):
        np.save(os.path.join(out_dir, f"{name}.out.{o.name}.npy"), v)
        print(f"  {name}: output {o.name} {v.shape} {v.dtype} max|y|={np.abs(v).max():.4g}")


def cpu_session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


class Reader(q.CalibrationDataReader):
    def __init__(self, samples):
        self.it = iter(samples)

    def get_next(self):
        return next(self.it, None)


def image_samples(x, n=8, seed=0):
    """The shared image input and n-1 deterministic variants of it (scaled, shifted, noisy)."""
    rng = np.random.default_rng(seed)
    out = [x]
    for i in range(1, n):
        out.append((x * rng.uniform(0.7, 1.2) + rng.normal(0, 0.2, x.shape)).astype(np.float32))
    return out


def static_cnn(models, out, src, name, per_channel, act, wt):
    x = np.load(os.path.join(models, f"{src}.in.input.npy"))
    with tempfile.TemporaryDirectory() as tmp:
        pre = os.path.join(tmp, "pre.onnx")
        try:
            q.quant_pre_process(os.path.join(models, f"{src}.onnx"), pre, skip_symbolic_shape=True)
        except Exception:
            traceback.print_exc()
            shutil.copy(os.path.join(models, f"{src}.onnx"), pre)
        dst = os.path.join(out, f"{name}.onnx")
        q.quantize_static(pre, dst, Reader([{"input": s} for s in image_samples(x)]),
                          quant_format=q.QuantFormat.QDQ, per_channel=per_channel,
                          activation_type=act, weight_type=wt,
                          calibrate_method=q.CalibrationMethod.MinMax)
    save_io(cpu_session(dst), {"input": x}, out, name)


def bert_feeds(models):
    return {k: np.load(os.path.join(models, f"bert_tiny.in.{k}.npy"))
            for k in ("input_ids", "attention_mask")}


def bert_dynamic(models, out):
    dst = os.path.join(out, "bert_tiny_dyn_s8.onnx")
    q.quantize_dynamic(os.path.join(models, "bert_tiny.onnx"), dst, weight_type=q.QuantType.QInt8)
    save_io(cpu_session(dst), bert_feeds(models), out, "bert_tiny_dyn_s8")


def bert_w4(models, out):
    try:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer as Quantizer
    except ImportError:
        from onnxruntime.quantization.matmul_4bits_quantizer import MatMul4BitsQuantizer as Quantizer
    model = onnx.load(os.path.join(models, "bert_tiny.onnx"))
    quant = Quantizer(model, block_size=32, is_symmetric=True, quant_format=q.QuantFormat.QDQ)
    quant.process()
    dst = os.path.join(out, "bert_tiny_w4.onnx")
    quant.model.save_model_to_file(dst, use_external_data_format=False)
    save_io(cpu_session(dst), bert_feeds(models), out, "bert_tiny_w4")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", action="append", default=[], help="write only this model (repeatable)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print("onnxruntime", ort.__version__, "onnx", onnx.__version__)
    jobs = [
        ("squeezenet1_1_qdq_s8c", lambda: static_cnn(a.models, a.out, "squeezenet1_1", "squeezenet1_1_qdq_s8c",
                                                     True, q.QuantType.QInt8, q.QuantType.QInt8)),
        ("squeezenet1_1_qdq_u8", lambda: static_cnn(a.models, a.out, "squeezenet1_1", "squeezenet1_1_qdq_u8",
                                                    False, q.QuantType.QUInt8, q.QuantType.QUInt8)),
        ("mobilenet_v2_qdq_s8c", lambda: static_cnn(a.models, a.out, "mobilenet_v2", "mobilenet_v2_qdq_s8c",
                                                    True, q.QuantType.QInt8, q.QuantType.QInt8)),
        ("mobilenet_v2_qdq_u8s8c", lambda: static_cnn(a.models, a.out, "mobilenet_v2", "mobilenet_v2_qdq_u8s8c",
                                                      True, q.QuantType.QUInt8, q.QuantType.QInt8)),
        ("bert_tiny_dyn_s8", lambda: bert_dynamic(a.models, a.out)),
        ("bert_tiny_w4", lambda: bert_w4(a.models, a.out)),
    ]
    if a.only:
        jobs = [j for j in jobs if j[0] in a.only]
    failed = 0
    for name, job in jobs:
        try:
            job()
        except Exception:
            failed += 1
            print(f"{name}: FAILED")
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
