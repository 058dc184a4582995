#!/usr/bin/env python3
"""Ablations per machine-hour: trains each recipe variant for the same time on
this machine, rates its checkpoints against one fixed equal-time gauntlet, and plots Elo
against hours of training, one line per variant. A recipe change counts when its line is
higher at equal hours, not when a loss falls.

Usage:
  scripts/ablate.py --out docs/ablation/kujifunza --hours 1 \\
      --variant baseline=configs/experiments/kujifunza-recipe.toml --variant opening=configs/x.toml \\
      [--gauntlet alphabeta,net:models/kujifunza.safetensors] [--movetime 50] [--games 40] \\
      [--every 2] [--runs runs/ablation] [--proofs MS] [--puzzles FILE [--puzzle-sims 1]]

Each variant trains in RUNS/NAME with `bao train`, one generation at a time, until its
budget is spent: --cpu-hours counts the CPU time of its `bao train` processes (user + system,
every thread; kept per generation in RUNS/NAME/cpu.json), so variants compare per CPU-hour
even when something else shares the machine; --hours counts state.json's elapsed wall time
(both cores busy, nothing else running: the same budget for every variant). Every --every-th checkpoint and the last are rated:
`bao eval --format gauntlet --movetime MS --players net:CKPT,GAUNTLET...` (paired openings,
thread CPU clock); the Elo is the checkpoint's over the first gauntlet player, with its 95%
interval. With --proofs MS every move of the ratings is also checked by the solver (`bao eval
--proofs MS`, outside the clocks) and the checkpoint's proven wins kept and given away are
recorded and plotted (OUT/proofs.svg): the Kujifunza gauge, where the score against alpha-beta
splits every paired opening. With --puzzles FILE each checkpoint is also scored on those proven
puzzles (`bao eval --puzzles`) with --puzzle-sims simulations a move (1: the raw policy), and
the accuracy is plotted (OUT/puzzles.svg): in Kujifunza this separates checkpoints that every
game-based gauge rates alike (docs/solving.md). Resumable: training continues its run directory, and a checkpoint already rated is
not rated again. Writes OUT/ablation.csv, ablation.json, ablation.svg and every rating's
results.json under OUT/NAME/gen-NNNNNN/. Run it with nothing else on the machine.
"""
import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from svgchart import line_chart  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# BAO_BIN: a copy of the binary, so that a rebuild during a long ablation changes nothing.
BAO = Path(os.environ.get("BAO_BIN", ROOT / "target" / "release" / "bao"))


def bao(*args):
    """Runs `bao ARGS`; returns the CPU seconds (user + system) it used."""
    print("+ bao " + " ".join(args), file=sys.stderr, flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(BAO), *args], check=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def state(run):
    p = run / "state.json"
    return json.loads(p.read_text()) if p.exists() else {"generation": 0, "elapsed_secs": 0.0}


def cpu_by_generation(run):
    """Cumulative CPU seconds of training at the end of each generation (cpu.json)."""
    p = run / "cpu.json"
    return {int(g): c for g, c in json.loads(p.read_text()).items()} if p.exists() else {}


def train(name, config, run, wall_budget_s, cpu_budget_s):
    """Trains `run` generation by generation until its budget is spent (CPU seconds when
    `cpu_budget_s` is set, else elapsed wall seconds)."""
    text = config.read_text()
    if not re.search(r"(?m)^generations\s*=", text):
        sys.exit(f"{config}: [train] generations must be set (the driver raises it)")
    staged = run.parent / f"{name}.toml"
    while True:
        s = state(run)
        cpu = cpu_by_generation(run)
        spent = cpu.get(s["generation"], 0.0)
        if (spent >= cpu_budget_s) if cpu_budget_s else (s["elapsed_secs"] >= wall_budget_s):
            return
        # Only `generations` may differ between the runs of one directory: raise it by one.
        staged.write_text(re.sub(r"(?m)^generations\s*=.*$", f"generations = {s['generation'] + 1}", text))
        used = bao("train", "--config", str(staged), "--run", str(run))
        # A generation interrupted and redone is charged in full: CPU spent is spent.
        done = state(run)["generation"]
        cpu[done] = spent + used
        (run / "cpu.json").write_text(json.dumps({str(g): c for g, c in sorted(cpu.items())}) + "\n")


def rate(variant, ckpt, out, gauntlet, movetime, games, proofs):
    results = out / "results.json"
    if not results.exists():
        extra = ["--proofs", str(proofs)] if proofs else []
        bao("eval", "--variant", variant, "--format", "gauntlet", "--movetime", str(movetime),
            "--games", str(games), "--players", ",".join([f"net:{ckpt}", *gauntlet]),
            "--out", str(out), *extra)
    r = json.loads(results.read_text())
    checked = {}
    if proofs:
        p = r["proofs"][0]  # the checkpoint is the first player
        checked = {"proven_wins": p["proven_wins"], "kept": p["kept"], "dropped": p["dropped"],
                   "unresolved": p["unresolved"], "kept_share": p.get("kept_share")}
    first = r["ratings"][1]  # the checkpoint is anchored at 0; the first gauntlet player
    ci = first.get("elo_ci95")
    return {
        "elo": -first["elo"] if first["elo"] is not None else None,
        "elo_lo": -ci[1] if ci else None,
        "elo_hi": -ci[0] if ci else None,
        "games": first["games"],
        "net_ms": r["costs"][0]["mean_ms"],
        **checked,
    }


