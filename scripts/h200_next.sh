#!/usr/bin/env bash
# First device call of the next session (device tool; carry .whl).  NOTES.md, session 8, "Next, ranked" 1: where the
# warp-specialized bulk wgmma kernel (the upstream structure at M=256) loses its time -- per-instruction stall
# samples of it and of the cp.async 256-row kernel at 28672x4096 M=256, then the bench cold compile on this machine.
. scripts/h200_setup.sh
export HUMMING_PREFILL_M=1000000
for c in bt128_wn8_tm2_wk1_ak1_s4_bulk_wgmma bt128_wn8_tm2_wk1_ak1_s4_wgmma; do
  step 150 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight --import-source yes -o "$OUT/ncu_$c" \
    python3 scripts/profile_case.py w:uint4b8,s:g128:bfloat16 28672 4096 256 $c >/dev/null 2>&1
  ncu --import "$OUT/ncu_$c.ncu-rep" --page source --print-source sass --csv >"$OUT/sass_$c.csv" 2>&1
  ncu --import "$OUT/ncu_$c.ncu-rep" --page details --section WarpStateStats --section SpeedOfLight | grep -E "Duration|Eligible|Tensor|Stall" | head -12
done
tar czf "$OUT/ncu_m256_sass.tgz" -C "$OUT" $(cd "$OUT" && ls sass_*.csv) && rm -f "$OUT"/sass_*.csv "$OUT"/*.ncu-rep
step 60 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --shapes 6144x4096 --ms 1 --no-upstream --no-eager \
  2>&1 | grep "cold compile (ours):"
