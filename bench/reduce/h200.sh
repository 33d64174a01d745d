#!/usr/bin/env bash
# Large reductions: kiln (vulkan-nvidia artifacts, split into partial stages + a combine) vs
# PyTorch on the same GPU. FOLDER holds kiln_bench, gen.py and NAME.kiln / NAME.nosplit.kiln
# compiled from bench/reduce/NAME.onnx on the build machine; .gl/ as for bench/h200.sh.
#   bench/reduce/h200.sh FOLDER
set -uo pipefail
source bench/h200_env.sh
cd "$1" && python3 gen.py
for m in sum16m mean64x256k max4kx8k; do
  echo "== kiln $m"
  ./kiln_bench "$m.kiln" --device vulkan --input x=$m.in.x.npy --golden y=$m.out.y.npy --warmup 10 --iters 100
  echo "== kiln $m before the split (one invocation per output, compiled at ace445a)"
  ./kiln_bench "$m.nosplit.kiln" --device vulkan --input x=$m.in.x.npy --golden y=$m.out.y.npy --warmup 2 --iters 10
done
python3 - <<'PY'
import time, statistics, numpy as np, torch
def bench(name, f, x):
    with torch.no_grad():
        for _ in range(10): f(x)
        torch.cuda.synchronize(); ts = []
        for _ in range(100):
            t0 = time.perf_counter(); f(x); torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    print(f"torch {name}: device-resident input, median {statistics.median(ts):.3f} ms")
    ts = []
    for _ in range(20):
        t0 = time.perf_counter(); xd = torch.from_numpy(xh).cuda(); f(xd).cpu(); ts.append((time.perf_counter() - t0) * 1e3)
    print(f"torch {name}: with host upload/download, median {statistics.median(ts):.3f} ms")
for name, f in [('sum16m', lambda x: x.sum(dim=0, keepdim=True)), ('mean64x256k', lambda x: x.mean(dim=1, keepdim=True)),
                ('max4kx8k', lambda x: x.amax(dim=1, keepdim=True))]:
    xh = np.load(f'{name}.in.x.npy'); bench(name, f, torch.from_numpy(xh).cuda())
PY
