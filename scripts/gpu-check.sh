#!/usr/bin/env bash
# The CUDA check: on a machine with an NVIDIA GPU, runs `bao doctor --check`,
# `bao bench net` on the CPU and on CUDA, a short training run of the README's main job
# (configs/kujifunza-quick.toml, 2 generations) and of the Kiswahili pipeline's teacher
# (configs/kiswahili.toml without its student and gauntlet stages, 3 generations) on CUDA and
# on the CPU, with self-play positions and training samples per second, and writes every log
# and a summary into OUT (default gpu-check/). Minutes, not hours. Fails if CUDA is not seen.
#
# Usage: scripts/gpu-check.sh [OUT]
#   BAO=PATH      the bao binary (default target/release/bao: `. scripts/setup.sh && cargo
#                 build --release` on a machine whose torch is 2.13.0)
#   TORCH_LIB=DIR libtorch's lib/ to run against, when the binary's own (its rpath) is not on
#                 this machine, e.g. a GPU machine's own torch install; found from python3's
#                 torch when neither is given.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-gpu-check}"
BAO="${BAO:-target/release/bao}"
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

if [ -z "${TORCH_LIB:-}" ] && ! "$BAO" --version >/dev/null 2>&1; then
    TORCH_LIB="$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
fi
if [ -n "${TORCH_LIB:-}" ]; then
    export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log "running against libtorch in $TORCH_LIB ($(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo 'version unknown'))"
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L | tee -a "$OUT/summary.txt"
nproc | sed 's/^/cpu cores: /' | tee -a "$OUT/summary.txt"

log "bao doctor --check"
"$BAO" doctor --check 2>&1 | tee "$OUT/doctor.txt" | tee -a "$OUT/summary.txt"
grep -q "cuda available  true" "$OUT/doctor.txt" || { log "FAIL: libtorch sees no CUDA GPU"; exit 1; }

log "bao bench net --device cuda"
"$BAO" bench net --device cuda --presets tiny,small,large --batches 1,16,64,256,1024,4096 \
    2>&1 | tee "$OUT/bench-net-cuda.txt" | tee -a "$OUT/summary.txt"
log "bao bench net --device cpu (1 torch thread, as players use)"
"$BAO" bench net --device cpu --presets tiny,small --batches 1,16,256 \
    2>&1 | tee "$OUT/bench-net-cpu.txt" | tee -a "$OUT/summary.txt"

# A short run of the main job's recipe: 2 generations, on each device.
for device in cuda cpu; do
    cfg="$OUT/quick-$device.toml"
    sed -e 's/^generations = .*/generations = 2/' -e "s/^device = .*/device = \"$device\"/" \
        configs/kujifunza-quick.toml > "$cfg"
    rm -rf "$OUT/run-$device"
    log "bao train (configs/kujifunza-quick.toml, 2 generations, device $device)"
    start=$(date +%s.%N)
    "$BAO" train --config "$cfg" --run "$OUT/run-$device" > "$OUT/train-$device.txt" 2>&1
    end=$(date +%s.%N)
    tail -n 15 "$OUT/train-$device.txt" | tee -a "$OUT/summary.txt"
    python3 -c "print('wall seconds: %.1f' % ($end - $start))" | tee -a "$OUT/summary.txt"
    cp "$OUT/run-$device/metrics.jsonl" "$OUT/metrics-$device.jsonl" 2>/dev/null || true
done

# The Kiswahili teacher's recipe: its stages ([distill], [gauntlet], the file's last sections)
# are cut off, since a student takes half an hour of CPU and the figures asked are the loop's.
kis="$OUT/kiswahili-teacher.toml"
sed '/^\[distill\]/,$d' configs/kiswahili.toml > "$kis"
grep -q '^\[gauntlet\]' "$kis" && { log "FAIL: configs/kiswahili.toml's stages are no longer last"; exit 1; }
for device in cuda cpu; do
    rm -rf "$OUT/kis-$device"
    log "bao train (configs/kiswahili.toml's teacher, 3 generations, device $device)"
    "$BAO" train --config "$kis" --run "$OUT/kis-$device" --set train.generations=3 \
        --set "train.device=$device" > "$OUT/kis-$device.txt" 2>&1
    python3 - "$OUT/kis-$device/metrics.jsonl" "$device" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    pos_s = r["selfplay_positions"] * r["games_per_sec"] / max(r["selfplay_games"], 1)
    print("kiswahili %s gen %d: self-play %.0f positions/s (%.0f per CPU s), training %.0f samples/s"
          % (sys.argv[2], r["generation"], pos_s,
             r["selfplay_positions"] / max(r.get("selfplay_cpu_secs", 0), 1e-9),
             r["samples_per_sec"]))
PY
done
log "done"
