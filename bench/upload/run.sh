#!/usr/bin/env bash
# GPU machine side of the upload benchmark (see prepare.sh). In one run, alternating: kiln's
# call on the 64 MiB input (host time per call, median; the model's own work is one element)
# with the chunked upload at several chunk sizes and off (KILN_UPLOAD_CHUNK_BYTES=0: one copy
# after the whole memcpy), the host copy on 1, 4 or 8 threads, and PyTorch's torch.from_numpy(x).cuda() + synchronize from the same
# pageable array (and from pinned memory, for reference).
set -uo pipefail
dir=$1
source bench/h200_env.sh
cd "$dir"
python3 -c "import numpy as np; np.save('x.npy', np.random.default_rng(0).random(16777216, dtype=np.float32))"
torch_py='
import statistics, time, numpy as np, torch
x = np.load("x.npy"); t = torch.from_numpy(x); p = t.pin_memory()
def med(f):
    for _ in range(10): f()
    ts = []
    for _ in range(50):
        t0 = time.perf_counter(); f(); torch.cuda.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)
print(f"torch .cuda() pageable: median {med(lambda: t.cuda()):.3f} ms")
print(f"torch .cuda() pinned:   median {med(lambda: p.cuda()):.3f} ms")
'
# Variants: COPY_THREADS:CHUNK_BYTES (KILN_COPY_THREADS, KILN_UPLOAD_CHUNK_BYTES); 1:0 is the
# runtime before the upload work (one memcpy, then one copy in the call's command list).
variants=${VARIANTS:-"1:0 1:8388608 8:0 8:8388608 8:16777216 4:8388608"}
for round in 1 2; do
  echo "== round $round"
  python3 -c "$torch_py"
  for v in $variants; do
    line=$(KILN_COPY_THREADS=${v%%:*} KILN_UPLOAD_CHUNK_BYTES=${v##*:} ./kiln_bench upload.kiln \
      --device vulkan --input x=x.npy --warmup 10 --iters 50 | grep -E "median of|error")
    echo "kiln threads ${v%%:*} chunk ${v##*:}: $line"
  done
done
