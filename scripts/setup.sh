#!/usr/bin/env bash
# Installs what bao-zero needs to build, once, into the checkout:
#   .venv/  a virtualenv holding PyTorch 2.13.0 (the libtorch that tch 0.26 links against)
#           and Ray 2.60.0 (scripts/ray_cluster.py and its test; BAO_RAY_VENV=DIR puts Ray
#           into another virtualenv, BAO_NO_RAY=1 skips it).
# Safe to run again: when both are already there it returns in about a second.
# Source it (`. scripts/setup.sh`) to also get the build environment exported; sourcing
# leaves the caller's shell options alone.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${BAO_VENV:-$ROOT/.venv}"
TORCH_VERSION="2.13.0"

have_torch() {
    [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$TORCH_VERSION" <<'PY' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version("torch").split("+")[0] == sys.argv[1] else 1)
PY
}

if ! have_torch; then (
    set -euo pipefail
    echo "setup: installing torch==$TORCH_VERSION into $VENV (first run: about 4.7 GB, a few minutes)" >&2
    command -v python3 >/dev/null || { echo "setup: python3 is required" >&2; exit 1; }
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "torch==$TORCH_VERSION"
    have_torch || { echo "setup: torch $TORCH_VERSION did not install into $VENV" >&2; exit 1; }
) || { echo "setup: failed" >&2; return 1 2>/dev/null || exit 1; }
fi

RAY_VERSION="2.60.0"
RAY_VENV="${BAO_RAY_VENV:-$VENV}"
have_ray() {
    [ -x "$RAY_VENV/bin/python" ] && "$RAY_VENV/bin/python" - "$RAY_VERSION" <<'PY' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version("ray") == sys.argv[1] else 1)
PY
}
if [ "${BAO_NO_RAY:-0}" != 1 ] && ! have_ray; then (
    set -euo pipefail
    echo "setup: installing ray==$RAY_VERSION into $RAY_VENV (about 80 MB)" >&2
    [ -x "$RAY_VENV/bin/python" ] || python3 -m venv "$RAY_VENV"
    "$RAY_VENV/bin/pip" install --quiet --disable-pip-version-check "ray==$RAY_VERSION"
    have_ray || { echo "setup: ray $RAY_VERSION did not install into $RAY_VENV" >&2; exit 1; }
) || { echo "setup: failed" >&2; return 1 2>/dev/null || exit 1; }
fi
# The Python that runs scripts/ray_cluster.py (tests/fleet_ray.rs reads this).
export BAO_RAY_PYTHON="$RAY_VENV/bin/python"
# BAO_NO_RAY=1 (no Ray installed) leaves the Ray test out of scripts/test.sh.
if [ "${BAO_NO_RAY:-0}" = 1 ]; then export BAO_TEST_WITHOUT="${BAO_TEST_WITHOUT:-} ray"; fi

# What the build needs: torch-sys finds libtorch through the venv's python.
export LIBTORCH_USE_PYTORCH=1
export PATH="$VENV/bin:$PATH"
export VIRTUAL_ENV="$VENV"
