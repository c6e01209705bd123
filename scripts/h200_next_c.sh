#!/usr/bin/env bash
# RAN in session 42 on 1e6bcb8 (an H100: results/2026-12-06-s42/a).  The experiment it measures (HUMMING_WG_WINDOWS,
# HUMMING_WG_ZERO_FOLD, the "_wf" choices) was slower and has been removed, so on later trees its steps fail to parse.
# Next session, call C (an H200): session 41's experiment for the 9-16-token wgmma decode -- the windowed route with
# integer zeros folded through the window sums of x (HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS,HUMMING_WG_ZERO_FOLD: the
# MMAs take the raw pairs, no HADD2 / HMUL2 per pair; nvdisasm of the wide layer's choice: 492 main-loop
# instructions per 256 weights a thread against 706 for the default operand route and 567 for the windows alone).
# (1) its GPU tests (test_direct_wgmma_windows with both define sets, test_direct_wgmma_wfold_choice: never run on a
# GPU); (2) the int4 bench's own A/B at M = 12 / 16 under the three define sets; (3) one sweep of the 16-token choices
# with and without "_wf" (KernelChoice.wfold: the same kernel per choice), and the 8-token wgmma choice at 4 / 8;
# (4) the int4 bench of record with M=2 (the two-token prefetch rule, session 41) -- on an H200 only.  Carry .whl.
. scripts/h200_setup.sh
call_results c
par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
step 200 python3 -m pytest -v --tb=short -rf $par -m gpu tests/test_gemm_direct_gpu.py -k "wgmma_windows or wfold" \
  >$R/test_windows.log 2>&1
grep -E "FAILED|passed|failed|Error" $R/test_windows.log | cut -c1-200 | tail -8; pack
AB_ARGS="--ms 12,16"
ab_int4 default; ab_int4 windows HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS
ab_int4 zerofold HUMMING_DEBUG_DEFINES=HUMMING_WG_WINDOWS,HUMMING_WG_ZERO_FOLD; pack
unset AB_ARGS
B16=bt16_wn8_tm2_wk1_ak256_s2
# the per-choice form ("_wf", KernelChoice.wfold) beside the defaults in one sweep: same process, same run
SWEEP_TIMEOUT=100 sweep_case zf_m16 $I4 12,16 $SH ${B16}_direct_wgmma,${B16}_wf_direct_wgmma,${B16}_c2_direct_wgmma,${B16}_c2_wf_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s4_wf_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s8_wf_direct_wgmma
SWEEP_TIMEOUT=60 sweep_case zf_m8 $I4 4,8 6144x4096 bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt8_wn8_tm1_wk1_ak256_s4_wf_direct_wgmma
if grep -q H200 "$OUT/device.txt"; then
  step 200 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,2,16,64,256 --cold none --no-eager \
    --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
  grep -A3 "^Summary" "$R/bench_int4.log"; pack
fi
