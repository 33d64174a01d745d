# lit configuration of the kernel-IR text tests (tests/kir/*.kir).
#
# Run: /usr/bin/python3 /usr/lib/llvm-14/build/utils/lit/lit.py -v tests/kir \
#        --param kiln_bin=build/bin
# (ctest runs it as the `lit-kir` test). Tests use %kiln for the kiln binary and FileCheck/not
# from LLVM 14.
import os

import lit.formats

config.name = 'kiln-kir'
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = ['.kir', '.test']
config.excludes = ['Inputs']
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

_root = os.path.abspath(os.path.join(config.test_source_root, '..', '..'))
kiln_bin = lit_config.params.get('kiln_bin') or os.environ.get('KILN_BIN') or \
    os.path.join(_root, 'build', 'bin')
kiln_bin = os.path.abspath(kiln_bin)
kiln = os.path.join(kiln_bin, 'kiln')
if not os.path.exists(kiln):
    lit_config.fatal('kiln binary not found at %s (pass --param kiln_bin=DIR)' % kiln)

# Scratch files (%t) go next to the binaries, not into the source tree.
config.test_exec_root = os.path.join(os.path.dirname(kiln_bin), 'tests', 'kir-lit')

llvm_bin = lit_config.params.get('llvm_bin', '/usr/lib/llvm-14/bin')
if not os.path.exists(os.path.join(llvm_bin, 'FileCheck')):
    lit_config.fatal('FileCheck not found in %s (pass --param llvm_bin=DIR)' % llvm_bin)
config.environment['PATH'] = os.pathsep.join([llvm_bin, config.environment.get('PATH', '')])

config.substitutions.append(('%kiln', kiln))
