#!/usr/bin/env bash
# Session 19, call B (carry .whl; ~8 minutes): 192-row x 256-token tiles (three warpgroups of m64n256k16, 164
# registers at 384 threads, no spills on the CPU machine).  Call A (ncu, 28672x4096 M=1024): our 128 x 256 tile keeps
# the tensor pipe 71.6 % busy against upstream's ~85 %; L2 throughput 46 % (not the limit).  A third warpgroup gives
# each stage barrier 1.5x the tensor work, and 6144x4096 at M=1024 becomes 128 tiles = one wave (was 192 tiles).
. scripts/h200_setup.sh
call_results b
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "test_wgmma_tma_x and wn12" -x >$R/gpu_wn12.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/gpu_wn12.log | tail -5; pack
SWEEP_TIMEOUT=300 sweep_case wn12 $I4 256,512,1024,2048 $SH \
  bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma,bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s5_sk_tma_wgmma
HUMMING_PREFILL_M=1024 step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1024 --shapes 6144x4096 \
  --cold none --no-eager >$R/bench_small_expand.log 2>&1; grep -E "^1024 " $R/bench_small_expand.log | tail -2; pack
