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
    run_pytest "$venv/bin/python" -q -m "not gpu and not vllm and not vllm_cpu" tests
}

# ---------------------------------------------------------------------------------------------- further stages
# Stages that need vLLM (markers `vllm`, `vllm_cpu`) are added here later, each as a function `stage_<name>` that
# builds its own venv with ensure_venv and runs its marker with run_pytest, and is appended to STAGES below.

STAGES=(core)

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
