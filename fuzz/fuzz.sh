#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with clang-14 in $FUZZ_BUILD (kiln code instrumented
# with -fsanitize=fuzzer-no-link,address,undefined), seeds their corpora (fuzz/make-corpus.sh),
# runs each target for FUZZ_SECONDS, and fails if any of them found a crash, a sanitizer report,
# a timeout or an out-of-memory. Findings are written to tests/fuzz-regressions/<target>/, where
# ctest fuzz-regressions (the normal build) replays them once fixed.
#
#   FUZZ_SECONDS=60 FUZZ_TARGETS="onnx onnx_text text_ir artifact stablehlo kir_text tflite nnef" JOBS=2 ./fuzz/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_TARGETS=${FUZZ_TARGETS:-onnx onnx_text text_ir artifact stablehlo kir_text tflite nnef}
FUZZ_RSS_MB=${FUZZ_RSS_MB:-2048}
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}

declare -A max_len=([onnx]=65536 [onnx_text]=65536 [text_ir]=16384 [artifact]=65536 [stablehlo]=32768 [kir_text]=16384 [tflite]=65536 [nnef]=32768)

san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
san+=" -fno-omit-frame-pointer"
targets=()
for t in $FUZZ_TARGETS; do targets+=("fuzz_$t"); done
(
  flock 9
  if [ ! -f "$FUZZ_BUILD/CMakeCache.txt" ]; then
    CC=clang-14 CXX=clang++-14 cmake -S . -B "$FUZZ_BUILD" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON -DKILN_WERROR=OFF \
      -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
  fi
  nice -n 10 cmake --build "$FUZZ_BUILD" -j "$JOBS" --target "${targets[@]}"
) 9>/tmp/kiln-build-fuzz.lock

./fuzz/make-corpus.sh "$FUZZ_BUILD/corpus" "$BUILD/bin/kiln"

failed=()
summary=()
for t in $FUZZ_TARGETS; do
  mkdir -p "tests/fuzz-regressions/$t" "$FUZZ_BUILD/logs"
  log="$FUZZ_BUILD/logs/fuzz_$t.log"
  echo "== fuzz_$t: ${FUZZ_SECONDS}s, corpus $FUZZ_BUILD/corpus/$t"
  dict=()
  if [ -f "$FUZZ_BUILD/corpus/$t.dict" ]; then dict=(-dict="$FUZZ_BUILD/corpus/$t.dict"); fi
  rc=0
  nice -n 10 "$FUZZ_BUILD/bin/fuzz_$t" "$FUZZ_BUILD/corpus/$t" "${dict[@]}" \
    -max_total_time="$FUZZ_SECONDS" -max_len="${max_len[$t]}" -rss_limit_mb="$FUZZ_RSS_MB" \
    -timeout=20 -print_final_stats=1 -artifact_prefix="tests/fuzz-regressions/$t/" \
    >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  line="fuzz_$t: ${runs:-?} runs in ${secs:-?} s"
  if [ -n "$runs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ]; then
    line+=" ($((runs / secs)) exec/s)"
  fi
  if [ "$rc" -ne 0 ]; then
    line+=" FAILED (exit $rc; see $log; input saved in tests/fuzz-regressions/$t/)"
    failed+=("fuzz_$t")
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$log" | head -5 || true
  fi
  summary+=("$line")
  echo "$line"
done
echo "== summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "findings in: ${failed[*]}"
  exit 1
fi
