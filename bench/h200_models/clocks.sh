#!/usr/bin/env bash
# Samples the GPU's SM clock, power and throttle reasons every 50 ms while kiln_bench runs one
# artifact, to tell clock changes from kernel effects (RESULTS.md, evening H200 runs: the same
# kernel ran 1.6x slower inside bert-base than alone). Device tool, carry [".gl", "FOLDER"]:
#   bash bench/h200_models/clocks.sh FOLDER MODEL [ITERS]      (writes $OUT/MODEL.smi.csv)
set -uo pipefail
dir=$1 model=$2 iters=${3:-200}
cd "$dir"
${PYTHON:-python3} gen.py --npy . --only "$model" > /dev/null
args=()
for f in "$model".in.*.npy; do n=${f#"$model".in.}; args+=(--input "${n%.npy}=$f"); done
out=${OUT:-.}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 50 > "$out/$model.smi.csv" &
sampler=$!
sleep 1
./kiln_bench "$model.kiln" --device vulkan "${args[@]}" --warmup 10 --iters "$iters" --profile 300 \
  > "$out/$model.bench.txt" 2>&1
sleep 1
kill "$sampler"
grep median "$out/$model.bench.txt"
# SM clock / throttle reasons seen while it ran, most frequent first
awk -F', ' 'NR > 1 {print $2, $6}' "$out/$model.smi.csv" | sort | uniq -c | sort -rn | head
