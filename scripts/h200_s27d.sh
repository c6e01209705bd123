#!/usr/bin/env bash
# Session 27, call D: int4 g128 at M=1 on the narrow layers without cross-block split-K -- blocks of 32-48 weight rows
# whose 4-16 K-warps share the whole K range and sum in shared memory (one block per SM, 128-192 blocks), against
# the defaults (8 / 16 ticketed K splits of 128-row blocks, whose split-K end costs ~1.9 us on 6144x4096: session 20).
. scripts/h200_setup.sh
call_results d
export SWEEP_TIMEOUT=200
C=bt8_wn3_tm1_wk8_ak256_s4_direct,bt8_wn3_tm1_wk4_ak256_s4_direct,bt8_wn2_tm1_wk8_ak256_s4_direct,bt8_wn2_tm1_wk16_ak256_s4_direct,bt8_wn4_tm1_wk8_ak256_s4_direct
sweep_case i4_m1_kwarps $I4 1 6144x4096,4096x14336 $C --splits 1,2 --top 12
