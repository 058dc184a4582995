#!/usr/bin/env bash
# The main job: train a Kujifunza player with the quick config and report its strength.
# Installs what it needs first (torch venv, see scripts/setup.sh). Re-running resumes.
# Usage: scripts/train.sh [CONFIG [RUN [bao train options...]]]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked
CONFIG="${1:-configs/kujifunza-quick.toml}"
RUN="${2:-runs/$(basename "$CONFIG" .toml)}"
shift $(( $# < 2 ? $# : 2 ))  # the rest goes to `bao train`, e.g. --init models/kiswahili.safetensors
./target/release/bao train --config "$CONFIG" --run "$RUN" "$@"
