# lit configuration of the CLI tests (tests/cli/*.test): kiln run / conform behaviour seen by
# users, error messages included. Run by ctest as `lit-cli`.
import os
import shutil

import lit.formats

config.name = 'kiln-cli'
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = ['.test']
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
_root = os.path.abspath(os.path.join(config.test_source_root, '..', '..'))
kiln_bin = os.path.abspath(lit_config.params.get('kiln_bin') or os.path.join(_root, 'build', 'bin'))
config.test_exec_root = os.path.join(os.path.dirname(kiln_bin), 'tests', 'cli-lit')
llvm_bin = lit_config.params.get('llvm_bin', '/usr/lib/llvm-14/bin')
config.environment['PATH'] = os.pathsep.join([llvm_bin, config.environment.get('PATH', '')])
config.substitutions.append(('%kiln', os.path.join(kiln_bin, 'kiln')))
config.substitutions.append(('%models', os.path.join(_root, 'models')))
config.substitutions.append(('%python', '/usr/bin/python3'))
# Graphviz's dot renders `kiln inspect --graph FILE.svg`: tests of the SVG need it.
if shutil.which('dot'):
    config.available_features.add('graphviz')
# Tests that need a Vulkan device (lavapipe in CI) say REQUIRES: vulkan.
import subprocess
config.environment['XDG_RUNTIME_DIR'] = os.environ.get('XDG_RUNTIME_DIR', '/tmp')
try:
    _devices = subprocess.run([os.path.join(kiln_bin, 'kiln'), 'devices'], capture_output=True,
                              text=True, timeout=60,
                              env=dict(os.environ, XDG_RUNTIME_DIR=config.environment['XDG_RUNTIME_DIR'])).stdout
    if 'vulkan:' in _devices:
        config.available_features.add('vulkan')
except (OSError, subprocess.TimeoutExpired):
    pass
# ONNX Runtime (onnxruntime-node, installed by bench/cpu/run.sh into BUILD/bench-cpu) runs the
# models `kiln quantize` writes in quantize.test; without it those lines are UNSUPPORTED.
_ort_dir = os.environ.get('ORT_NODE_DIR') or os.path.join(os.path.dirname(kiln_bin), 'bench-cpu')
if shutil.which('node') and os.path.isdir(os.path.join(_ort_dir, 'node_modules', 'onnxruntime-node')):
    config.available_features.add('ort')
    config.environment['ORT_NODE_DIR'] = _ort_dir
config.substitutions.append(('%ort_bench', os.path.join(_root, 'bench', 'cpu', 'ort_bench.js')))
