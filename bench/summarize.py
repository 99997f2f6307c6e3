#!/usr/bin/env python3
"""Tables for interleaved benchmark rounds (shared by run_overhead.sh and run_fio.sh).

usage: summarize.py ROWS --configs a,b,c [--metric NAME] [--notes FILE] [--json FILE]

ROWS: one run per line, tab-separated: config, round, metric (ns/op, IOPS, ...), wall seconds of
the whole command, CPU seconds of the whole command (user + system, children included).
Ratios are taken within each round against the first config of --configs (the baseline, run
in the same round), then the median over rounds is shown with the range: never a ratio of
medians, so slow and fast phases of a shared machine do not mix. NOTES: config<TAB>note lines.
Prints the summary table, then every round's raw values; --json also writes the medians
({config: {"metric", "metric_ratio", "wall_ratio", "cpu"}}) for the callers' verdicts.
"""
import argparse
import json
import statistics
import sys


def fmt(v, digits=1):
    return "—" if v is None else f"{v:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--metric", default="ns/op")
    ap.add_argument("--json")
    ap.add_argument("--notes")
    a = ap.parse_args()
    configs = a.configs.split(",")
    base = configs[0]
    runs = {}  # (config, round) -> (metric, wall, cpu)
    for line in open(a.rows):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 5:
            runs[(f[0], int(f[1]))] = (float(f[2]), float(f[3]), float(f[4]))
    notes = {}
    if a.notes:
        for line in open(a.notes):
            k, _, v = line.rstrip("\n").partition("\t")
            notes[k] = v
    rounds = sorted({r for (_, r) in runs})

    def ratios(cfg, i):
        out = []
        for r in rounds:
            if (cfg, r) in runs and (base, r) in runs and runs[(base, r)][i] > 0:
                out.append(runs[(cfg, r)][i] / runs[(base, r)][i])
        return out

    def med_range(values, digits=2):
        if not values:
            return "—"
        m = statistics.median(values)
        return f"{m:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"

    if a.json:
        out = {}
        for cfg in configs:
            mine = [runs[(cfg, r)] for r in rounds if (cfg, r) in runs]
            if mine:
                m, w = ratios(cfg, 0), ratios(cfg, 1)
                out[cfg] = {"metric": statistics.median(v[0] for v in mine),
                            "metric_ratio": statistics.median(m) if m else None,
                            "wall_ratio": statistics.median(w) if w else None,
                            "cpu": statistics.median(v[2] for v in mine)}
        json.dump(out, open(a.json, "w"), indent=1)
    unit = a.metric
    print(f"| config | {unit} (median) | {unit} × {base} | whole command × {base} (wall) | "
          f"CPU-s of the command (median) | runs | notes |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for cfg in configs:
        mine = [runs[(cfg, r)] for r in rounds if (cfg, r) in runs]
        if not mine:
            print(f"| {cfg} | — | — | — | — | 0 | {notes.get(cfg, 'no successful run')} |")
            continue
        metric = statistics.median(v[0] for v in mine)
        cpu = statistics.median(v[2] for v in mine)
        print(f"| {cfg} | {fmt(metric)} | {med_range(ratios(cfg, 0))} | {med_range(ratios(cfg, 1))} | "
              f"{cpu:.2f} | {len(mine)} | {notes.get(cfg, '')} |")
    print()
    print(f"Every round ({unit} / wall seconds of the whole command):")
    print()
    print("| round | " + " | ".join(configs) + " |")
    print("|---:|" + "---:|" * len(configs))
    for r in rounds:
        cells = []
        for cfg in configs:
            v = runs.get((cfg, r))
            cells.append("—" if v is None else f"{v[0]:,.1f} / {v[1]:.2f}")
        print(f"| {r} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
