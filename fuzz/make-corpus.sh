#!/usr/bin/env bash
# Seeds the fuzz corpora: make-corpus.sh OUT_DIR [KILN_BIN]
#   OUT_DIR/onnx       fuzz/seeds/onnx, ../shared/onnx-tests/node/*/model.onnx when present,
#                      else models/*.onnx
#   OUT_DIR/onnx_text  the same models in protobuf text format (python3 onnx)
#   OUT_DIR/text_ir    fuzz/seeds/text_ir, each "// -----" part of tests/ir/*.kgraph, and the
#                      IR `kiln compile --print-ir-after=dce` prints for every 8th node test
#   OUT_DIR/artifact   fuzz/seeds/artifact and the artifacts `kiln compile` writes for the same
#                      node tests and models/*.onnx
#   OUT_DIR/stablehlo  fuzz/seeds/stablehlo, tests/stablehlo/programs/*.mlir,
#                      ../shared/models/*.mlir
#   OUT_DIR/tflite     fuzz/seeds/tflite, ../shared/tflite-tests/*.tflite (up to 64 KiB)
#   OUT_DIR/nnef       fuzz/seeds/nnef (graph text and .dat files), ../shared/nnef-tests/*/graph.nnef
# Every saved finding (tests/fuzz-regressions/<target>/) is a seed too. Seeds larger than 64 KiB
# are left out (the fuzzers' -max_len would cut them). Without KILN_BIN (build/bin/kiln) the
# compiled seeds are skipped. Existing corpus files are kept, so the corpora grow across runs.
#
# make-corpus.sh --builtin regenerates the small built-in seed set in fuzz/seeds/ (replayed by
# ctest fuzz-regressions) from the same sources; it needs build/bin/kiln.
set -euo pipefail
cd "$(dirname "$0")/.."
node=../shared/onnx-tests/node
max_bytes=65536

add() { # add TARGET_DIR NAME FILE: copies FILE when it is small enough
  local size
  size=$(stat -c %s "$3")
  if [ "$size" -le "$max_bytes" ] && [ ! -e "$1/$2" ]; then install -m 0644 "$3" "$1/$2"; fi
}

# Splits a lit test file at "// -----" lines into DIR/NAME.N.kgraph (RUN/CHECK lines kept:
# they are comments).
split_kgraph() {
  awk -v out="$2/$3" 'BEGIN { n = 0; f = out "." n ".kgraph" }
       /^\/\/ -----[ \t]*$/ { close(f); n++; f = out "." n ".kgraph"; next }
       { print > f }' "$1"
}

# Compiles ONNX model SRC as NAME: NAME.kiln into ART_DIR, the printed IR into IR_DIR.
# Writes each ONNX model FILE as DIR/<name>.textproto (protobuf text format).
to_textproto() { # to_textproto DIR FILE...
  local dir=$1
  shift
  /usr/bin/python3 - "$dir" "$@" <<'PY' || echo "make-corpus: python3 onnx unavailable: no onnx_text seeds"
import os, sys
import onnx
out = sys.argv[1]
for path in sys.argv[2:]:
    name = os.path.basename(os.path.dirname(path)) if os.path.basename(path) == "model.onnx" \
        else os.path.splitext(os.path.basename(path))[0]
    dst = os.path.join(out, name + ".textproto")
    if os.path.exists(dst):
        continue
    text = str(onnx.load(path, load_external_data=False))
    if len(text) <= 65536:
        with open(dst, "w") as f:
            f.write(text)
PY
}

compile_seed() {
  local kiln=$1 src=$2 name=$3 art_dir=$4 ir_dir=$5 tmp
  tmp=$(mktemp -d)
  if "$kiln" compile "$src" -o "$tmp/a.kiln" --print-ir-after=dce >/dev/null 2>"$tmp/ir"; then
    add "$art_dir" "$name.kiln" "$tmp/a.kiln"
  fi
  if grep -q '^func ' "$tmp/ir"; then
    grep -v '^// IR after' "$tmp/ir" >"$tmp/ir.kgraph" || true
    add "$ir_dir" "$name.kgraph" "$tmp/ir.kgraph"
  fi
  rm -rf "$tmp"
}

