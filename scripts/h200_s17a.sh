#!/usr/bin/env bash
# Session 17, call A (carry .whl; ~8 minutes): (1) the 128-row x 128-token two-atom tile with and without its
# register cap (session 16's h200_next_c.sh, int4 / int3); (2) what the math warps' copy issue costs the cp.async
# wgmma kernels at 64 / 256 tokens: the int4 defaults with the main loop's weight or activation copies skipped
# (HUMMING_DEBUG_SKIP_W_COPY / _X_COPY, wrong results -- a ceiling for moving those copies to the TMA unit).
. scripts/h200_setup.sh
call_results a
C=bt128_wn8_tm1_wk1_ak2_s3_wgmma
for f in "i4 $I4" "i3 w:uint3b4,s:g128:bfloat16"; do
  set -- $f
  SWEEP_TIMEOUT=50 sweep_case "cap_$1" "$2" 128,256 6144x4096,4096x4096 "$C"
  HUMMING_DEBUG_MIN_BLOCKS=1 SWEEP_TIMEOUT=50 sweep_case "nocap_$1" "$2" 128,256 6144x4096,4096x4096 "$C"
done
D=bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma
for v in base SKIP_X_COPY SKIP_W_COPY; do
  if [ $v = base ]; then unset HUMMING_DEBUG_DEFINES; else export HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_$v; fi
  SWEEP_TIMEOUT=70 sweep_case "copy_$v" $I4 64,256 "$SH" "$D"
done
