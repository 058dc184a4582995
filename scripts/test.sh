#!/usr/bin/env bash
# The whole test suite. Installs what it needs first: the torch venv (scripts/setup.sh) and,
# for the browser test of `bao serve`, Chromium and playwright-core (scripts/setup-e2e.sh;
# where that cannot install, e.g. without root, the browser test says so and skips).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-e2e.sh || echo "test: browser test prerequisites missing (see above); continuing" >&2
. scripts/setup.sh
# The lint gate: formatting and clippy (all targets, warnings are errors) before the tests.
cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked "$@"
