#!/usr/bin/env bash
# One device-machine session: install offline, GPU tests, compile-time report, sweep/bench.  Writes logs to $OUT.
# usage (through the device tool): bash scripts/h200_run.sh [tests] [sweep] [bench] [compile]
. scripts/h200_setup.sh
python3 -c "import torch, cuda.bindings; print('torch', torch.__version__, 'cuda-bindings', cuda.bindings.__version__)"
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
