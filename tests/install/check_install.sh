#!/usr/bin/env bash
# check_install.sh BUILD WORK SOURCE: installs BUILD into WORK/prefix (cmake --install), builds
# examples/run_model.c against the installed package twice, with CMake's find_package(kiln)
# and with pkg-config, compiles squeezenet1_1 with the installed CLI and runs the artifact with
# both programs on the cpu device; then imports the installed Python package. Run by ctest as
# `install`.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$3" && pwd) work=$2
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -x "$prefix/bin/kiln"
test -f "$prefix/include/kiln/kiln.h"
pc=$(find "$prefix" -name kiln.pc)
lib=$(find "$prefix" -name 'libkiln_runtime.so' -print -quit)
# The shared library exports the C API only.
extra=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^kiln_' || true)
if [ -n "$extra" ]; then
  echo "libkiln_runtime.so exports more than kiln_*:"; echo "$extra" | head; exit 1
fi

echo "== find_package(kiln)"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DKILN_EXAMPLE="$src/examples/run_model.c" > "$work/consumer.log"
cmake --build "$work/consumer" >> "$work/consumer.log"

echo "== pkg-config kiln"
export PKG_CONFIG_PATH=${pc%/kiln.pc}
# shellcheck disable=SC2046 # pkg-config prints several words on purpose
cc -std=c11 -Wall -Werror "$src/examples/run_model.c" $(pkg-config --cflags --libs kiln) \
  -Wl,-rpath,"$(pkg-config --variable=libdir kiln)" -o "$work/run_model_pc"

echo "== the installed CLI compiles, both programs run"
"$prefix/bin/kiln" compile "$src/models/squeezenet1_1.onnx" -o "$work/sq.cpu.kiln" --target cpu
for exe in "$work/consumer/run_model" "$work/run_model_pc"; do
  "$exe" "$work/sq.cpu.kiln" cpu > "$work/out.txt"
  grep "^output 'logits' f32\[1,1000\] -\?[0-9]" "$work/out.txt"
done

py=$prefix/lib/python3/dist-packages
if [ -d "$py/kiln" ]; then
  echo "== the installed Python package"
  PYTHONPATH=$py /usr/bin/python3 -c "
import sys, kiln
m = kiln.load(sys.argv[1], device='cpu')
print(kiln.__file__, m.outputs)
assert kiln.__file__.startswith(sys.argv[2])" "$work/sq.cpu.kiln" "$py"
fi
echo "install: OK"
