#!/usr/bin/env bash
# The whole test suite. Installs what it needs first (torch venv, see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo test --locked "$@"
