#!/usr/bin/env python3
"""Snapshots of a long training campaign into the repository (issue 18): a campaign outlives
the 3-hour session that runs it, and its run directory (runs/, git-ignored) may not outlive the
machine, so each session commits what the next one needs to go on and what readers want to see.

Usage:
  scripts/campaign.py snapshot --run runs/kiswahili-campaign --to models/kiswahili-campaign \\
      --session NAME [--pid PID | --cpu-secs S] [--note TEXT]

Copies the run's newest checkpoint with its optimizer state (as latest.*: `bao train --init
DEST/latest.safetensors` continues it in a fresh clone), its config, metrics.jsonl,
metrics.csv and curve.svg into DEST, and appends this session to DEST/hours.json: the run's
generation and elapsed training time (state.json, cumulative over resumes) and the CPU
seconds the session's `bao train` process has used (--pid reads them from /proc), one entry per
--session, so the campaign's cumulative wall and CPU hours are on record.
"""
import argparse
import datetime
import json
import os
import shutil
import sys
from pathlib import Path


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
    hours["elapsed_hours"] = session["elapsed_hours"]
    hours["cpu_hours"] = round(sum(s["cpu_hours"] or 0 for s in hours["sessions"].values()), 3)
    hours_path.write_text(json.dumps(hours, indent=1) + "\n")
    print(f"{dest}: generation {g}, {session['elapsed_hours']} h of training"
          + (f", {session['cpu_hours']} CPU-h this session" if cpu_secs is not None else ""))


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
    a = ap.parse_args()
    cpu = cpu_secs_of(a.pid) if a.pid else a.cpu_secs
    snapshot(a.run, a.to, a.session, cpu, a.note)


if __name__ == "__main__":
    main()
