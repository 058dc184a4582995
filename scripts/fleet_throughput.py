#!/usr/bin/env python3
"""Self-play throughput of a fleet against the number of local workers.

For each worker count K: a fresh run root in a temporary directory, generation 0 published by
`bao learn` (which then stops, so no training competes), K `bao selfplay` workers started
together for --seconds each, one rayon thread each (as `ray_cluster.py run` gives a 1-CPU
worker). Throughput = samples (and simulations) uploaded by all workers / wall time.

Writes a CSV (one row per K, measured) and an SVG: measured points, and the projection
"K x the 1-worker figure" (what independent workers on as many free cores would do, since
workers share nothing but storage).

    scripts/fleet_throughput.py --bao target/release/bao --workers 1 2 3 4 --seconds 60 \
        --config configs/kujifunza-quick.toml --csv docs/fleet-throughput.csv --svg docs/fleet-throughput.svg
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"worker \S+: (\d+) shards, (\d+) games, (\d+) samples, (\d+) sims/s over ([\d.]+)s")


def measure(bao, config, k, seconds, extra):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        cfg = open(config).read() + "\n[fleet]\nsamples_per_generation = 1000000000\n" + extra
        cfg_path = os.path.join(tmp, "run.toml")
        open(cfg_path, "w").write(cfg)
        subprocess.run([bao, "learn", "--data", root, "--config", cfg_path, "--max-time", "1s", "--quiet",
                        "--device", "cpu"], check=True, capture_output=True)
        env = dict(os.environ, RAYON_NUM_THREADS="1", BAO_TORCH_THREADS="1")
        procs = [subprocess.Popen([bao, "selfplay", "--model", f"{root}/models/LATEST", "--out", root,
                                   "--worker-id", f"bench{i}", "--max-time", f"{seconds}s", "--quiet",
                                   "--device", "cpu", "--cache", os.path.join(tmp, "cache")],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for i in range(k)]
        t0 = time.time()
        outs = [p.communicate() for p in procs]
        wall = time.time() - t0
        samples = games = sims = 0.0
        for (out, err), p in zip(outs, procs):
            m = LINE.search(out)
            if p.returncode != 0 or not m:
                sys.exit(f"worker failed ({p.returncode}): {out}\n{err}")
            games += int(m.group(2))
            samples += int(m.group(3))
            sims += int(m.group(4)) * float(m.group(5))
        load = os.getloadavg()[0]
        return {"workers": k, "wall_secs": round(wall, 1), "games": int(games), "samples": int(samples),
                "samples_per_sec": round(samples / wall, 2), "games_per_sec": round(games / wall, 3),
                "sims_per_sec": round(sims / wall, 1), "load_avg_1m_after": round(load, 2)}


def svg(rows, path, cores):
    w, h, l, r, t, b = 640, 400, 70, 20, 40, 50
    ks = [row["workers"] for row in rows]
    base = rows[0]["samples_per_sec"] / rows[0]["workers"]
    proj = [(k, base * k) for k in ks]
    ymax = max([row["samples_per_sec"] for row in rows] + [p[1] for p in proj]) * 1.1
    xmax = max(ks) + 0.5
    X = lambda k: l + (w - l - r) * k / xmax
    Y = lambda v: h - b - (h - t - b) * v / ymax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">Self-play throughput vs local workers ({cores} cores)</text>',
           f'<line x1="{l}" y1="{h - b}" x2="{w - r}" y2="{h - b}" stroke="black"/>',
           f'<line x1="{l}" y1="{t}" x2="{l}" y2="{h - b}" stroke="black"/>',
           f'<text x="{(l + w - r) / 2}" y="{h - 12}" text-anchor="middle">workers</text>',
           f'<text x="16" y="{(t + h - b) / 2}" transform="rotate(-90 16 {(t + h - b) / 2})" text-anchor="middle">samples / s</text>']
    for k in ks:
        out.append(f'<text x="{X(k)}" y="{h - b + 16}" text-anchor="middle">{k}</text>')
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<text x="{l - 6}" y="{Y(v) + 4}" text-anchor="end">{v:.0f}</text>')
        out.append(f'<line x1="{l}" y1="{Y(v)}" x2="{w - r}" y2="{Y(v)}" stroke="#ddd"/>')
    pts = " ".join(f"{X(k)},{Y(v)}" for k, v in proj)
    out.append(f'<polyline points="{pts}" fill="none" stroke="#888" stroke-dasharray="6,4"/>')
    pts = " ".join(f'{X(row["workers"])},{Y(row["samples_per_sec"])}' for row in rows)
    out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for row in rows:
        out.append(f'<circle cx="{X(row["workers"])}" cy="{Y(row["samples_per_sec"])}" r="4" fill="#1f77b4"/>')
    out.append(f'<line x1="{l + 20}" y1="{t + 15}" x2="{l + 50}" y2="{t + 15}" stroke="#1f77b4" stroke-width="2"/>')
    out.append(f'<text x="{l + 56}" y="{t + 19}">measured here ({cores} shared cores)</text>')
    out.append(f'<line x1="{l + 20}" y1="{t + 33}" x2="{l + 50}" y2="{t + 33}" stroke="#888" stroke-dasharray="6,4"/>')
    out.append(f'<text x="{l + 56}" y="{t + 37}">projected: workers x 1-worker rate (one free core each)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bao", default="target/release/bao")
    p.add_argument("--config", default="configs/kujifunza-quick.toml")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--fleet", default="games_per_shard = 32\n", help="extra [fleet] lines")
    p.add_argument("--csv", default="fleet-throughput.csv")
    p.add_argument("--svg", default="fleet-throughput.svg")
    a = p.parse_args()
    rows = []
    for k in a.workers:
        row = measure(a.bao, a.config, k, a.seconds, a.fleet)
        print(row, flush=True)
        rows.append(row)
    with open(a.csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    svg(rows, a.svg, os.cpu_count())


if __name__ == "__main__":
    main()
