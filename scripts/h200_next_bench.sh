#!/usr/bin/env bash
# The bench to run after scripts/h200_next.sh (carry .whl; ~6 minutes): the four bench formats at M = 1 / 16 / 64 /
# 256 with HUMMING_CLUSTER=1 (the cluster-reduced choices), and int4 with it off as the same-run control; ours vs
# upstream vs cuBLAS bf16 in each run -- what decides HUMMING_CLUSTER's default.
. scripts/h200_setup.sh
rm -f "$OUT/install.log"
mkdir -p /tmp/nb && R=/tmp/nb
pack() { tar czf "$OUT/nb_all.tgz" -C /tmp nb; }
for cl in 1 0; do
  for f in w4a16-int4-g128 w3a16-int3-g128 w8a16-int8-channel w4a16-mxfp4; do
    [ $cl = 0 ] && [ $f != w4a16-int4-g128 ] && continue
    HUMMING_CLUSTER=$cl step 80 python3 -m vllm_humming.bench --formats $f --ms 1,16,64,256 --cold none --no-eager \
      --json $R/bench_${f}_cluster$cl.json >$R/bench_${f}_cluster$cl.log 2>&1
    echo "HUMMING_CLUSTER=$cl $f: $(grep -A3 '^Summary' $R/bench_${f}_cluster$cl.log | tail -1)"; pack
  done
done
