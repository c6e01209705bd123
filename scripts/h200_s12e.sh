#!/usr/bin/env bash
# Session 12, call E (carry .whl): the bench on the final tree -- int4 at every M (cold compile, eager), int3 / int8 /
# MXFP4 at M = 1 / 16 / 64 / 256, ours vs upstream vs cuBLAS bf16 in the same run; cold NVRTC time of the new defaults.
. scripts/h200_setup.sh
call_results e
step 230 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --json $R/bench_int4.json >$R/bench_int4.log 2>&1
grep -E "cold compile" $R/bench_int4.log | cut -c1-110 | head -3
grep -A3 "^Summary" $R/bench_int4.log | tail -2; pack
for f in w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
  step 80 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A3 "^Summary" $R/bench_$f.log | tail -1; pack
done
step 45 python3 - >$R/compile_defaults.txt 2>&1 <<'PY'
# cold NVRTC time of each new default (empty cache per kernel), sm_90a
import os, tempfile, time, torch
from vllm_humming.desc import WeightDesc
from vllm_humming.jit import compile_kernel
from vllm_humming.ops.gemm import _spec, format_params
from vllm_humming.tuning.heuristics import KernelChoice
fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
for c in ("bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma", "bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma", "bt64_wn8_tm2_wk1_ak1_s4_wgmma",
          "bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma", "bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma"):
    os.environ["HUMMING_CACHE_DIR"] = tempfile.mkdtemp()
    t = time.perf_counter(); a = compile_kernel(_spec(fp, KernelChoice.parse(c), torch.bfloat16, "sm_90a"))
    print(f"{c}: cold compile {time.perf_counter() - t:.2f} s (nvrtc {a.compile_s:.2f} s)")
PY
cat $R/compile_defaults.txt | tail -5; pack
