#!/usr/bin/env bash
# H200 acceptance run: kiln artifacts vs PyTorch fp32 eager from the same ONNX files, same
# inputs, same GPU, one command. FOLDER is made on the build machine by
# bench/h200_models/prepare.sh (kiln_bench, gen.py, onnx_torch.py, NAME.onnx, NAME.kiln,
# NAME.stats.json, matmul*.naive.kiln); .gl/ as for bench/h200.sh. Weights and inputs are not
# carried: gen.py --npy regenerates them here from the seed (numpy), both runners read them.
#   device tool, carry [".gl", "FOLDER"]:   bash bench/h200_models/run.sh FOLDER
#   (SMALL=1 if FOLDER was prepared with SMALL=1; PROFILE=N prints the N slowest commands)
#   BAKED=1 (FOLDER prepared with BAKED=1): the weights become initializers, exported and
#   compiled here with the carried kiln (too big to carry), so kiln holds them as constants the
#   way PyTorch holds its parameters and each call uploads only the data input. Weights fed as
#   inputs make every call stage them (bert-base: 440 MB) while the GPU idles, and its driver
#   lowers the SM clock (345-690 MHz instead of 1980 measured), which no kernel change fixes.
#   MODELS="..." picks the models (default bert_base_b8 resnet50_b32 resnet50_b1): gen.py's
#   synthetic ones (matmul4096 mm_qkv mm_ffn1 mm_ffn2 ffn_cold ffn_warm resnet50_b1 resnet50_b32
#   bert_base_b8) and, BAKED=1 only, the real torchvision models squeezenet1_1_b1
#   squeezenet1_1_b32 mobilenet_v2_b1 mobilenet_v2_b32, rewritten by gen.py from
#   SOURCE.onnx that prepare.sh carried; add _f16 to any name with F16=1 (e.g.
#   F16=1 MODELS="squeezenet1_1_b1_f16 mobilenet_v2_b32_f16").
#   COMPILE=1 also times torch.compile (default mode, same inputs, compiled during warm-up) and
#   adds its column and a torch.compile / kiln span ratio to the table.
# Every runner is timed with the GPU's SM clock sampled (nvidia-smi, every 50 ms): the table
# gives the median clock over each one's last 400 ms (its timed loop), so a comparison made
# at different clocks shows as one.
# Per model: PyTorch eager (TF32 off, cudnn.benchmark, median of 50 after warm-up) saves its
# outputs; kiln_bench then runs the artifact (median of 50 after the same warm-up) and checks its outputs
# against PyTorch's (rtol 1e-3, atol 1e-4). Ends with one table and cuBLAS f32/f16 4096^3.
set -uo pipefail
dir=$1
backend=${BACKEND:-torch}  # BACKEND=numpy: local test of the script (lavapipe, numpy peer)
py=${PYTHON:-python3}
if [ "$backend" = torch ]; then
  source bench/h200_env.sh
  $py -c "import onnx, torch; print('onnx', onnx.__version__, 'torch', torch.__version__)" \
    || { echo "run.sh needs python3 with onnx and torch"; exit 1; }
fi
cd "$dir"
small=(); [ "${SMALL:-0}" = 1 ] && small=(--small)
# F16=1: the NAME_f16 models too (gen.py --f16: float16 weights, inputs and outputs). PyTorch
# runs them in float16 (its fp16 eager time); their golden is the same model run in float32
# (onnx_torch.py --upcast) rounded to float16, and kiln's check uses TOL16.
f16=(); [ "${F16:-0}" = 1 ] && f16=(--f16)
tol16=${TOL16:---rtol 1e-2 --atol 5e-2}
baked=()
if [ "${BAKED:-0}" = 1 ]; then
  baked=(--baked)
  export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for m in ${MODELS:-bert_base_b8 resnet50_b32 resnet50_b1}; do
    $py gen.py --onnx . --baked --only "$m" "${small[@]}" "${f16[@]}" || exit 1
    t0=$(date +%s%N)
    ./kiln compile "$m.onnx" -o "$m.kiln" --target vulkan-nvidia --stats "$m.stats.json" || exit 1
    echo "$m: compiled on this machine in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    if [ -x kiln.prev ]; then  # the previous compiler (prepare.sh PREV=path), same run
      ./kiln.prev compile "$m.onnx" -o "$m.prev.kiln" --target vulkan-nvidia || exit 1
    fi
    for v in ${VARIANTS:-}; do  # VARIANTS="name=--compile-flags,with,commas ..."
      ./kiln compile "$m.onnx" -o "$m.${v%%=*}.kiln" --target vulkan-nvidia $(echo "${v#*=}" | tr , ' ') || exit 1
    done
  done
