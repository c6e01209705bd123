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
# Every GPU suite (log in $OUT/gpu_tests.log) and the e2e fixture models (when .shared_fixtures was carried).
gpu_suites() {  # TIMEOUT_S
  step "$1" python3 -m pytest -q -m gpu tests/test_gemm_gpu.py tests/test_gemm_direct_gpu.py tests/test_gemm_pipelines_gpu.py tests/test_ops_gpu.py \
    tests/test_prefill_chunks.py tests/test_dequant_weight.py tests/test_jit_gpu.py -k "not overhead" >"$OUT/gpu_tests.log" 2>&1
  grep -E "^FAILED|passed|failed" "$OUT/gpu_tests.log" | tail -8
}
e2e_fixtures() {
  [ -d .shared_fixtures ] || { echo "e2e: .shared_fixtures not carried"; return; }
  HUMMING_FIXTURES=$PWD/.shared_fixtures step 70 python3 e2e/run_fixture_models.py --device cuda --json "$OUT/e2e.json" \
    >"$OUT/e2e.log" 2>&1; grep -E "PASS|FAIL|Error" "$OUT/e2e.log" | cut -c1-90 | tail -8
}
