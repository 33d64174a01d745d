#!/usr/bin/env bash
# Compiles every model (ONNX, StableHLO .mlir) of the given folders with two kiln builds under
# `--schedule naive` and compares the artifacts' sha256 sums: a new strategy must leave the
# naive kernels (and everything else) byte for byte as they were. A model that one build
# refuses must be refused by the other too (counted as "refused by both").
#   scripts/compare-naive-artifacts.sh OLD_KILN NEW_KILN [REGEX] [FOLDER...]
# REGEX filters model paths (default: all); folders default to models/, ../shared/models,
# ../shared/onnx-tests and tests/stablehlo/programs. Targets: $TARGETS (default: vulkan
# vulkan-lavapipe vulkan-nvidia). Exit status 1 when any artifact differs.
set -uo pipefail
old=$1 new=$2 re=${3:-.}
shift $(($# < 3 ? $# : 3))
root=$(cd "$(dirname "$0")/.." && pwd)
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$root/models" "$root/../shared/models" "$root/../shared/onnx-tests"
                              "$root/tests/stablehlo/programs")
targets=${TARGETS:-vulkan vulkan-lavapipe vulkan-nvidia}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0 refused=0
while IFS= read -r m; do
  for t in $targets; do
    "$old" compile "$m" -o "$tmp/old.kiln" --target "$t" --schedule naive > /dev/null 2>&1
    a=$?
    "$new" compile "$m" -o "$tmp/new.kiln" --target "$t" --schedule naive > /dev/null 2>&1
    b=$?
    if [ $a -ne 0 ] || [ $b -ne 0 ]; then
      if [ $a -ne 0 ] && [ $b -ne 0 ]; then refused=$((refused + 1)); else
        echo "DIFFERS (one build refuses: old $a new $b): $m $t"; differ=$((differ + 1)); fi
      rm -f "$tmp/old.kiln" "$tmp/new.kiln"
      continue
    fi
    if [ "$(sha256sum < "$tmp/old.kiln")" = "$(sha256sum < "$tmp/new.kiln")" ]; then
      same=$((same + 1))
    else
      echo "DIFFERS: $m $t"
      differ=$((differ + 1))
    fi
    rm -f "$tmp/old.kiln" "$tmp/new.kiln"
  done
done < <(find "${dirs[@]}" \( -name '*.onnx' -o -name '*.mlir' \) 2>/dev/null | grep -E "$re" | sort)
echo "identical: $same, differ: $differ, refused by both: $refused"
[ $differ -eq 0 ]
