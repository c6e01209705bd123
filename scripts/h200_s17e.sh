#!/usr/bin/env bash
# Session 17, call E (carry .whl; ~7 minutes): the int3 / MXFP4 / int8 bench on the final defaults (M <= 256, room for
# upstream's 4096x14336), then the fused kernels at M=1024 against expand + cuBLAS (HUMMING_PREFILL_M lifted).
. scripts/h200_setup.sh
call_results e
for f in w3a16-int3-g128 w4a16-mxfp4; do
  step 130 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager --json $R/bench_$f.json \
    >$R/bench_$f.log 2>&1; grep -A8 "^== w" $R/bench_$f.log | tail -6; pack
done
step 100 python3 -m vllm_humming.bench --formats w8a16-int8-channel --ms 1,16,64 --cold none --no-eager --json $R/bench_int8.json \
  >$R/bench_int8.log 2>&1; grep -A7 "^== w" $R/bench_int8.log | tail -5; pack
HUMMING_PREFILL_M=1000000000 SWEEP_TIMEOUT=60 sweep_case m1024_fused $I4 1024 "$SH" bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma,bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma
