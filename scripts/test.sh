#!/usr/bin/env bash
# The whole test suite (README's test command; CI runs it through .ci/run). Installs what it
# needs first: the torch venv and Ray (scripts/setup.sh) and, for the browser test of
# `bao serve`, Chromium and playwright-core (scripts/setup-e2e.sh).
#
# Two tests need those prerequisites and are `#[ignore]`d in a plain `cargo test`: the browser
# test (tests/serve_e2e.rs) and the Ray cluster test (tests/fleet_ray.rs). This script runs
# them too, and they fail when a prerequisite is missing. Where one cannot be installed (no
# root for apt-get), BAO_TEST_WITHOUT="e2e ray" leaves them out and says so; CI never does.
set -euo pipefail
cd "$(dirname "$0")/.."
without=" ${BAO_TEST_WITHOUT:-} "
if [[ "$without" != *" e2e "* ]]; then
    scripts/setup-e2e.sh
fi
. scripts/setup.sh
without=" ${BAO_TEST_WITHOUT:-} "  # setup.sh adds `ray` under BAO_NO_RAY=1
# The lint gate: formatting and clippy (all targets, warnings are errors) before the tests.
cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked "$@"
ignored=()
[[ "$without" == *" e2e "* ]] && echo "test: NOT RUN: tests/serve_e2e.rs (BAO_TEST_WITHOUT)" >&2 || ignored+=(--test serve_e2e)
[[ "$without" == *" ray "* ]] && echo "test: NOT RUN: tests/fleet_ray.rs (BAO_TEST_WITHOUT)" >&2 || ignored+=(--test fleet_ray)
if [ ${#ignored[@]} -gt 0 ]; then
    cargo test --locked "${ignored[@]}" -- --ignored
fi
