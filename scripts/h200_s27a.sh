#!/usr/bin/env bash
# Session 27, call A: the issue-4 formats no recent bench had run against upstream -- fp8 e4m3 weight-only (channel
# at M <= 64; 128x128 blocks at every default M), int2 g64, NVFP4, uint4 g128 + int zero points -- with upstream
# humming in the same run (its 10 % rule at M >= 256, "at least as fast" for W8A16 at M <= 64).
. scripts/h200_setup.sh
call_results a
b() {  # NAME FORMATS MS TIMEOUT
  step "$4" python3 -m vllm_humming.bench --formats "$2" --ms "$3" --cold none --no-eager --json $R/bench_$1.json \
    >$R/bench_$1.log 2>&1; grep -A8 "^Summary" $R/bench_$1.log; pack
}
b fp8_small w8a16-fp8-channel 1,16,64 90
b int2 w2a16-int2-g64 1,16,64,256,1024,4096 130
b nvfp4 w4a16-nvfp4 1,16,64,256,1024,4096 130
b zp w4a16-int4-g128-zp 1,16,64,256,1024,4096 130
b fp8_block w8a16-fp8-block 1,16,64,256,1024,4096 130
