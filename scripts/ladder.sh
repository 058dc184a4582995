#!/usr/bin/env bash
# The equal-time ladder (docs/equal-time.md#the-equal-time-ladder): each shipped model against
# alpha-beta at the same thinking time per move (thread CPU time), and the strength cost of
# leaf batching at equal visits. Results go to docs/ladder/<name>/results.json; scripts/ladder_report.py
# turns them into docs/ladder/ladder.csv and ladder.svg.
#   LADDER_TIMES="50 200 1000"  times per move in ms
#   LADDER_GAMES="200 200 200"  games per point, one per time (the committed points have 200,
#                               two of the 1000 ms ones 100)
#   LADDER_THREADS=2            games played at once (one per core; the clock is per thread)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked --bin bao
BAO=target/release/bao
OUT=docs/ladder
THREADS="${LADDER_THREADS:-2}"
read -r -a TIMES <<< "${LADDER_TIMES:-50 200 1000}"
read -r -a GAMES <<< "${LADDER_GAMES:-200 200 200}"
export BAO_TORCH_THREADS=1
mkdir -p "$OUT"

if [ "${LADDER_LEAVES:-1}" = 1 ]; then
    # Leaf batching at equal visits: one leaf a call against 8, 16 and 32.
    M=models/kiswahili.safetensors
    $BAO eval --variant kiswahili --format gauntlet --games "${LADDER_LEAF_GAMES:-60}" --threads "$THREADS" \
        --players "net:$M:sims=200:leaves_per_step=1,net:$M:sims=200:leaves_per_step=8,net:$M:sims=200:leaves_per_step=16,net:$M:sims=200:leaves_per_step=32" \
        --out "$OUT/leaves-kiswahili-200sims"
fi

for i in "${!TIMES[@]}"; do
    t="${TIMES[$i]}"; g="${GAMES[$i]}"
    for v in kiswahili kujifunza; do
        $BAO eval --variant "$v" --games "$g" --threads "$THREADS" --movetime "$t" \
            --players "net:models/$v.safetensors,alphabeta" --out "$OUT/$v-${t}ms"
    done
done
python3 scripts/ladder_report.py "$OUT"
