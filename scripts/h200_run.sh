#!/usr/bin/env bash
# One device-machine session: install offline, GPU tests, compile-time report, sweep/bench.  Writes logs to $OUT.
# usage (through the device tool): bash scripts/h200_run.sh [tests] [sweep] [bench] [compile]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used,temperature.gpu --format=csv,noheader
python3 -c "import torch, cuda.bindings; print('torch', torch.__version__, 'cuda-bindings', cuda.bindings.__version__)"
export HUMMING_CACHE_DIR=/tmp/humming-cache
for step in "$@"; do
  case "$step" in
    tests)
      timeout 420 python3 -m pytest -q -x -m gpu tests/test_gemm_gpu.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -25 ;;
    compile)
      timeout 240 python3 -m vllm_humming.cli compile-report --json "$OUT/compile.json" 2>&1 | tee "$OUT/compile.log" | tail -30 ;;
    sweep)
      timeout 300 python3 -m vllm_humming.tuning.sweep --ms "${SWEEP_MS:-1,16,64}" --json "$OUT/sweep.json" 2>&1 \
        | tee "$OUT/sweep.log" | grep -v "^  skip" | tail -60 ;;
    bench)
      timeout 420 python3 -m vllm_humming.bench ${BENCH_ARGS:-} --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" | tail -80 ;;
    *) echo "unknown step $step" ;;
  esac
done
