#!/usr/bin/env bash
# The ONNX node suite and the kernel-IR semantics tests on the GPU machine (NVIDIA H200), with
# artifacts compiled there for the live device, checked against the lavapipe expected-pass
# list: every test that passes on lavapipe must pass on the H200 too.
#   on the build machine, after make build:   bash bench/h200_conform.sh prepare FOLDER
#   on the GPU machine (device tool, carry [".gl", "FOLDER"]):
#                                             bash bench/h200_conform.sh run FOLDER
# FOLDER must be inside the checkout and ignored by git (e.g. listed in .git/info/exclude).
# prepare gathers kiln, kiln_kir_run_tests, the three shared libraries the GPU machine lacks
# and the node tests (../shared/onnx-tests/node, packed: ~7 MB). run writes FOLDER's results
# to $OUT (when set): h200.node.json (kiln conform --json), h200.node.txt (the passing tests,
# commit in the header: copy it to tests/conformance/ and run scripts/conformance-report.py
# --h200 tests/conformance/h200.node.txt to record the count in docs/CONFORMANCE.md), COMMIT and
# the two logs.
# FILTER=regex runs a subset of the node tests; LOCAL=1 runs on this machine (lavapipe).
set -uo pipefail
mode=$1 dir=$2
case $mode in
prepare)
  set -e
  mkdir -p "$dir"
  cp build/bin/kiln build/bin/kiln_kir_run_tests "$dir/"
  for l in libonnx_proto.so.1 libprotobuf.so.32 libfmt.so.9; do
    cp "/lib/x86_64-linux-gnu/$l" "$dir/"
  done
  tar czf "$dir/node.tgz" -C "${NODE_PARENT:-../shared/onnx-tests}" node
  git rev-parse HEAD > "$dir/COMMIT"
  du -sh "$dir"
  ;;
run)
  [ "${LOCAL:-0}" = 1 ] || source bench/h200_env.sh  # LOCAL=1: try the script on this machine
  export LD_LIBRARY_PATH=$PWD/$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  out=${OUT:-$dir}
  echo "commit $(cat "$dir/COMMIT")"
  [ "$out" = "$dir" ] || cp "$dir/COMMIT" "$out/COMMIT"
  work=$(mktemp -d)
  tar xzf "$dir/node.tgz" -C "$work"
  # Without the validation layer there: the GPU machine has none, and Debian 12's (1.3.239)
  # predates VK_KHR_cooperative_matrix, so it rejects the device kiln creates on the H200.
  # One process per test: on the GPU machine, NVIDIA's driver refused vkCreateInstance with
  # VK_ERROR_INCOMPATIBLE_DRIVER after a handful of instances in one process.
  echo "== kernel-IR semantics (kiln_kir_run_tests, one process per test)"
  semantics=0
  : > "$out/kir_run.log"
  for t in $("$dir/kiln_kir_run_tests" --gtest_list_tests |
             awk '/^[^ ]/ {s = $1} /^  / {print s $1}'); do
    KILN_VULKAN_VALIDATION=0 "$dir/kiln_kir_run_tests" --gtest_filter="$t" >> "$out/kir_run.log" 2>&1 \
      || semantics=1
  done
  grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|worst relative" "$out/kir_run.log"
  echo "== ONNX node suite on the live device (kiln conform --device vulkan)"
  t0=$SECONDS
  filter=(); [ -n "${FILTER:-}" ] && filter=(--filter "$FILTER")  # FILTER=regex: a subset
  "$dir/kiln" conform "$work/node" --device vulkan -j "$(nproc)" "${filter[@]}" \
    --expect tests/conformance/vulkan.node.txt --json "$out/h200.node.json" \
    --write-expect "$out/h200.node.list" > "$out/conform.log" 2>&1
  conform=$?
  grep -E "^expectations|passed, .* failed|^REGRESSION|^NEW" "$out/conform.log"
  for t in $(sed -n 's/^REGRESSION \([^:]*\):.*/\1/p' "$out/conform.log"); do
    grep "^FAIL $t:" "$out/conform.log" | cut -c1-300
  done
  echo "node suite: $((SECONDS - t0)) s; kiln_kir_run_tests rc=$semantics, conform rc=$conform"
  { echo "# Tests that passed on an NVIDIA H200 (device vulkan, artifacts compiled there for vulkan-nvidia)"
    echo "# commit $(cut -c1-7 "$dir/COMMIT"), bench/h200_conform.sh run FOLDER; of $(grep -c '"name"' "$out/h200.node.json")"
    grep -v '^#' "$out/h200.node.list"; } > "$out/h200.node.txt"
  rm -rf "$work" "$out/h200.node.list"
  [ $semantics = 0 ] && [ $conform = 0 ]
  ;;
*) echo "usage: $0 prepare|run FOLDER" >&2; exit 2 ;;
esac
