#!/usr/bin/env bash
# Next session, call B (carry .whl; ~8 minutes): session 15's next steps -- two atoms per stage for the formats it
# did not measure at 33-64 tokens (int3 / MXFP4 / int8) and for every format at 65-256 tokens (a second int4 run), its
# rolled main loop (HUMMING_DEBUG_WG_ROLLED: NVRTC 1.4 -> 0.74 s on the CPU machine for the int4 default) against the
# unrolled one; then where the stream-K grids lose at M = 256 / 512 (session 14, next step 1).
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/b && R=/tmp/b
pack() { tar czf "$OUT/b_all.tgz" -C /tmp b; }
SH=6144x4096,28672x4096,4096x14336
C64=bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn8_tm1_wk1_ak2_s4_wgmma,bt64_wn8_tm1_wk1_ak2_s3_wgmma,bt64_wn8_tm2_wk1_ak1_s4_wgmma,bt64_wn8_tm2_wk1_ak2_s4_wgmma
C256=bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak2_s3_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma,bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma
for f in "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4" "i8 w:uint8b128,s:channel:bfloat16"; do
  set -- $f
  SWEEP_TIMEOUT=80 sweep_case "ak2_m64_$1" "$2" 48,64 "$SH" "$C64"
done
for f in "i4 w:uint4b8,s:g128:bfloat16" "i3 w:uint3b4,s:g128:bfloat16" "mx mxfp4"; do
  set -- $f
  SWEEP_TIMEOUT=90 sweep_case "ak2_m256_$1" "$2" 128,256 "$SH" "$C256"
done
HUMMING_DEBUG_DEFINES=HUMMING_DEBUG_WG_ROLLED SWEEP_TIMEOUT=80 sweep_case ak2_rolled_m64 w:uint4b8,s:g128:bfloat16 48,64 "$SH" "$C64"
export HUMMING_PREFILL_M=1000000
CH=bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma
SWEEP_TIMEOUT=70 sweep_case sk_math w:uint4b8,s:g128:bfloat16 256,512 "$SH" $CH
HUMMING_DEBUG_DEFINES=HUMMING_SKIP_MATH SWEEP_TIMEOUT=70 sweep_case sk_nomath w:uint4b8,s:g128:bfloat16 256,512 "$SH" $CH