def puzzle_accuracy(variant, ckpt, out, puzzles, sims):
    """The checkpoint's share of puzzles kept, with its 95% interval (in %)."""
    result = out / "puzzles.json"
    if not result.exists():
        bao("eval", "--variant", variant, "--puzzles", str(puzzles),
            "--players", f"net:{ckpt}:sims={sims}", "--out", str(out))
    s = json.loads(result.read_text())["scores"][0]
    return {"puzzle_accuracy": 100.0 * s["accuracy"], "puzzle_lo": 100.0 * s["accuracy_ci95"][0],
            "puzzle_hi": 100.0 * s["accuracy_ci95"][1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    budget = ap.add_mutually_exclusive_group(required=True)
    budget.add_argument("--hours", type=float, help="wall hours of training per variant")
    budget.add_argument("--cpu-hours", type=float, help="CPU hours of training per variant")
    ap.add_argument("--variant", action="append", required=True, metavar="NAME=CONFIG")
    ap.add_argument("--gauntlet", default="alphabeta")
    ap.add_argument("--movetime", type=int, default=50)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--every", type=int, default=2)
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "ablation")
    ap.add_argument("--proofs", type=int, default=0, metavar="MS")
    ap.add_argument("--puzzles", type=Path, metavar="FILE")
    ap.add_argument("--puzzle-sims", type=int, default=1)
    a = ap.parse_args()
    if not BAO.exists():
        sys.exit(f"{BAO} is missing: build it (. scripts/setup.sh && cargo build --release)")
    variants = [v.split("=", 1) for v in a.variant]
    if any(len(v) != 2 for v in variants):
        sys.exit("--variant takes NAME=CONFIG")
    gauntlet = a.gauntlet.split(",")
    a.runs.mkdir(parents=True, exist_ok=True)
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, config in variants:
        config = Path(config)
        game = tomllib.loads(config.read_text())["variant"]
        run = a.runs / name
        train(name, config, run, (a.hours or 0) * 3600, (a.cpu_hours or 0) * 3600)
        cpu = cpu_by_generation(run)
        metrics = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines() if l]
        last = metrics[-1]["generation"]
        for m in metrics:
            g = m["generation"]
            if g % a.every and g != last:
                continue
            ckpt = run / "models" / f"gen-{g:06}.safetensors"
            r = rate(game, ckpt, a.out / name / f"gen-{g:06}", gauntlet, a.movetime, a.games, a.proofs)
            if a.puzzles:
                r.update(puzzle_accuracy(game, ckpt, a.out / name / f"gen-{g:06}", a.puzzles, a.puzzle_sims))
            rows.append({"variant": name, "config": str(config), "generation": g,
                         "hours": m["elapsed_secs"] / 3600,
                         "cpu_hours": cpu[g] / 3600 if g in cpu else None, "samples": sum(x["selfplay_positions"] for x in metrics if x["generation"] <= g),
                         "distinct_openings": m.get("distinct_openings"), **r})
    with open(a.out / "ablation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (a.out / "ablation.json").write_text(json.dumps({
        "gauntlet": gauntlet, "movetime_ms": a.movetime, "games": a.games, "hours": a.hours,
        "cpu_hours": a.cpu_hours,
        "proofs_ms": a.proofs or None, "puzzles": str(a.puzzles) if a.puzzles else None,
        "puzzle_sims": a.puzzle_sims if a.puzzles else None, "rows": rows,
    }, indent=1) + "\n")
    x_key, x_label = (("cpu_hours", "CPU-hours of training") if a.cpu_hours
                      else ("hours", "hours of training on this machine"))
    series = [{"name": name, "points": [
        {"x": r[x_key], "y": r["elo"], "lo": r["elo_lo"], "hi": r["elo_hi"],
         "tip": f'{name} gen {r["generation"]}: {r["games"]} games'} for r in rows if r["variant"] == name]}
        for name, _ in variants]
    (a.out / "ablation.svg").write_text(line_chart(
        f"Elo over {gauntlet[0]} at {a.movetime} ms a move, by training time",
        x_label, f"Elo over {gauntlet[0]} (95%)", series))
    if a.proofs:
        series = [{"name": name, "points": [
            {"x": r[x_key], "y": 100.0 * r["dropped"] / max(1, r["proven_wins"]),
             "tip": f'{name} gen {r["generation"]}: {r["dropped"]} of {r["proven_wins"]} given away'}
            for r in rows if r["variant"] == name]} for name, _ in variants]
        (a.out / "proofs.svg").write_text(line_chart(
            f"proven wins given away against {gauntlet[0]} at {a.movetime} ms a move",
            x_label, "% of proven wins given away", series, y_step=1))
    if a.puzzles:
        series = [{"name": name, "points": [
            {"x": r[x_key], "y": r["puzzle_accuracy"], "lo": r["puzzle_lo"], "hi": r["puzzle_hi"],
             "tip": f'{name} gen {r["generation"]}'} for r in rows if r["variant"] == name]}
            for name, _ in variants]
        (a.out / "puzzles.svg").write_text(line_chart(
            f"proven puzzles kept at {a.puzzle_sims} simulation(s) a move", x_label,
            "% of puzzles kept (95%)", series, y_step=5))
    for r in rows:
        kept = f'  gave away {r["dropped"]} of {r["proven_wins"]} proven wins' if a.proofs else ""
        cpu = f' {r["cpu_hours"]:5.2f} CPU-h' if r["cpu_hours"] is not None else ""
        print(f'{r["variant"]:>16} gen {r["generation"]:>3} {r["hours"]:5.2f} h{cpu}  Elo {r["elo"]}{kept}')
    print(f"wrote {a.out / 'ablation.csv'}, ablation.json and ablation.svg")


if __name__ == "__main__":
    main()
