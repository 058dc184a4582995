#!/usr/bin/env python3
"""Summarises the equal-time ladder (scripts/ladder.sh) into ladder.csv, ladder.json and
ladder.svg: for each variant and time per move, the network's score and Elo against
alpha-beta at the same time, with 95% intervals and what each side spent per move. A point's
folder is MODEL-Tms: MODEL is the variant for its shipped model (`kiswahili-200ms`), or the
variant and a name for a model shipped before it (`kiswahili-original-200ms`,
`kiswahili-4x48-200ms`: letters and digits), kept as its
own line.

Usage: scripts/ladder_report.py docs/ladder
Only the standard library: the figure is hand-written SVG.
"""
import csv
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svgchart import line_chart  # noqa: E402


POINT_DIR = re.compile(r"([a-z]+(?:-[a-z0-9]+)?)-(\d+)ms")


def point(path):
    """One ladder point from a two-player results.json (net first, alpha-beta second)."""
    r = json.loads(path.read_text())
    pair = r["pairs"][0]
    net, ab = r["costs"][0], r["costs"][1]
    # Elo of the network over alpha-beta: the fit anchors player 0 (the network) at 0.
    ab_rating = r["ratings"][1]
    elo = -ab_rating["elo"] if ab_rating["elo"] is not None else None
    ci = ab_rating.get("elo_ci95")
    elo_ci = (-ci[1], -ci[0]) if ci else (None, None)
    model, ms = POINT_DIR.fullmatch(path.parent.name).groups()
    return {
        "model": model,
        "variant": r["variant"],
        "ms": int(ms),
        "clock": r["clock"],
        "games": pair["games"],
        "net_wins": pair["a_wins"],
        "ab_wins": pair["b_wins"],
        "unfinished": pair["unfinished"],
        "net_score": pair["a_win_rate"],
        "net_score_lo": pair["a_win_rate_ci95"][0],
        "net_score_hi": pair["a_win_rate_ci95"][1],
        "net_elo": elo,
        "net_elo_lo": elo_ci[0],
        "net_elo_hi": elo_ci[1],
        "net_mean_ms": net["mean_ms"],
        "net_max_ms": net["max_ms"],
        "net_sims_per_move": net["nodes_per_move"],
        "net_batch_fill": net["batch_fill"],
        "ab_mean_ms": ab["mean_ms"],
        "ab_max_ms": ab["max_ms"],
        "ab_nodes_per_move": ab["nodes_per_move"],
        "ab_mean_depth": ab["mean_depth"],
        "ab_max_depth": ab["max_depth"],
        "elapsed_s": r["elapsed_s"],
    }


def svg(points):
    """Elo of each shipped network over alpha-beta against time per move (log scale)."""
    colours = {"kiswahili": "#c0392b", "kujifunza": "#2471a3", "kiswahili-original": "#e6a09a",
               "kujifunza-original": "#a9cce3"}
    series = [{
        "name": model,
        "colour": colours.get(model),
        "points": [{"x": p["ms"], "y": p["net_elo"], "lo": p["net_elo_lo"], "hi": p["net_elo_hi"],
                    "tip": f'{model} {p["ms"]} ms: {p["net_wins"]}-{p["ab_wins"]} of {p["games"]}'}
                   for p in points if p["model"] == model],
    } for model in sorted({p["model"] for p in points})]
    return line_chart("Shipped networks vs alpha-beta at equal CPU time per move",
                      "ms per move (log scale)", "Elo of the network over alpha-beta (95%)",
                      series, log_x=True, x_ticks=sorted({p["ms"] for p in points}))


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/ladder")
    runs = [p for p in root.glob("*/results.json") if POINT_DIR.fullmatch(p.parent.name)]
    points = sorted((point(p) for p in runs), key=lambda p: (p["model"], p["ms"]))
    if not points:
        sys.exit(f"no ladder results under {root}")
    with open(root / "ladder.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(points[0]))
        wr.writeheader()
        wr.writerows(points)
    (root / "ladder.json").write_text(json.dumps(points, indent=1) + "\n")
    (root / "ladder.svg").write_text(svg(points))
    def fmt(x, p=0):
        if x is None:
            return "-"
        return f"{0.0 if abs(x) < 0.5 * 10 ** -p else x:.{p}f}"  # no "-0"

    print("| model | ms/move | games | net W-L | net score (95%) | net Elo (95%) | net ms mean/max | net sims/move | a-b ms mean/max | a-b depth mean/max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        print(f'| {p["model"]} | {p["ms"]} | {p["games"]} | {p["net_wins"]}-{p["ab_wins"]} | '
              f'{fmt(100 * p["net_score"], 1) if p["net_score"] is not None else "-"}% '
              f'({100 * p["net_score_lo"]:.1f}-{100 * p["net_score_hi"]:.1f}) | '
              f'{fmt(p["net_elo"])} ({fmt(p["net_elo_lo"])} .. {fmt(p["net_elo_hi"])}) | '
              f'{fmt(p["net_mean_ms"], 1)}/{fmt(p["net_max_ms"], 1)} | {fmt(p["net_sims_per_move"])} | '
              f'{fmt(p["ab_mean_ms"], 1)}/{fmt(p["ab_max_ms"], 1)} | {fmt(p["ab_mean_depth"], 1)}/{fmt(p["ab_max_depth"])} |')
    print(f"wrote {root / 'ladder.csv'}, {root / 'ladder.json'} and {root / 'ladder.svg'}")


if __name__ == "__main__":
    main()
