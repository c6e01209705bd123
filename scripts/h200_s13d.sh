#!/usr/bin/env bash
# Session 13, call D (carry .whl): split-K tiles summed by up to 4 blocks (splitk_epilogue reducers): their GPU test
# (bit-identical to one reducer), then the M = 16 / 32 / 64 / 128 defaults and the ticket-path alternatives to the
# cluster defaults with the reducers (default) and without (HUMMING_SPLITK_REDUCERS=1, the same-run control).
. scripts/h200_setup.sh
call_results d
step 200 python3 -m pytest -q -m gpu tests/test_splitk_reducers_gpu.py -x >$R/tests_reducers.log 2>&1
grep -E "^FAILED|passed|failed|Error" $R/tests_reducers.log | tail -5; pack
I4=w:uint4b8,s:g128:bfloat16
CH=bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
CH64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma
for RD in 4 1; do
  export HUMMING_SPLITK_REDUCERS=$RD; echo "#### reducers $RD"
  sweep_case r${RD}_m16 $I4 16 6144x4096,28672x4096,4096x14336 $CH
  sweep_case r${RD}_m64 $I4 64 6144x4096,28672x4096,4096x14336 $CH64
  sweep_case r${RD}_m32_128 $I4 32,128 6144x4096,28672x4096,4096x14336 bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma
done
unset HUMMING_SPLITK_REDUCERS
for F in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sweep_case fmt_${F:2:6} $F 16,64 6144x4096,28672x4096,4096x14336 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma,bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma
done
