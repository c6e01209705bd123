#!/usr/bin/env bash
# Session 13, call C (carry .whl): which part of the split-K end costs (call B: without it 4096x14336 M=64 runs 20.7
# instead of 27.6 us): the partial stores alone (SPLITK_STOREONLY), stores + fence + ticket without the last block's
# reads (SPLITK_NOREAD); and why cluster-reduced grids of 4 / 8 lose (max resident clusters).
. scripts/h200_setup.sh
call_results c
I4=w:uint4b8,s:g128:bfloat16
CH=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma
step 90 python3 scripts/probe_clusters.py $I4 4096x14336 64 bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c8_wgmma,bt64_wn8_tm1_wk1_ak1_s4_c8_wgmma 2>&1 | tee $R/probe_clusters.txt | tail -5
step 60 python3 scripts/probe_clusters.py $I4 6144x4096 64 bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c8_wgmma 2>&1 | tee -a $R/probe_clusters.txt | tail -3
step 60 python3 scripts/probe_clusters.py $I4 4096x14336 16 bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt16_wn8_tm1_wk1_ak256_s4_c8_direct_wgmma 2>&1 | tee -a $R/probe_clusters.txt | tail -3
pack
for D in HUMMING_DEBUG_SPLITK_STOREONLY HUMMING_DEBUG_SPLITK_NOREAD; do
  export HUMMING_DEBUG_DEFINES=$D; echo "#### $D"
  sweep_case ${D#HUMMING_DEBUG_} $I4 16,64 6144x4096,4096x14336 $CH
done
