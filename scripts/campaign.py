#!/usr/bin/env python3
"""Tables and figures of a training campaign's equal-time matches (`bao eval --out`'s
results.json), across opening sets and along a model line. (A run's record and checkpoint are
kept in the repository with `bao run snapshot`.)

Usage:
  scripts/campaign.py compare --out DIR --match LABEL=DIR/results.json [--match ...]
  scripts/campaign.py line --out DIR --title TEXT [--goal PCT] --point ARM@HOURS=DIR/results.json ...

`compare` sets player settings side by side over several opening sets: each --match is one
`bao eval --out` results.json (the network first), labelled; a label may repeat with matches on
other opening sets (`--seed`). It writes DIR/compare.csv (one row per match and one pooled row
per label: wins, score with its 95% Wilson interval, openings the network lost with both
colours, each side's ms a move, proven wins kept) and DIR/compare.svg (each label's score per
opening set, pooled at the right).

`line` draws a model line that passed through several arms (runs grown from one another, each
in its own snapshot folder) as one figure: each --point is one equal-time match of an arm's
checkpoint (network first), placed at the training hours the line had spent when that
checkpoint was written (its ancestors' hours included, side branches' not), so "did the
campaign still gain per hour" is one look. Writes DIR/line.csv and DIR/line.svg, with the
goal's score as a flat line when --goal is given.
"""
import argparse
import collections
import math
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svgchart import line_chart  # noqa: E402


def net_match(results, path):
    """The network's side of the first pairing of a `bao eval --out` results.json (the network
    must be its first player): games, wins, each side's ms a move, the network's proofs."""
    p = results["pairs"][0]
    if not p["a_name"].startswith("net:"):
        sys.exit(f"{path}: the first player should be the network, not {p['a_name']}")
    cost = {c["name"]: c for c in results["costs"]}
    return {
        "games": p["games"], "net_wins": p["a_wins"], "opponent_wins": p["b_wins"],
        "net_ms_per_move": round(cost[p["a_name"]]["mean_ms"], 1),
        "opponent_ms_per_move": round(cost[p["b_name"]]["mean_ms"], 1),
        "opponent": p["b_name"], "network": p["a_name"],
        # the searches' sizes: with equal time on the clock they tell the machine's speed
        "net_nodes_per_move": round(cost[p["a_name"]]["nodes_per_move"]),
        "opponent_nodes_per_move": round(cost[p["b_name"]]["nodes_per_move"]),
        "proofs": {q["name"]: q for q in results.get("proofs") or []}.get(p["a_name"], {}),
    }


def wilson(wins, games, z=1.96):
    """The 95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def read_results(option, path):
    """A `bao eval --out` results.json named on the command line, or exit naming the option."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"{option}: cannot read {path}: {e}")


def lost_both_colours(results, net):
    """Openings of the first pairing whose games the network (player index `net`) lost with
    both colours."""
    by_opening = collections.defaultdict(list)
    for g in (g for g in results["games"] if g["pair"] == 0):
        net_side = "S" if g["south"] == net else "N"
        by_opening[g["opening"]].append(g["end"].get("winner") not in (None, net_side))
    return sum(1 for lost in by_opening.values() if len(lost) == 2 and all(lost))


def compare(out, matches):
    """Writes OUT/compare.csv and compare.svg from labelled `bao eval --out` results."""
    rows, pooled = [], collections.OrderedDict()
    for spec in matches:
        label, sep, path = spec.partition("=")
        if not sep or not label:
            sys.exit(f"--match {spec!r}: expected LABEL=PATH/results.json")
        r = read_results(f"--match {spec!r}", path)
        m = net_match(r, path)
        proofs = m.pop("proofs")
        row = {**m, "label": label, "opening_seed": r["seed"],
               "lost_both_colours": lost_both_colours(r, r["pairs"][0]["a"]),
               **{k: proofs.get(k, 0) for k in PROOF_COLUMNS}}
        rows.append(row)
        pooled.setdefault(label, []).append(row)
    for label, group in pooled.items():
        total = {k: sum(g[k] for g in group) for k in
                 ("games", "net_wins", "opponent_wins", "lost_both_colours") + PROOF_COLUMNS}
        moves = [g["net_ms_per_move"] for g in group]
        rows.append({**total, "label": label,
                     "opening_seed": "+".join(str(g["opening_seed"]) for g in group),
                     "net_ms_per_move": round(sum(moves) / len(moves), 1),
                     "opponent_ms_per_move": round(
                         sum(g["opponent_ms_per_move"] for g in group) / len(group), 1),
                     "opponent": group[0]["opponent"], "network": group[0]["network"]})
    for row in rows:
        lo, hi = wilson(row["net_wins"], row["games"])
        row["score"] = round(row["net_wins"] / row["games"], 4)
        row["score_lo95"], row["score_hi95"] = round(lo, 4), round(hi, 4)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["label", "opening_seed", "games", "net_wins", "opponent_wins", "score",
              "score_lo95", "score_hi95", "lost_both_colours", "net_ms_per_move",
              "opponent_ms_per_move", *PROOF_COLUMNS, "network", "opponent"]
    with open(out / "compare.csv", "w", newline="") as f:
        # `fields` alone decides the columns: a match's other figures (its search sizes) are
        # not pooled, so they stay out of the file
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    seeds = sorted({r["opening_seed"] for r in rows if isinstance(r["opening_seed"], int)})
    pooled_x = seeds[-1] + 1
    series = [{"name": label,
               "points": [{"x": r["opening_seed"] if isinstance(r["opening_seed"], int)
                           else pooled_x,
                           "y": 100 * r["score"], "lo": 100 * r["score_lo95"],
                           "hi": 100 * r["score_hi95"],
                           "tip": f"{label}, openings {r['opening_seed']}: {r['net_wins']}-"
                                  f"{r['opponent_wins']}, lost with both colours "
                                  f"{r['lost_both_colours']}"}
                          for r in rows if r["label"] == label]}
              for label in pooled]
    (out / "compare.svg").write_text(line_chart(
        f"score against {rows[0]['opponent']} at equal time",
        f"opening set (bao eval --seed); {pooled_x}: all pooled", "score % (95% interval)",
        series, x_ticks=seeds + [pooled_x], y_step=10))
    for r in rows:
        print(f"{r['label']:<24} {str(r['opening_seed']):<10} {r['net_wins']}-{r['opponent_wins']}"
              f"  {100 * r['score']:.1f}% ({100 * r['score_lo95']:.1f}-{100 * r['score_hi95']:.1f})"
              f"  lost both colours {r['lost_both_colours']}  {r['net_ms_per_move']} /"
              f" {r['opponent_ms_per_move']} ms")


