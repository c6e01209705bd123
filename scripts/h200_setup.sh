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
