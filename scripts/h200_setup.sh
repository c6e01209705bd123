# Sourced by every scripts/h200_*.sh (device tool, repo root): $OUT, the JIT cache, the optional upstream peer wheel
# (carried as .whl), an offline editable install of this repo, the device line, and step() = timeout + banner.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HUMMING_CACHE_DIR=${HUMMING_CACHE_DIR:-/tmp/humming-cache}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { tail "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/device.txt"
step() { local t=$1; shift; echo "== $*"; timeout "$t" "$@"; }
# Every GPU suite (log in $OUT/gpu_tests.log) and the e2e fixture models (when .shared_fixtures was carried).  With
# pytest-xdist (in the device image) 8 workers share the GPU: on a cold JIT cache the suites are NVRTC-bound, and all
# of them ran in 6.3 minutes that way (session 24) instead of ~35 serially.
# gpu_suites TIMEOUT [PART]: PART 1 = the pipelines suite (~780 tests), 2 = the other nine files (~690); no PART =
# all of them, which no longer fit one 600 s call on a cold cache (session 51: cut off at 99 % after 560 s, H100).
gpu_suites() {  # TIMEOUT_S [PART]
  local par=""; python3 -c "import xdist" 2>/dev/null && par="-n 8 --dist load"
  local one="tests/test_gemm_pipelines_gpu.py"
  local two="tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py tests/test_ops_gpu.py tests/test_prefill_chunks.py
    tests/test_dequant_weight.py tests/test_jit_gpu.py tests/test_splitk_reducers_gpu.py tests/test_moe_gpu.py
    tests/test_act_quant_gpu.py"
  local files
  case "${2:-all}" in 1) files=$one ;; 2) files=$two ;; *) files="$one $two" ;; esac
  # (-v: one line per test with its name, so a run cut off by its time limit still names its failures -- session 38's
  # call C showed only "F"s)
  step "$1" python3 -m pytest -v --tb=short -rf $par -m gpu $files -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
  grep -E "FAILED|passed|failed" "$OUT/gpu_tests.log" | cut -c1-200 | tail -12
  # A failure among the workers can be their contention for the one GPU's memory (session 51): rerun pytest's
  # last-failed set alone, with tracebacks -- a real failure fails again there.
  if [ -n "$par" ] && grep -qE "[0-9]+ failed" "$OUT/gpu_tests.log"; then
    step 240 python3 -m pytest -q --tb=short -rf -p no:xdist -m gpu --lf tests/ >"$OUT/gpu_tests_rerun.log" 2>&1
    echo "-- the failures rerun alone:"; grep -E "FAILED|passed|failed" "$OUT/gpu_tests_rerun.log" | cut -c1-200 | tail -8
  fi
}
e2e_fixtures() {
  [ -d .shared_fixtures ] || { echo "e2e: .shared_fixtures not carried"; return; }
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 60 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | cut -c1-90 | tail -8
}
# call_results LETTER: the per-call results folder R=/tmp/LETTER and pack(), which tars it into $OUT/LETTER_all.tgz
# (call it after sourcing this file; older scripts set R and pack() themselves).
call_results() {
  rm -f "$OUT/install.log"
  R=/tmp/$1; mkdir -p "$R"
  eval "pack() { tar czf \"\$OUT/$1_all.tgz\" -C /tmp $1; }"
}
# The default bench shapes and the int4 description, for sweeps.
SH=6144x4096,28672x4096,4096x14336
I4=w:uint4b8,s:g128:bfloat16
# Shared steps for the per-call scripts (they set R, the results folder, and pack(), which tars it into $OUT):
# sweep_case NAME DESC MS SHAPES CHOICES [sweep args]: tuning.sweep into $R/sweep_NAME.{txt,json}, the ranking printed.
sweep_case() {
  step "${SWEEP_TIMEOUT:-110}" python3 -m vllm_humming.tuning.sweep --desc "$2" --ms "$3" --shapes "$4" --choices "$5" --top 8 \
    --json "$R/sweep_$1.json" "${@:6}" >"$R/sweep_$1.txt" 2>&1
  grep -E "cublas|^      " "$R/sweep_$1.txt" | sed 's/^      /  /' | cut -c1-96; pack
}
# gpu_test NAME TIMEOUT PYTEST_ARGS...: one GPU test selection (4 xdist workers) into $R/gpu_NAME.log, its last lines
# printed, the results packed.
gpu_test() {
  local name=$1 t=$2; shift 2
  step "$t" python3 -m pytest -q -n 4 -m gpu "$@" >"$R/gpu_$name.log" 2>&1
  tail -2 "$R/gpu_$name.log" | cut -c1-200; pack
}
# ncu_case NAME DESC N K M CHOICE: one launch under ncu (speed of light, stalls, PC samples per SASS instruction),
# reduced to the top instructions by scripts/ncu_top.py (the raw report stays out of $OUT: several MB).
ncu_case() {
  step 120 ncu --clock-control none --kernel-name regex:humming_wna16 --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --section LaunchStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -o "/tmp/$1" -f \
    python3 scripts/profile_case.py "$2" "$3" "$4" "$5" "$6" >"$R/$1.log" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"$R/$1_details.txt" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page raw >"/tmp/$1_raw.txt" 2>&1
  grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio" "/tmp/$1_raw.txt" >"$R/$1_stalls.txt"
  ncu -i "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"/tmp/$1_sass.csv" 2>/dev/null
  python3 scripts/ncu_top.py "/tmp/$1_sass.csv" 40 >"$R/$1_top_sass.txt" 2>&1
  echo "-- $1: $6 $3x$4 M=$5"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Grid Size|Issue Slots Busy" \
    "$R/$1_details.txt" | head -10
  awk '{print $1, $NF}' "$R/$1_stalls.txt" | sed 's/smsp__average_warps_issue_stalled_//;s/_per_issue_active.ratio//' \
    | sort -k2 -g -r | head -8 | tr '\n' ';'; echo; pack
}
# ncu_upstream NAME FORMAT N K M: upstream humming's layer (optional peer) under ncu, one profiled call
# (scripts/profile_upstream.py), its launch / occupancy / throughput lines printed.
ncu_upstream() {
  step 120 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis -o "/tmp/$1" -f \
    python3 scripts/profile_upstream.py "$2" "$3" "$4" "$5" >"$R/$1.log" 2>&1
  ncu -i "/tmp/$1.ncu-rep" --page details >"$R/$1_details.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Grid Size|Block Size|Dynamic Shared|Issue Slots Busy|Eligible" \
    "$R/$1_details.txt" | head -14; pack
}
# ab_int4 NAME [env...] (after call_results): the int4 bench at M=1 / 16 without peers under the given environment
# ($AB_ARGS: extra bench options), the "ours" lines printed on one line.
ab_int4() {
  local name=$1; shift
  ab_bench "$name" 90 1,16 "" "$@"
}
# ab_bench NAME TIMEOUT MS SHAPES [VAR=VALUE...] (after call_results): the int4 bench without peers at MS tokens on
# SHAPES (empty: the bench's defaults) under the given environment ($AB_ARGS: extra bench options) into
# $R/ab_NAME.{json,log}, the "ours" lines printed on one line, the results packed.
ab_bench() {
  local name=$1 t=$2 ms=$3 shapes=$4; shift 4
  env "$@" timeout "$t" python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms "$ms" ${shapes:+--shapes "$shapes"} \
    --no-upstream --no-eager --cold none ${AB_ARGS:-} --json "$R/ab_$name.json" >"$R/ab_$name.log" 2>&1
  echo "-- $name $*"; grep "] ours" "$R/ab_$name.log" | sed 's/.*int4-g128 //' | cut -c1-60 | tr '\n' ';'; echo
  pack
}
# ab_k_warpgroups TIMEOUT (session 56, after call_results): the bench A/Bs of the two K-warpgroup rules --
# HUMMING_NARROW64_WK 0..3 on the narrow layers at 48 / 64 tokens, HUMMING_NARROW16_WK 0 / 1 on 6144x4096 at 9 / 16
# -- into $R/ab_n64wk<V>.json / ab_n16wk<V>.json.
# (Session 57 ran it: every rule lost, and both switches were removed -- it now times the defaults six times.)
ab_k_warpgroups() {
  local v
  for v in 0 1 2 3; do ab_bench "n64wk$v" "$1" 48,64 6144x4096,4096x14336 HUMMING_NARROW64_WK=$v; done
  for v in 0 1; do ab_bench "n16wk$v" "$1" 9,16 6144x4096 HUMMING_NARROW16_WK=$v; done
}
# act_quant_ab CFG... (after call_results): per HUMMING_DEBUG_ACT_QUANT launch shape, the quantizer alone
# (scripts/exp_act_quant.py) and the W4A8 int4 / W8A8 int8 layers at M = 1 / 16 without peers (session 34).
act_quant_ab() {
  local cfg
  for cfg in "$@"; do
    HUMMING_DEBUG_ACT_QUANT=$cfg step 60 python3 scripts/exp_act_quant.py 2>&1 | tee -a "$R/exp_act_quant.log" | cut -c1-250
    HUMMING_DEBUG_ACT_QUANT=$cfg timeout 60 python3 -m vllm_humming.bench --formats w4a8-int4-g128-fp8,w8a8-int8 \
      --ms 1,16 --no-upstream --no-eager --cold none >"$R/ab_$cfg.log" 2>&1
    echo "-- layer $cfg"; grep "] ours" "$R/ab_$cfg.log" | sed 's/.*ours //' | cut -c1-60 | tr '\n' ';'; echo
    pack
  done
}
# int4_record TIMEOUT (after call_results): the int4 bench of record -- M = 1 / 16 / 64 / 256, upstream in the same
# run -- into $R/bench_int4.{json,log}, its summary and the M=1 rows printed.
int4_record() {
  step "$1" python3 -m vllm_humming.bench --formats w4a16-int4-g128 --ms 1,16,64,256 --cold none --no-eager \
    --json "$R/bench_int4.json" >"$R/bench_int4.log" 2>&1
  grep -A3 "^Summary" "$R/bench_int4.log"; grep -E "\] (ours|upstream|cuBLAS) .* M=1:" "$R/bench_int4.log" | cut -c1-90
  pack
}
