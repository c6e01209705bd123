#!/usr/bin/env bash
# Session 57's second call.  On an H200: the int4 bench of record on this tree (sessions 48-57's defaults have not
# been through it).  On any card: the
# wide 16-token layer (28672x4096, 26.6 us on the H200 against the M=1 plan's 17.5) with the 224-row mma.sync direct
# tile fed through a warp-private shared-memory weight ring (_pfr, the M=1 wide plan's feed) beside the bulk default
# and the register-ring tile; on an H100 also with 40 SMs held (an H200's per-SM load).  Results packed after each step.
. scripts/h200_setup.sh
call_results b
W16=bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma,bt16_wn14_tm1_wk2_ak256_s4_direct,bt16_wn14_tm1_wk2_ak256_s4_pfr64_direct
W16=$W16,bt16_wn14_tm1_wk2_ak256_s4_pfr48_direct
if grep -q H200 "$OUT/device.txt"; then
  int4_record 200
  SWEEP_TIMEOUT=80 sweep_case wide16_ring "$I4" 9,16 28672x4096 "$W16"
  echo "elapsed ${SECONDS}s"
else
  SWEEP_TIMEOUT=80 sweep_case wide16_ring "$I4" 9,16 28672x4096 "$W16"
  SWEEP_TIMEOUT=80 sweep_case wide16_ring_r40 "$I4" 16 19968x4096 "$W16" --reserve-sms 40
fi
echo "elapsed ${SECONDS}s"
