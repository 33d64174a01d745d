# lit configuration of the hostile-input tests (tests/hostile/*.test): malformed, absurd or
# corrupt models, artifacts and .npy files, each refused with one clear error line, never a
# crash or a hang. The inputs are generated at test time by make_cases.py. Run by ctest as
# `lit-hostile`.
import os

import lit.formats

config.name = 'kiln-hostile'
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = ['.test']
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
_root = os.path.abspath(os.path.join(config.test_source_root, '..', '..'))
kiln_bin = os.path.abspath(lit_config.params.get('kiln_bin') or os.path.join(_root, 'build', 'bin'))
config.test_exec_root = os.path.join(os.path.dirname(kiln_bin), 'tests', 'hostile-lit')
llvm_bin = lit_config.params.get('llvm_bin', '/usr/lib/llvm-14/bin')
config.environment['PATH'] = os.pathsep.join([llvm_bin, config.environment.get('PATH', '')])
config.environment['XDG_RUNTIME_DIR'] = os.environ.get('XDG_RUNTIME_DIR', '/tmp')
for var in ['KILN_MAX_TENSOR_BYTES', 'KILN_MAX_MODEL_BYTES', 'KILN_MAX_GRAPH_DEPTH']:
    config.environment.pop(var, None)
_here = config.test_source_root
config.substitutions.append(('%kiln', os.path.join(kiln_bin, 'kiln')))
config.substitutions.append(('%python', '/usr/bin/python3'))
config.substitutions.append(('%make_cases', '/usr/bin/python3 ' + os.path.join(_here, 'make_cases.py')))
# %err CMD: CMD must exit with status 1 (not a signal, not a hang: killed after 60 s) and write
# exactly one line to stderr, starting with "error: "; that line is echoed for FileCheck.
config.substitutions.append(('%err', '/usr/bin/python3 ' + os.path.join(_here, 'expect_error.py')))
config.substitutions.append(('%check_nonfinite', '/usr/bin/python3 ' + os.path.join(_here, 'check_nonfinite.py')))
# The per-test timeout needs psutil; expect_error.py has its own.
try:
    import psutil  # noqa: F401
    lit_config.maxIndividualTestTime = 300
except ImportError:
    pass
# Tests that need a Vulkan device (lavapipe in CI) say REQUIRES: vulkan.
import subprocess
try:
    _devices = subprocess.run([os.path.join(kiln_bin, 'kiln'), 'devices'], capture_output=True,
                              text=True, timeout=60, env=dict(os.environ, XDG_RUNTIME_DIR=config.environment['XDG_RUNTIME_DIR'])).stdout
    if 'vulkan:' in _devices:
        config.available_features.add('vulkan')
except (OSError, subprocess.TimeoutExpired):
    pass
