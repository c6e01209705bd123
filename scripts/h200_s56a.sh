#!/usr/bin/env bash
# Session 56's call.  Two opt-in K-warpgroup rules, each A/B'd with the bench (2 % to win):
#   HUMMING_NARROW16_WK (session 55: the direct wgmma decode with four K-warpgroups, 6144x4096 at 9 / 16 tokens),
#   HUMMING_NARROW64_WK (session 56: the staged TMA-x wgmma kernel with two K-warpgroups, narrow layers at 48 / 64;
#   1: 64-row tiles, 2: 128-row tiles, 3: 64-row tiles over four-atom stages);
# their GPU tests; on an H200 the int4 bench of record under the winners (a rule whose GPU tests fail stays off);
# then, time left, sweeps of K-warpgroup tiles and split counts.
. scripts/h200_setup.sh
call_results a
ab_k_warpgroups 60
gpu_test wk 130 tests/test_gemm_direct_gpu.py -k "k_warpgroups and (wk4_ak256_s4 or tma or graph)"
grep -E "FAILED|Error" "$R/gpu_wk.log" | head -8 | cut -c1-250
W16=$(python3 scripts/pick_switch.py 0.02 off="$R/ab_n16wk0.json" on="$R/ab_n16wk1.json" 2>"$R/ab_pick16.txt")
W64=$(python3 scripts/pick_switch.py 0.02 0="$R/ab_n64wk0.json" 1="$R/ab_n64wk1.json" 2="$R/ab_n64wk2.json" 3="$R/ab_n64wk3.json" 2>"$R/ab_pick64.txt")
cat "$R/ab_pick16.txt" "$R/ab_pick64.txt"
grep -q "direct_wgmma_k_warpgroups.*FAILED\|FAILED.*direct_wgmma_k_warpgroups" "$R/gpu_wk.log" && W16=off
grep -q "FAILED.*staged_wgmma_k_warpgroups" "$R/gpu_wk.log" && W64=0
echo "winners: NARROW16_WK=$W16 NARROW64_WK=$W64" | tee "$R/winners.txt"; pack
echo "elapsed ${SECONDS}s"
if grep -q H200 "$OUT/device.txt" && [ $SECONDS -lt 385 ]; then
  export HUMMING_NARROW16_WK=$([ "$W16" = on ] && echo 1 || echo 0) HUMMING_NARROW64_WK=$W64
  int4_record 200
  unset HUMMING_NARROW16_WK HUMMING_NARROW64_WK
fi
M64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk2_ak2_s4_tma_wgmma,bt64_wn8_tm1_wk2_ak2_s4_tma_wgmma
M64=$M64,bt64_wn4_tm1_wk2_ak2_s6_tma_wgmma,bt64_wn4_tm2_wk2_ak2_s4_tma_wgmma,bt64_wn4_tm1_wk2_ak4_s3_tma_wgmma
M64=$M64,bt64_wn4_tm1_wk4_ak4_s3_tma_wgmma
[ $SECONDS -lt 450 ] && SWEEP_TIMEOUT=90 sweep_case m64_wk "$I4" 64 6144x4096,4096x14336 "$M64" --splits 1,2
WK=bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s6_direct_wgmma
WK=$WK,bt16_wn4_tm1_wk4_ak256_s8_direct_wgmma,bt16_wn4_tm1_wk2_ak256_s6_direct_wgmma
[ $SECONDS -lt 500 ] && SWEEP_TIMEOUT=70 sweep_case wk_narrow16 "$I4" 16 6144x4096 "$WK" --splits 1,2
echo "elapsed ${SECONDS}s"
LONG=bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm1_wk2_ak256_s4_direct_wgmma,bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma
[ $SECONDS -lt 520 ] && SWEEP_TIMEOUT=50 sweep_case wk_long16 "$I4" 16 4096x14336 "$LONG" --splits 4
echo "elapsed ${SECONDS}s"
