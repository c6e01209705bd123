#!/usr/bin/env bash
# Session 12, call D (carry .whl): GPU tests of the new large-M defaults (every format), the other bench formats on
# the new rules (M=256 4096x14336 three-warpgroup bulk, M=512 256-row tiles / stream-K), and M=1024: the kernel
# (HUMMING_PREFILL_M=2048) vs expand + cuBLAS (the default there) in one bench run each.
. scripts/h200_setup.sh
call_results d
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py -k "large_m_default" >$R/tests_large_m.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_large_m.log | head -12; pack
sw() {  # NAME DESC MS SHAPES CHOICES [extra sweep args]
  HUMMING_PREFILL_M=1000000 step 110 python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 \
    --json $R/sweep_$1.json "${@:6}" >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-96; pack
}
for f in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sw m256_${f:2:5} $f 256 4096x14336 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma
  sw m512_${f:2:5} $f 512 6144x4096,28672x4096,4096x14336 bt128_wn8_tm1_wk1_ak1_s5_wgmma,bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma,bt128_wn8_tm2_wk1_ak1_s4_wgmma,bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma
done
for pm in 2048 1024; do
  HUMMING_PREFILL_M=$pm step 100 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1024 --cold none --no-eager \
    --json $R/bench_m1024_prefill$pm.json >$R/bench_m1024_prefill$pm.log 2>&1
  echo "HUMMING_PREFILL_M=$pm:"; grep -E "^\[bench\] (ours|upstream)" $R/bench_m1024_prefill$pm.log | cut -c1-80; pack
done
