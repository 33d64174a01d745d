#!/usr/bin/env bash
# H200 acceptance run: kiln artifacts vs PyTorch fp32 eager from the same ONNX files, same
# inputs, same GPU, one command. FOLDER is made on the build machine by
# bench/h200_models/prepare.sh (kiln_bench, gen.py, onnx_torch.py, NAME.onnx, NAME.kiln,
# NAME.stats.json, matmul*.naive.kiln); .gl/ as for bench/h200.sh. Weights and inputs are not
# carried: gen.py --npy regenerates them here from the seed (numpy), both runners read them.
#   device tool, carry [".gl", "FOLDER"]:   bash bench/h200_models/run.sh FOLDER
#   (SMALL=1 if FOLDER was prepared with SMALL=1; PROFILE=N prints the N slowest commands)
# Per model: PyTorch eager (TF32 off, cudnn.benchmark, median of 50 after 10 warm-up) saves its
# outputs; kiln_bench then runs the artifact (median of 50 after 10) and checks its outputs
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
t0=$SECONDS; $py gen.py --npy . "${small[@]}"; echo "gen.py --npy: $((SECONDS - t0)) s"
: > table.tsv
for k in *.kiln; do
  a=${k%.kiln}; m=${a%%.*}
  [ -f "$m.torch.ms" ] || {
    echo "== torch $m"
    $py onnx_torch.py "$m.onnx" --backend "$backend" --inputs . --save "$m.torch" --warmup 10 --iters 50 | tee "$m.torch.txt"
    sed -n 's/.*: median \([0-9.]*\) ms.*/\1/p' "$m.torch.txt" > "$m.torch.ms"
  }
  args=()
  for f in "$m".in.*.npy; do n=${f#"$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for f in "$m".torch.*.npy; do n=${f#"$m".torch.}; args+=(--golden "${n%.npy}=$f"); done
  echo "== kiln $a ($(stat -c %s "$k") artifact bytes)"
  ./kiln_bench "$k" --device vulkan "${args[@]}" --warmup 10 --iters 50 --rtol 1e-3 --atol 1e-4 --profile "${PROFILE:-0}" \
    | tee "$a.kiln.txt"
  echo "rc=${PIPESTATUS[0]}"
  host=$(sed -n 's/.*host \([0-9.]*\) ms, device.*/\1/p' "$a.kiln.txt")
  devms=$(sed -n 's/.*device \([0-9.]*\) ms$/\1/p' "$a.kiln.txt")
  err=$(grep -o 'max abs err [^ ]* .*' "$a.kiln.txt" | sed 's/max abs err \([^ ]*\) .*: \(.*\)/\1 \2/' | head -1)
  ymax=$(sed -n 's/.*max|y|=\([^ ]*\).*/\1/p' "$m.torch.txt" | head -1)
  printf '%s\t%s\t%s\t%s\t%s (max|y| %s)\n' "$a" "${devms:-?}" "${host:-?}" "$(cat "$m.torch.ms")" \
    "${err:-?}" "${ymax:-?}" >> table.tsv
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
echo "== summary (ms; ratio = torch eager / kiln device; err = kiln vs torch max abs err, check)"
printf '| workload | kiln device ms | kiln host ms | torch fp32 eager ms | torch / kiln device | max abs err vs torch |\n|---|---|---|---|---|---|\n'
while IFS=$'\t' read -r a d h t e; do
  r=$($py -c "print(f'{float(\"$t\") / float(\"$d\"):.2f}x')" 2>/dev/null || echo "?")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$a" "$d" "$h" "$t" "$r" "$e"
done < table.tsv
