#!/usr/bin/env bash
# Next session's first call (any card; on an H200 the bench of record first: session 48's one-token tiles and
# session 52's whole-tile 64-token rule have not been through it).  Then session 52's experiment: bulk wgmma stages
# of FOUR atoms (32-48 KB ring slots; the stream probe, call 52E: a consumer's hold costs the stream less in bigger
# slots -- 16 -> 32 KB: 25.5 -> 24.3 µs, 40 SMs held 32.9 -> 29.0) -- its GPU test, then the wide 16- and 32-token
# tiles against the defaults (WIDE_DECODE_BULK, DECODE_BULK_32_WIDE), whole card and under an H200's per-SM load.
. scripts/h200_setup.sh
call_results a
grep -q H200 "$OUT/device.txt" && int4_record 240
step 150 python3 -m pytest -q -n 4 -m gpu tests/test_gemm_pipelines_gpu.py -k four_atom >"$R/gpu_ak4.log" 2>&1
tail -2 "$R/gpu_ak4.log" | cut -c1-200; pack
export SWEEP_TIMEOUT=100
sweep_case ak4_m16 $I4 9,16 28672x4096,19968x4096 \
  bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak4_s3_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak4_s2_tma_bulk_wgmma
sweep_case ak4_m32 $I4 24,32 28672x4096,4096x14336 \
  bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn8_tm2_wk1_ak4_s3_tma_bulk_wgmma,bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
grep -q H200 "$OUT/device.txt" || sweep_case ak4_m16_r40 $I4 16 28672x4096 \
  bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn12_tm2_wk1_ak4_s3_tma_bulk_wgmma --reserve-sms 40
