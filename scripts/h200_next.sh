#!/usr/bin/env bash
# Owed first next session (carry .whl): the GPU tests this session could not run -- the narrow-layer defaults of
# session 10 (int3 / int8 at M = 9-16 among them), the bulk wgmma choices incl. the three-warpgroup tiles (192 rows,
# setmaxnreg split: compile-tested only), the tail of the pipelines suite -- then sweeps of the three-warpgroup bulk
# tiles against the defaults at M = 64 / 256 (the wide layer is where the bulk kernel still loses).
. scripts/h200_setup.sh
mkdir -p /tmp/n && R=/tmp/n
pack() { tar czf "$OUT/n_all.tgz" -C /tmp n; }
step 300 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "narrow_default or bulk_wgmma or stream_k or decode16_wgmma" \
  >$R/tests.log 2>&1; grep -E "^FAILED|passed|failed" $R/tests.log | tail -6; pack
export HUMMING_PREFILL_M=1000000
sw() {  # NAME MS CHOICES
  step 150 python3 -m vllm_humming.tuning.sweep --desc w:uint4b8,s:g128:bfloat16 --ms "$2" --choices "$3" --top 8 >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-120; pack
}
sw m64 64 bt64_wn8_tm1_wk1_ak1_s6_wgmma,bt64_wn12_tm1_wk1_ak1_s6_bulk_wgmma,bt64_wn12_tm1_wk1_ak1_s8_bulk_wgmma
sw m256 256 bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma,bt128_wn12_tm1_wk1_ak1_s5_bulk_wgmma
