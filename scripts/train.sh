#!/usr/bin/env bash
# The main job: train a Kujifunza player with the quick config and report its strength (the
# run's player: its newest distilled student where the config has [distill], else its last
# generation).
# Installs what it needs first (torch venv, see scripts/setup.sh). Re-running resumes.
# Usage: scripts/train.sh [CONFIG [RUN [bao train options...]]]
# The report: `bao train`'s table (fixed simulations against its baselines), then the strength
# that counts, at equal time: the trained network against the project's alpha-beta with
# REPORT_MS (100) of CPU time a move each, REPORT_GAMES (40) games, paired openings; for
# Kujifunza also the proven puzzles its raw policy keeps. REPORT_GAMES=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked
CONFIG="${1:-configs/kujifunza-quick.toml}"
RUN="${2:-runs/$(basename "$CONFIG" .toml)}"
shift $(( $# < 2 ? $# : 2 ))  # the rest goes to `bao train`, e.g. --init models/kiswahili.safetensors
BAO=./target/release/bao
$BAO train --config "$CONFIG" --run "$RUN" "$@"
GAMES="${REPORT_GAMES:-40}"
[ "$GAMES" -gt 0 ] || exit 0
GEN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["generation"])' "$RUN/state.json")
CKPT=$(printf '%s/models/gen-%06d.safetensors' "$RUN" "$GEN")
# A config with [distill] plays its newest student.
STUDENT=$(ls -d "$RUN"/students/gen-*/done.json 2>/dev/null | sort | tail -n 1 || true)
if [ -n "$STUDENT" ]; then
    CKPT="$(dirname "$STUDENT")/student.safetensors"
    GEN="$GEN (its student $CKPT)"
fi
VARIANT=$(python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["variant"])' "$CONFIG")
echo
echo "equal time: generation $GEN against alpha-beta, ${REPORT_MS:-100} ms of CPU a move each, $GAMES games"
$BAO eval --variant "$VARIANT" --movetime "${REPORT_MS:-100}" --games "$GAMES" \
    --players "net:$CKPT,alphabeta" --out "$RUN/report"
if [ "$VARIANT" = kujifunza ]; then
    echo
    echo "proven puzzles kept by the raw policy (1 simulation; docs/solving.md)"
    $BAO eval --variant kujifunza --puzzles docs/solving/kujifunza-puzzles.jsonl \
        --players "net:$CKPT:sims=1,greedy" --out "$RUN/report"
fi
