#!/usr/bin/env bash
# Session 26, call B: call A found expand + cuBLAS ahead of the bulk default for 8-bit integer codes at 576-896
# tokens (the prefill threshold for 8-bit codes is 1024).  Where does the crossover sit?  The default kernel vs
# expand + cuBLAS (timed as its own row from HUMMING_PREFILL_M=257) at 288-768 tokens, int8 and fp8 weight-only;
# then the bench of both formats at 256-1024 tokens with the upstream peer (today's defaults).
. scripts/h200_setup.sh
call_results b
I8=w:uint8b128,s:channel:bfloat16
F8=w:float8_e4m3fn,s:channel:bfloat16
HUMMING_PREFILL_M=257 SWEEP_TIMEOUT=150 sweep_case i8_m288_768 $I8 288,384,448,512,768 $SH bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma
HUMMING_PREFILL_M=257 SWEEP_TIMEOUT=150 sweep_case f8_m288_896 $F8 288,384,512,640,896 $SH bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
step 200 python3 -m vllm_humming.bench --formats w8a16-int8-channel,w8a16-fp8-channel --ms 256,512,640,1024 --cold none \
  --no-eager --json $R/bench_8bit.json >$R/bench_8bit.log 2>&1
grep -E "x cuBLAS|geomean|^ *M=|ours|upstream" $R/bench_8bit.log | tail -30
pack