if [ "${1:-}" = "--builtin" ]; then
  kiln=${2:-build/bin/kiln}
  tests=(test_add test_conv_with_strides_padding test_if test_loop11 test_reshape_negative_dim
         test_gemm_default_matrix_bias test_lstm_defaults test_maxpool_2d_pads test_gather_0
         test_resize_upsample_scales_nearest test_layer_normalization_2d_axis0 test_scan9_sum
         test_range_float_type_positive_delta_expanded test_einsum_batch_matmul
         test_cast_FLOAT_to_FLOAT16 test_split_variable_parts_1d_opset18 test_quantizelinear)
  for t in "${tests[@]}"; do
    add fuzz/seeds/onnx "$t.onnx" "$node/$t/model.onnx"
    compile_seed "$kiln" "$node/$t/model.onnx" "$t" fuzz/seeds/artifact fuzz/seeds/text_ir
  done
  to_textproto fuzz/seeds/onnx_text fuzz/seeds/onnx/*.onnx
  for f in roundtrip parse_errors; do split_kgraph "tests/ir/$f.kgraph" fuzz/seeds/text_ir "$f"; done
  for f in ../shared/models/*.mlir; do add fuzz/seeds/stablehlo "$(basename "$f")" "$f"; done
  exit 0
fi

out=${1:?usage: make-corpus.sh OUT_DIR [KILN_BIN]}
kiln=${2:-}
for t in onnx onnx_text text_ir artifact stablehlo tflite nnef; do
  mkdir -p "$out/$t"
  for f in fuzz/seeds/$t/* tests/fuzz-regressions/$t/*; do
    if [ -f "$f" ]; then add "$out/$t" "$(basename "$(dirname "$f")").$(basename "$f")" "$f"; fi
  done
done

if [ -d "$node" ]; then
  for d in "$node"/*/; do
    if [ -f "$d/model.onnx" ]; then add "$out/onnx" "$(basename "$d").onnx" "$d/model.onnx"; fi
  done
  if [ ! -e "$out/.textproto" ]; then
    to_textproto "$out/onnx_text" "$node"/*/model.onnx
    touch "$out/.textproto"
  fi
else
  for f in models/*.onnx; do add "$out/onnx" "$(basename "$f")" "$f"; done
fi

for f in tests/ir/*.kgraph; do split_kgraph "$f" "$out/text_ir" "$(basename "$f" .kgraph)"; done

if [ -n "$kiln" ] && [ -x "$kiln" ]; then
  if [ ! -e "$out/.compiled" ]; then
    echo "make-corpus: compiling seeds with $kiln"
    if [ -d "$node" ]; then
      i=0
      for d in "$node"/*/; do
        i=$((i + 1))
        [ $((i % 8)) -eq 0 ] || continue
        compile_seed "$kiln" "$d/model.onnx" "$(basename "$d")" "$out/artifact" "$out/text_ir"
      done
    fi
    for f in models/*.onnx; do
      compile_seed "$kiln" "$f" "$(basename "$f" .onnx)" "$out/artifact" "$out/text_ir"
    done
    touch "$out/.compiled"
  fi
else
  echo "make-corpus: no kiln binary (build it with make build): compiled seeds skipped"
fi

for f in tests/stablehlo/programs/*.mlir ../shared/models/*.mlir; do
  if [ -f "$f" ]; then add "$out/stablehlo" "$(basename "$f")" "$f"; fi
done
for f in ../shared/tflite-tests/*.tflite; do
  if [ -f "$f" ]; then add "$out/tflite" "$(basename "$f")" "$f"; fi
done
for f in ../shared/nnef-tests/*/graph.nnef; do
  if [ -f "$f" ]; then add "$out/nnef" "$(basename "$(dirname "$f")").nnef" "$f"; fi
done
# libFuzzer dictionaries for the text formats: every word of the seeds and op registrations,
# plus the punctuation the grammars use.
make_dict() { # make_dict OUT FILE...
  local dict=$1
  shift
  {
    cat "$@" 2>/dev/null | grep -aoE '[A-Za-z_^#!][A-Za-z0-9_.]*' | sort -u | head -n 2000 || true
    printf '%s\n' '->' '<' '>' '(' ')' '{' '}' '[' ']' ':' ',' '=' '%' '@' '?' 'x' '0x' \
      '-1' '0' '1' '9223372036854775807' '-9223372036854775808' '1e308' '-inf' 'nan'
  } | sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/"&"/' >"$dict"
}
make_dict "$out/text_ir.dict" fuzz/seeds/text_ir/* tests/ir/*.kgraph \
  <(grep -ho 'name = "kiln\.[a-z_0-9]*"' src/ops/*.cpp | sed 's/name = "//; s/"$//')
make_dict "$out/stablehlo.dict" fuzz/seeds/stablehlo/* tests/stablehlo/programs/*.mlir
make_dict "$out/nnef.dict" fuzz/seeds/nnef/*

for t in onnx onnx_text text_ir artifact stablehlo tflite nnef; do
  echo "make-corpus: $t: $(find "$out/$t" -type f | wc -l) seeds"
done
