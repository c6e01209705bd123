#!/usr/bin/env bash
# Session 46, call D.  Call C (whole H100): at 17-32 tokens the warp-specialized bulk TMA kernel beat the plan's direct
# wgmma decode by 19-31 % on 28672x4096 and 4096x14336 and lost 8-11 % on 6144x4096.  Which layers it wins (a rule
# needs more than three shapes), correctness of the two bulk tiles there, and the one-token decode of mid-wide layers
# (14336x4096: the x16 mma.sync tile 14.4 us vs the plan's wgmma decode 16.3).
. scripts/h200_setup.sh
call_results d
C32=bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma
C64=bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma,bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma,bt64_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma,bt64_wn8_tm1_wk1_ak2_s4_tma_bulk_wgmma
W1=bt8_wn14_tm1_wk2_ak256_s4_x16_direct,bt8_wn14_tm1_wk2_ak256_s4_pfr64_x16_direct,bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma
export SWEEP_TIMEOUT=200
sweep_case m32_shapes $I4 17,32 4096x4096,14336x4096,37888x3584,3584x18944,10240x8192,8192x8192,4096x7168,2048x14336,8192x28672 $C32
for c in bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma bt32_wn12_tm1_wk1_ak2_s4_tma_bulk_wgmma; do
  step 90 python3 scripts/check_choice.py $I4 $c 28672x4096,4096x14336,3000x4200,14000x3584 17,24,31,32 2>&1 | tee -a $R/check_m32.log | grep -vE " ok|^OK" | tail -4
done
sweep_case m1_mid $I4 1 14336x4096,8192x4096,10240x8192,37888x3584,12288x4096 $W1
sweep_case m64_long $I4 48,64 4096x14336,4096x11008,3584x18944,8192x28672 $C64
