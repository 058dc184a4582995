#!/usr/bin/env python3
"""Snapshots of a long training campaign into the repository (issue 18): a campaign outlives
the 3-hour session that runs it, and its run directory (runs/, git-ignored) may not outlive the
machine, so each session commits what the next one needs to go on and what readers want to see.

Usage:
  scripts/campaign.py snapshot --run runs/kiswahili-campaign --to models/kiswahili-campaign \\
      --session NAME [--pid PID | --cpu-secs S] [--note TEXT]
  scripts/campaign.py gauge --to models/kujifunza-campaign --results DIR/results.json

Copies the run's newest checkpoint with its optimizer state (as latest.*: `bao train --init
DEST/latest.safetensors` continues it in a fresh clone), its config, metrics.jsonl,
metrics.csv and curve.svg into DEST, and appends this session to DEST/hours.json: the run's
generation and elapsed training time (state.json, cumulative over resumes) and the CPU
seconds the session's `bao train` process has used (--pid reads them from /proc), one entry per
--session, so the campaign's cumulative wall and CPU hours are on record.

`gauge` files an equal-time match of the snapshot just taken (`bao eval --out DIR`'s
results.json: the goal's match of issue 18) under DEST/gauges/SESSION-gen-NNNNNN.json, tagged
with the snapshot's session, its run's generation and the campaign's cumulative CPU hours (a
campaign may pass through several runs, each counting generations from 1), and redraws
DEST/gauges.csv and gauges.svg: the campaign's score against CPU-hours with its 95% interval,
the time each side used and, where the match checked proofs, the proven wins the network kept.
"""
import argparse
import datetime
import csv
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svgchart import line_chart  # noqa: E402


def cpu_secs_of(pid):
    """User + system CPU seconds of a live process and its finished children (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def snapshot(run, dest, session_name, cpu_secs, note):
    state = json.loads((run / "state.json").read_text())
    g = state["generation"]
    if g == 0:
        sys.exit(f"{run}: no generation finished yet, nothing to snapshot")
    dest.mkdir(parents=True, exist_ok=True)
    models = run / "models"
    base = f"gen-{g:06}"
    for suffix in (".safetensors", ".json", ".optim.safetensors", ".optim.json"):
        src = models / (base + suffix)
        if not src.exists():
            sys.exit(f"{src} is missing: is generation {g} complete?")
        shutil.copyfile(src, dest / ("latest" + suffix))
    for name in ("config.toml", "metrics.jsonl", "metrics.csv", "curve.svg"):
        if (run / name).exists():
            shutil.copyfile(run / name, dest / name)
    hours_path = dest / "hours.json"
    hours = json.loads(hours_path.read_text()) if hours_path.exists() else {"sessions": {}}
    # One entry per session, overwritten by its later snapshots (a session's CPU seconds are
    # its process's, cumulative); the campaign's CPU hours are their sum.
    hours["sessions"][session_name] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "generation": g,
        "elapsed_hours": round(state["elapsed_secs"] / 3600, 3),
        "cpu_hours": round(cpu_secs / 3600, 3) if cpu_secs is not None else None,
        "note": note,
    }
    session = hours["sessions"][session_name]
    hours["generation"] = g
    hours["session"] = session_name
    hours["elapsed_hours"] = session["elapsed_hours"]
    hours["cpu_hours"] = round(sum(s["cpu_hours"] or 0 for s in hours["sessions"].values()), 3)
    hours_path.write_text(json.dumps(hours, indent=1) + "\n")
    print(f"{dest}: generation {g}, {session['elapsed_hours']} h of training"
          + (f", {session['cpu_hours']} CPU-h this session" if cpu_secs is not None else ""))


def gauge(dest, results_path):
    """Files one match under DEST/gauges/ and redraws the campaign's gauge table and curve."""
    hours = json.loads((dest / "hours.json").read_text())
    results = json.loads(results_path.read_text())
    pair = results["pairs"][0]
    if not pair["a_name"].startswith("net:"):
        sys.exit(f"{results_path}: the first player should be the network, not {pair['a_name']}")
    g, session = hours["generation"], hours["session"]
    (dest / "gauges").mkdir(exist_ok=True)
    results["campaign"] = {"session": session, "generation": g, "cpu_hours": hours["cpu_hours"]}
    (dest / "gauges" / f"{session}-gen-{g:06}.json").write_text(json.dumps(results, indent=1) + "\n")
    rows = []
    for f in (dest / "gauges").glob("*.json"):
        r = json.loads(f.read_text())
        p, (net, ab) = r["pairs"][0], r["costs"][:2]
        proofs = (r.get("proofs") or [{}])[0]  # empty where the match checked none
        rows.append({
            "session": r["campaign"]["session"],
            "generation": r["campaign"]["generation"],
            "cpu_hours": r["campaign"]["cpu_hours"],
            "games": p["games"],
            "net_wins": p["a_wins"],
            "opponent_wins": p["b_wins"],
            "score": round(p["a_win_rate"], 4),
            "score_lo95": round(p["a_win_rate_ci95"][0], 4),
            "score_hi95": round(p["a_win_rate_ci95"][1], 4),
            "net_ms_per_move": round(net["mean_ms"], 1),
            "opponent_ms_per_move": round(ab["mean_ms"], 1),
            "opponent": p["b_name"],
            "proven_wins": proofs.get("proven_wins", ""),
            "kept": proofs.get("kept", ""),
            "dropped": proofs.get("dropped", ""),
            "unresolved": proofs.get("unresolved", ""),
        })
    rows.sort(key=lambda r: r["cpu_hours"])
    with open(dest / "gauges.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    points = [{"x": r["cpu_hours"], "y": 100 * r["score"], "lo": 100 * r["score_lo95"],
               "hi": 100 * r["score_hi95"],
               "tip": f"{r['session']} generation {r['generation']}: "
                      f"{r['net_wins']}-{r['opponent_wins']}, "
                      f"{r['net_ms_per_move']} / {r['opponent_ms_per_move']} ms a move"}
              for r in rows]
    (dest / "gauges.svg").write_text(line_chart(
        f"{dest.name}: score against {rows[-1]['opponent']} at equal time",
        "CPU-hours of this campaign", "score % (95% interval)",
        [{"name": "network", "points": points}], y_step=10))
    print(f"{dest}/gauges.csv: {session} generation {g}, {pair['a_wins']}-{pair['b_wins']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("--run", type=Path, required=True)
    s.add_argument("--to", type=Path, required=True)
    s.add_argument("--cpu-secs", type=float)
    s.add_argument("--pid", type=int, help="read --cpu-secs from this live `bao train` process")
    s.add_argument("--session", required=True, help="this session's name (e.g. its date)")
    s.add_argument("--note", default="")
    g = sub.add_parser("gauge")
    g.add_argument("--to", type=Path, required=True, help="the campaign's snapshot folder")
    g.add_argument("--results", type=Path, required=True, help="`bao eval --out`'s results.json")
    a = ap.parse_args()
    if a.cmd == "gauge":
        gauge(a.to, a.results)
        return
    cpu = cpu_secs_of(a.pid) if a.pid else a.cpu_secs
    snapshot(a.run, a.to, a.session, cpu, a.note)


if __name__ == "__main__":
    main()
