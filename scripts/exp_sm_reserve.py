"""Check vllm_humming.tuning.sm_reserve on a GPU: a compute-bound matmul must slow down about as SMs are held
(132 -> 92 SMs: ~1.43x), a device copy (HBM-bound) much less.  Prints us per call for each reservation."""
import sys

import torch

from vllm_humming.tuning import sweep

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
src = torch.empty(1 << 28, device="cuda", dtype=torch.uint8)
dst = torch.empty_like(src)
total = torch.cuda.get_device_properties(0).multi_processor_count
from vllm_humming.tuning import sm_reserve

ratios = {}
for n in [int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "0,40,66").split(",")]:
  for sleep_ns in ((0, 2000) if n else (0,)):
    sweep.RESERVED_SMS = n
    sm_reserve.DEFAULT_SLEEP_NS = sleep_ns
    t_mm = sweep.time_graph([lambda: torch.mm(a, b)], replays=10)
    t_cp = sweep.time_graph([lambda: dst.copy_(src)], replays=10)
    print(f"reserve {n:3d} ({total - n} SMs left, sleep {sleep_ns} ns): mm 8192^3 {t_mm:9.1f} us ({2 * 8192**3 / t_mm / 1e6:.0f} TFLOP/s)"
          f" | copy 256 MB {t_cp:8.1f} us ({2 * src.numel() / t_cp / 1e6:.2f} TB/s)", flush=True)
    ratios[(n, sleep_ns)] = t_mm
base = ratios.get((0, 0))
# exit status 3 when the busy-spin reservation slows the matmul by more than twice the SM ratio (the tool is broken)
bad = [n for (n, sl), t in ratios.items() if n and sl == 0 and base and t / base > 2 * total / (total - n)]
sys.exit(3 if bad else 0)