fi
t0=$SECONDS; $py gen.py --npy . "${small[@]}" "${baked[@]}" "${f16[@]}"; echo "gen.py --npy: $((SECONDS - t0)) s"
# Runs a command while sampling the SM clock; prints the median clock of its last 400 ms.
clocked() {
  local log sampler=; log=$(mktemp)
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -lms 50 > "$log" 2>/dev/null &
    sampler=$!
  fi
  "$@"; local rc=$?
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  # the last 8 samples (400 ms): the timed loop, not the start-up before it
  tail -n 8 "$log" | sort -n | awk '{v[NR] = $1} END {if (NR) printf "clock: median %d MHz (min %d, max %d) over the last %d samples\n", v[int((NR + 1) / 2)], v[1], v[NR], NR}'
  rm -f "$log"
  return $rc
}
# Both runners warm up for WARM seconds (default 2) besides their 10 calls: a model whose calls
# take ~1 ms finishes 60 calls before the driver has raised the clock (resnet50 b1 ran at 390
# MHz in one call and at 1980 in the next).
warm=${WARM:-2}
: > table.tsv
for k in *.kiln; do
  a=${k%.kiln}; m=${a%%.*}
  [ -f "$m.torch.ms" ] || {
    echo "== torch $m"
    clocked $py onnx_torch.py "$m.onnx" --backend "$backend" --inputs . --save "$m.torch" --warmup 10 --warmup-seconds "$warm" --iters 50 | tee "$m.torch.txt"
    sed -n 's/.*: median \([0-9.]*\) ms.*/\1/p' "$m.torch.txt" > "$m.torch.ms"
    if [ "${COMPILE:-0}" = 1 ] && [ "$backend" = torch ]; then  # torch.compile of the same run
      echo "== torch.compile $m"
      clocked $py onnx_torch.py "$m.onnx" --inputs . --compile --warmup 10 --warmup-seconds "$warm" --iters 50 | tee "$m.compile.txt"
      sed -n 's/.*: median \([0-9.]*\) ms.*/\1/p' "$m.compile.txt" > "$m.compile.ms"
    fi
    case $m in *_f16)  # the golden: the float16 model computed in float32
      $py onnx_torch.py "$m.onnx" --backend "$backend" --inputs . --save "$m.torch" --upcast --warmup 1 --iters 1 | tee -a "$m.torch.txt";;
    esac
  }
  tol=(--rtol 1e-3 --atol 1e-4); case $m in *_f16) read -r -a tol <<< "$tol16";; esac
  args=()
  for f in "$m".in.*.npy; do n=${f#"$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for f in "$m".torch.*.npy; do n=${f#"$m".torch.}; args+=(--golden "${n%.npy}=$f"); done
  echo "== kiln $a ($(stat -c %s "$k") artifact bytes)"
  clocked ./kiln_bench "$k" --device vulkan "${args[@]}" --warmup 10 --warmup-seconds "$warm" --iters 50 "${tol[@]}" --profile "${PROFILE:-0}" \
    | tee "$a.kiln.txt"
  echo "rc=${PIPESTATUS[0]}"
  host=$(sed -n 's/.*host \([0-9.]*\) ms, device.*/\1/p' "$a.kiln.txt")
  devms=$(sed -n 's/.*device \([0-9.]*\) ms, span.*/\1/p' "$a.kiln.txt")
  span=$(sed -n 's/^commands:.*span \([0-9.]*\) ms$/\1/p' "$a.kiln.txt")
  tspan=$(sed -n 's/^timed calls.*span \([0-9.]*\) ms$/\1/p' "$a.kiln.txt")
  err=$(grep -o 'max abs err [^ ]* .*' "$a.kiln.txt" | sed 's/max abs err \([^ ]*\) .*: \(.*\)/\1 \2/' | head -1)
  ymax=$(sed -n 's/.*max|y|=\([^ ]*\).*/\1/p' "$m.torch.txt" | head -1)
  clk=$(sed -n 's/^clock: median \([0-9]*\).*/\1/p' "$a.kiln.txt"); tclk=$(sed -n 's/^clock: median \([0-9]*\).*/\1/p' "$m.torch.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (max|y| %s)\t%s / %s\n' "$a" "${devms:-?}" "${span:-?}" "${tspan:-?}" "${host:-?}" "$(cat "$m.torch.ms")" "$(cat "$m.compile.ms" 2>/dev/null || echo -)" \
    "${err:-?}" "${ymax:-?}" "${clk:-?}" "${tclk:-?}" >> table.tsv
done
[ "$backend" = torch ] && echo "== cuBLAS via torch.matmul, 4096^3, median of 50 after 10 (TF32 off)" &&
$py - <<'PY'
import time, statistics, torch
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
n = 4096
for dt in (torch.float32, torch.float16):
    a = torch.randn(n, n, device="cuda", dtype=dt); b = torch.randn(n, n, device="cuda", dtype=dt)
    for _ in range(10): a @ b
    torch.cuda.synchronize(); ts = []
    for _ in range(50):
        t0 = time.perf_counter(); a @ b; torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(ts)
    print(f"cuBLAS {str(dt)[6:]} {n}^3: median {ms:.3f} ms, {2 * n**3 / ms / 1e9:.1f} TFLOP/s")
PY
# device: kiln's commands' own times summed; span: first command's start to the last one's end
# (the barriers and gaps between commands included, as PyTorch's wall time includes its launch
# gaps) in plain calls; timed span: the same in the calls that also wrote per-command
# timestamps (the device column's calls); host: kiln's whole plain call (input upload, output
# read-back, submit and wait included).
echo "== summary (ms; ratios = torch eager / kiln; err = kiln vs torch max abs err, check)"
printf '| workload | kiln device ms | kiln span ms | kiln timed span ms | kiln host ms | torch eager ms (fp32; fp16 for *_f16) | torch.compile ms (COMPILE=1) | torch / kiln device | torch / kiln span | torch.compile / kiln span | max abs err vs torch | SM MHz kiln / torch |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n'
ratio() { $py -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}x')" 2>/dev/null || echo "?"; }
while IFS=$'\t' read -r a d s ts h t tc e c; do
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$a" "$d" "$s" "$ts" "$h" "$t" "$tc" "$(ratio "$t" "$d")" "$(ratio "$t" "$s")" "$(ratio "$tc" "$s")" "$e" "$c"
done < table.tsv
