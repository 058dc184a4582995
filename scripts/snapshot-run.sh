#!/usr/bin/env bash
# Copies what a run's readers need into the repository (runs/ is git-ignored and may not
# outlive the machine): its config, state (cumulative wall and CPU time), metrics, curves,
# the equal-time gauntlet's points and figure, each student's record, and its newest student
# (the run's player). The self-play data and the teacher checkpoints stay in the run.
# Usage: scripts/snapshot-run.sh RUN DEST     e.g. runs/kiswahili docs/pipeline/kiswahili
set -euo pipefail
RUN="${1:?usage: scripts/snapshot-run.sh RUN DEST}"
DEST="${2:?usage: scripts/snapshot-run.sh RUN DEST}"
[ -f "$RUN/state.json" ] || { echo "$RUN is not a bao run (no state.json)" >&2; exit 1; }
mkdir -p "$DEST"
for f in config.toml overrides.json state.json metrics.jsonl metrics.csv curve.svg gauntlet.csv gauntlet.svg; do
    [ -f "$RUN/$f" ] && cp "$RUN/$f" "$DEST/"
done
if [ -d "$RUN/gauntlet" ]; then
    mkdir -p "$DEST/gauntlet" && cp "$RUN"/gauntlet/*.json "$DEST/gauntlet/"
fi
NEWEST=""
for done in "$RUN"/students/gen-*/done.json; do
    [ -f "$done" ] || continue
    gen=$(basename "$(dirname "$done")")
    mkdir -p "$DEST/students/$gen" && cp "$done" "$DEST/students/$gen/"
    NEWEST=$(dirname "$done")
done
if [ -n "$NEWEST" ]; then
    cp "$NEWEST/student.safetensors" "$NEWEST/student.json" "$DEST/"
fi
echo "copied $RUN's record into $DEST"
