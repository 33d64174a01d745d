#!/usr/bin/env bash
# Softmax over long rows: kiln (vulkan-nvidia; split max / sum-of-exp stages + chunked write) vs
# the one-invocation-per-row kernel (NAME.nosplit.kiln) vs PyTorch on the same GPU.
#   bench/reduce/softmax_h200.sh FOLDER
set -uo pipefail
source bench/h200_env.sh
cd "$1" && python3 softmax_gen.py
for m in softmax64x32k softmax8x1m; do
  echo "== kiln $m"
  ./kiln_bench "$m.kiln" --device vulkan --input x=$m.in.x.npy --golden y=$m.out.y.npy --warmup 10 --iters 100
  echo "== kiln $m, one invocation per row"
  ./kiln_bench "$m.nosplit.kiln" --device vulkan --input x=$m.in.x.npy --golden y=$m.out.y.npy --warmup 2 --iters 20
done
python3 - <<'PY'
import time, statistics, numpy as np, torch
for name in ['softmax64x32k', 'softmax8x1m']:
    x = torch.from_numpy(np.load(f'{name}.in.x.npy')).cuda()
    with torch.no_grad():
        for _ in range(10): torch.softmax(x, dim=1)
        torch.cuda.synchronize(); ts = []
        for _ in range(100):
            t0 = time.perf_counter(); torch.softmax(x, dim=1); torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    print(f"torch {name}: device-resident input, median {statistics.median(ts):.3f} ms")
PY
