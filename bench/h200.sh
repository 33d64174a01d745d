#!/usr/bin/env bash
# Runs kiln artifacts compiled for vulkan-nvidia on the GPU machine and times PyTorch on the
# same GPU in the same command. Expects (carried from the build machine): .gl/ with Debian's
# libvulkan1, libglvnd0, libegl1, libgl1, libglx0, libopengl0, libgles2 .debs (NVIDIA's
# Vulkan ICD lives in libGLX_nvidia, which needs glvnd), and FOLDER with kiln_bench, NAME.kiln, NAME.in.*.npy, NAME.out.*.npy.
#   bench/h200.sh FOLDER
set -uo pipefail
dir=$1
source bench/h200_env.sh
cd "$dir"
for m in squeezenet1_1 mobilenet_v2 bert_tiny; do
  args=()
  for f in "$m".in.*.npy; do n=${f#"$m".in.}; args+=(--input "${n%.npy}=$f"); done
  for f in "$m".out.*.npy; do n=${f#"$m".out.}; args+=(--golden "${n%.npy}=$f"); done
  echo "== kiln $m ($(stat -c %s "$m.kiln") artifact bytes)"
  /usr/bin/time -v ./kiln_bench "$m.kiln" --device vulkan "${args[@]}" --warmup 10 --iters 100 \
    2> time.txt
  echo "rc=$?"
  grep -E "Maximum resident|error" time.txt
done
echo "== PyTorch (same GPU, batch 1, fp32, median of 100 after 10 warm-up calls)"
python3 - <<'PY'
import time, statistics, torch, torchvision
torch.backends.cudnn.benchmark = True
def bench(name, model, x):
    model = model.eval().cuda()
    with torch.no_grad():
        for _ in range(10): model(x)
        torch.cuda.synchronize()
        ts = []
        for _ in range(100):
            t0 = time.perf_counter(); model(x); torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) * 1e3)
    print(f"torch eager {name}: median {statistics.median(ts):.3f} ms")
x = torch.randn(1, 3, 224, 224, device="cuda")
bench("squeezenet1_1", torchvision.models.squeezenet1_1(), x)
bench("mobilenet_v2", torchvision.models.mobilenet_v2(), x)
from transformers import BertConfig, BertModel
cfg = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
ids = torch.randint(0, cfg.vocab_size, (1, 32), device="cuda")
mask = torch.ones(1, 32, dtype=torch.long, device="cuda")
class Bert(torch.nn.Module):
    def __init__(self): super().__init__(); self.m = BertModel(cfg)
    def forward(self, _): return self.m(input_ids=ids, attention_mask=mask).last_hidden_state
bench("bert_tiny (2 layers, hidden 128, seq 32)", Bert(), None)
PY
