"""Writes concat_batchnorm.onnx for cpu_index_ranges.test: a channel Concat of two inputs and a
BatchNormalization whose statistics are graph inputs (so nothing folds them): on the cpu target
both run as rows of the parallel definition, their coordinates found by the index-ranges stage.
Run with /usr/bin/python3 (Debian's python3-onnx)."""
import os

import onnx
from onnx import TensorProto, helper


def main():
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info('a', f, [1, 3, 5, 7]),
           helper.make_tensor_value_info('b', f, [1, 2, 5, 7])]
    ins += [helper.make_tensor_value_info(n, f, [5]) for n in ('scale', 'bias', 'mean', 'var')]
    y = helper.make_tensor_value_info('y', f, [1, 5, 5, 7])
    nodes = [helper.make_node('Concat', ['a', 'b'], ['c'], axis=1),
             helper.make_node('BatchNormalization', ['c', 'scale', 'bias', 'mean', 'var'], ['y'])]
    g = helper.make_graph(nodes, 'concat_batchnorm', ins, [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 15)], producer_name='kiln-tests')
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'concat_batchnorm.onnx'))


if __name__ == '__main__':
    main()
