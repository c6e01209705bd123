#!/usr/bin/env bash
# Session 25, call G: forced kernel choices now run at any M (GemmLayer.uses_prefill_path) -- the GPU test of it, and
# call E's int8 M=1024 sweep again, whose candidates had all timed the prefill path (expand + cuBLAS); the sweep now
# times that path as its own row.
. scripts/h200_setup.sh
call_results g
step 150 python3 -m pytest -q -m gpu tests/test_gemm_gpu.py -k "forced_choice_runs or (formats_large_m and 1024)" \
  >"$R/gpu_forced.log" 2>&1; tail -2 "$R/gpu_forced.log"; pack
I8=w:uint8b128,s:channel:bfloat16
SWEEP_TIMEOUT=150 sweep_case i8_m1024 $I8 1024 $SH \
  bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt256_wn8_tm1_wk1_ak1_s3_tma_wgmma,bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma,bt256_wn12_tm1_wk1_ak1_s4_tma_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_tma_wgmma
pack