def line(out, title, goal, points):
    """Writes OUT/line.csv and line.svg: arms' equal-time matches against the line's hours."""
    rows = []
    for spec in points:
        head, sep, path = spec.partition("=")
        arm, at, hours = head.partition("@")
        try:
            hours = float(hours)
        except ValueError:
            hours = None
        if not sep or not at or not arm or hours is None or not hours >= 0:
            sys.exit(f"--point {spec!r}: expected ARM@HOURS=PATH/results.json, HOURS >= 0")
        r = read_results(f"--point {spec!r}", path)
        m = net_match(r, path)
        lo, hi = wilson(m["net_wins"], m["games"])
        rows.append({"arm": arm, "hours": hours, "opening_seed": r["seed"],
                     "games": m["games"], "net_wins": m["net_wins"],
                     "opponent_wins": m["opponent_wins"],
                     "score": round(m["net_wins"] / m["games"], 4),
                     "score_lo95": round(lo, 4), "score_hi95": round(hi, 4),
                     "net_ms_per_move": m["net_ms_per_move"],
                     "opponent_ms_per_move": m["opponent_ms_per_move"],
                     "net_nodes_per_move": m["net_nodes_per_move"],
                     "opponent_nodes_per_ms": round(
                         m["opponent_nodes_per_move"] / m["opponent_ms_per_move"]),
                     "network": m["network"], "opponent": m["opponent"], "results": path})
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "line.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    arms = list(collections.OrderedDict.fromkeys(r["arm"] for r in rows))
    series = [{"name": arm,
               "points": [{"x": r["hours"], "y": 100 * r["score"], "lo": 100 * r["score_lo95"],
                           "hi": 100 * r["score_hi95"],
                           "tip": f"{arm} ({r['results']}): {r['net_wins']}-{r['opponent_wins']},"
                                  f" {r['net_ms_per_move']} / {r['opponent_ms_per_move']} ms"}
                          for r in sorted(rows, key=lambda r: r["hours"]) if r["arm"] == arm]}
              for arm in arms]
    if goal is not None:
        xs = [r["hours"] for r in rows]
        series.append({"name": f"goal {goal:g}%", "colour": "#999999",
                       "points": [{"x": x, "y": goal, "lo": None, "hi": None, "tip": None}
                                  for x in (min(xs), max(xs))]})
    (out / "line.svg").write_text(line_chart(
        title, "training hours of the model line (this machine)", "score % (95% interval)",
        series, y_step=10))
    for r in rows:
        print(f"{r['arm']:<20} {r['hours']:6.2f} h  {r['net_wins']}-{r['opponent_wins']}"
              f"  {100 * r['score']:.1f}% ({100 * r['score_lo95']:.1f}-{100 * r['score_hi95']:.1f})"
              f"  {r['net_nodes_per_move']} sims a move, opponent {r['opponent_nodes_per_ms']}"
              " nodes/ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--match", action="append", required=True,
                   help="LABEL=results.json of `bao eval --out` (network first); repeatable")
    ln = sub.add_parser("line")
    ln.add_argument("--out", type=Path, required=True)
    ln.add_argument("--title", required=True)
    ln.add_argument("--goal", type=float, help="the goal's score in percent, drawn flat")
    ln.add_argument("--point", action="append", required=True,
                    help="ARM@HOURS=results.json of `bao eval --out` (network first); repeatable")
    a = ap.parse_args()
    if a.cmd == "line":
        line(a.out, a.title, a.goal, a.point)
        return
    compare(a.out, a.match)

if __name__ == "__main__":
    main()
