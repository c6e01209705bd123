"""Warm up one upstream humming-kernels layer (optional peer), then call it once between cudaProfilerStart/Stop
for an external profiler: ``ncu --profile-from-start off python3 scripts/profile_upstream.py FORMAT N K M``."""
import sys, torch
from vllm_humming.bench.formats import FORMATS
from vllm_humming.bench.peers import load_upstream

fmt_name, n, k, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
up, info = load_upstream()
if up is None:
    sys.exit(f"upstream humming not importable: {info}")
fmt = FORMATS[fmt_name]
w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.05
layer = up.make_layer(fmt, w)
x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    layer(x)
torch.cuda.synchronize()
torch.cuda.profiler.start()
layer(x)          # the profiled call
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("upstream", info.get("version"), fmt_name, n, k, m)
