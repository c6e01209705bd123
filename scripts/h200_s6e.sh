#!/usr/bin/env bash
# Session 6, device call E (carry .whl): int3 at M=16 on 28672x4096 is the one shape where upstream still leads at
# decode (33.8 vs 28.1 us, call D) -- which 16-token choice suits 3-bit codes on wide layers.
. scripts/h200_setup.sh
step 200 python3 -m vllm_humming.tuning.sweep --desc w:uint3b4,s:g128:bfloat16 --shapes 28672x4096 --ms 16 --choices \
bt16_wn8_tm1_wk2_ak2_s4,bt16_wn8_tm1_wk2_ak2_s3,bt16_wn8_tm1_wk2_ak2_s5,bt16_wn8_tm1_wk2_ak2_s6,bt16_wn8_tm2_wk1_ak1_s4,\
bt16_wn8_tm2_wk1_ak4_s4,bt16_wn8_tm1_wk1_ak1_s4,bt16_wn8_tm1_wk1_ak2_s4,bt16_wn4_tm2_wk1_ak1_s4,bt16_wn16_tm1_wk1_ak1_s3,\
bt16_wn8_tm2_wk2_ak2_s4,bt16_wn4_tm1_wk2_ak2_s4,bt16_wn16_tm1_wk1_ak1_s4,bt16_wn4_tm2_wk1_ak1_s6 \
  --json "$OUT/sweep_int3_m16_wide.json" >"$OUT/sweep_int3_m16_wide.log" 2>&1
python3 - "$OUT/sweep_int3_m16_wide.json" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    print(e["shape"], "M=%d" % e["m"], "cublas %.1f" % e["cublas_us"], "heuristic", e["heuristic"], "%.1f" % e["heuristic_us"])
    for c, t in e["ranking"]:
        print("   %-36s %6.1f" % (c, t))
PY
