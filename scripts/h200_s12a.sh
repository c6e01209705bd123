#!/usr/bin/env bash
# Owed first next session (carry .whl; ~8 minutes): what session 11 built after its last H200 call, and its leads.
#  1. GPU tests of the cluster-reduced cp.async wgmma kernel (compile-tested only) and of HUMMING_CLUSTER=1's
#     wide-layer default (the exact choice was timed, not yet tested on the GPU);
#  2. sweeps of clustered choices against the defaults at M = 32 / 64 / 128 / 256 (split-K traffic at M >= 64 is
#     real bandwidth: clusters remove it), the other formats at 28672x4096 M=16;
#  3. M=1 leads: a one-block-per-SM probe of the clustered kernels (4096x14336 c4 ran 18.3 us vs 12.2 ticketed --
#     are a cluster's blocks packed onto fewer SMs?), and load balance / register relief on 28672x4096 (224 blocks of
#     122 registers put 2 blocks on 92 SMs and 1 on 40; s3 takes 72 registers, min-blocks 3 80 with small spills),
#     and the HUMMING_REFILL_AFTER_MATH experiment (no ring register copies: 84 registers).
# Then, if (1) passes: `HUMMING_CLUSTER=1 python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 16` vs the
# default, and flip HUMMING_CLUSTER's default for what the sweeps show.
. scripts/h200_setup.sh
call_results n
step 200 python3 -m pytest -q -m gpu tests/test_gemm_pipelines_gpu.py tests/test_gemm_direct_gpu.py -k "wgmma_cluster or wide_cluster or refill" \
  >$R/tests_cluster.log 2>&1
grep -E "^FAILED|^E  |passed|failed" $R/tests_cluster.log | head -12; pack
export HUMMING_PREFILL_M=1000000
sw() {  # NAME DESC MS SHAPES CHOICES [extra sweep args]
  step 90 python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 --json $R/sweep_$1.json \
    "${@:6}" >$R/sweep_$1.txt 2>&1
  grep -E "cublas|^      " $R/sweep_$1.txt | sed 's/^      /  /' | cut -c1-96; pack
}
I4=w:uint4b8,s:g128:bfloat16
ALL=6144x4096,28672x4096,4096x14336
sw m64 $I4 64 $ALL bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma,bt64_wn8_tm1_wk1_ak1_s6_c8_wgmma,bt64_wn8_tm1_wk1_ak1_s4_c4_wgmma
sw m32 $I4 32 $ALL bt32_wn8_tm1_wk1_ak256_s4_c2_direct_wgmma,bt32_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma,bt32_wn8_tm1_wk1_ak256_s4_c8_direct_wgmma
sw m128 $I4 128,256 4096x14336 bt128_wn8_tm1_wk1_ak1_s5_c2_wgmma,bt128_wn8_tm1_wk1_ak1_s5_c4_wgmma,bt128_wn8_tm1_wk1_ak1_s5_c8_wgmma
for f in w:uint3b4,s:g128:bfloat16 w:uint8b128,s:channel:bfloat16 w:float4_e2m1,s:g32:float8_e8m0fnu; do
  sw m16_${f:2:5} $f 16 28672x4096 bt16_wn8_tm2_wk1_ak1_s4_wgmma,bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma,bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma
done
HUMMING_DEBUG_MIN_SMEM=120000 sw m1_pad $I4 1 6144x4096,4096x14336 bt8_wn4_tm2_wk2_ak256_s4_c4_direct,bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s4_c2_direct
sw m1_balance $I4 1 28672x4096 bt8_wn2_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s3_direct,bt8_wn2_tm2_wk2_ak256_s3_direct,bt8_wn1_tm2_wk4_ak256_s4_direct --splits 1
HUMMING_DEBUG_MIN_BLOCKS=3 sw m1_minblocks3 $I4 1 $ALL bt8_wn4_tm2_wk2_ak256_s4_direct
# the ring slot consumed in place, refilled after its math: no register copies, 84 registers instead of 122
HUMMING_DEBUG_DEFINES=HUMMING_REFILL_AFTER_MATH sw m1_refill $I4 1 $ALL bt8_wn4_tm2_wk2_ak256_s4_direct,bt8_wn4_tm2_wk2_ak256_s3_direct \
  --splits 1,4,8
