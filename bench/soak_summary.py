#!/usr/bin/env python3
"""The result of a soak (bench/soak.sh): a markdown table and the judgements.

usage: soak_summary.py SOAK_CSV SUMMARY_JSON TRACER_OUT [--warmup S] [--rss-growth-mib M]
                       [--verdict FILE] [--malloc-info FILE]

SOAK_CSV: t_s,rss_kb,hwm_kb,cpu_s,threads,fds,load1 samples of the tracer; SUMMARY_JSON: the
run's --summary; TRACER_OUT: its stdout, holding soak_load's `calls=... calls_per_s=...` line.
Judgements, on the samples taken after the warm-up (default 60 s: probes attached, rings and
tables filled) and before the workload's end (the run's last seconds, writing the index, are
shown but not judged):
  flat memory: RSS at the last such sample at most M MiB (default 4) above the first, and
               every such sample at most M MiB above the first;
  no fd growth: the most open fds in the last 6 such samples (a minute) is no more than the most
               in the first 6 (a live child holds its uprobe links, so single samples vary);
  no loss:     the summary's events.lost is 0.
--verdict writes `ok` or the judgements missed, one per line.
--malloc-info: the tracer's DATACRUMBS_MALLOC_INFO samples (glibc malloc_info, every 10 s): the
heap glibc holds after the warm-up and at the end, split into in use and kept free.
"""
import argparse
import csv
import json
import re
import sys


def slope_per_hour(ts, ys):
    """Least-squares slope of ys over ts (seconds), per hour."""
    n = len(ts)
    if n < 2:
        return 0.0
    mt, my = sum(ts) / n, sum(ys) / n
    den = sum((t - mt) ** 2 for t in ts)
    return 0.0 if den == 0 else 3600 * sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / den


def heap_samples(path):
    """[(seconds, held bytes, free bytes)] of each malloc_info sample: arenas plus mmapped chunks."""
    out = []
    for ms, body in re.findall(r'<sample ms="(\d+)">(.*?)</sample>', open(path).read(), re.S):
        # The last <total>/<system> elements are malloc_info's sums over every arena.
        tail = body[body.rfind("</heap>"):]
        free = sum(int(v) for t, v in re.findall(r'<total type="(fast|rest)" count="\d+" size="(\d+)"', tail))
        mmapped = re.search(r'<total type="mmap" count="\d+" size="(\d+)"', tail)
        held = re.search(r'<system type="current" size="(\d+)"', tail)
        if held:
            out.append((int(ms) / 1000, int(held[1]) + (int(mmapped[1]) if mmapped else 0), free))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("summary")
    ap.add_argument("tracer_out")
    ap.add_argument("--warmup", type=float, default=60)
    ap.add_argument("--rss-growth-mib", type=float, default=4)
    ap.add_argument("--verdict")
    ap.add_argument("--malloc-info")
    a = ap.parse_args()

    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(a.csv))]
    summary = json.load(open(a.summary))
    m = re.search(r"calls=(\d+) rounds=(\d+) forks=(\d+) seconds=([\d.]+) calls_per_s=([\d.]+)",
                  open(a.tracer_out).read())
    if not rows or not m:
        sys.exit("soak_summary: no samples, or no soak_load result line")
    calls, forks, load_s, calls_s = int(m[1]), int(m[3]), float(m[4]), float(m[5])
    judged = [r for r in rows if a.warmup <= r["t_s"] <= load_s] or rows
    mib = lambda kb: kb / 1024  # noqa: E731

    ev = summary["events"]
    events = ev["written"] + ev["counters"]
    elapsed = summary["elapsed_s"]
    cpu = (rows[-1]["cpu_s"] - rows[0]["cpu_s"]) / max(rows[-1]["t_s"] - rows[0]["t_s"], 1e-9)
    base = judged[0]
    rss_growth = mib(max(r["rss_kb"] for r in judged) - base["rss_kb"])
    rss_end_growth = mib(judged[-1]["rss_kb"] - base["rss_kb"])
    fd_growth = max(r["fds"] for r in judged[-6:]) - max(r["fds"] for r in judged[:6])
    slope = slope_per_hour([r["t_s"] for r in judged], [mib(r["rss_kb"]) for r in judged])

    def first_last_max(key, fmt):
        return (fmt(rows[0][key]), fmt(rows[-1][key]), fmt(max(r[key] for r in rows)))

    print("| measure | first | last | max | after warm-up |")
    print("|---|---:|---:|---:|---|")
    f_mib = lambda kb: f"{mib(kb):.1f} MiB"  # noqa: E731
    f_int = lambda v: f"{v:.0f}"  # noqa: E731
    print("| tracer RSS (VmRSS) | %s | %s | %s | " % first_last_max("rss_kb", f_mib)
          + f"{rss_end_growth:+.1f} MiB from {base['t_s']:.0f} s to {judged[-1]['t_s']:.0f} s, "
          + f"slope {slope:+.2f} MiB/h |")
    print("| tracer VmHWM | %s | %s | %s | |" % first_last_max("hwm_kb", f_mib))
    print("| open fds | %s | %s | %s | " % first_last_max("fds", f_int)
          + f"last minute's max {fd_growth:+.0f} over the first minute's |")
    print("| threads | %s | %s | %s | |" % first_last_max("threads", f_int))
    print("| load average (1 min) | %s | %s | %s | |" % first_last_max("load1", lambda v: f"{v:.2f}"))
    print()
    print(f"- Samples: {len(rows)}, from {rows[0]['t_s']:.0f} s to {rows[-1]['t_s']:.0f} s; "
          f"judged: {len(judged)} ({a.warmup:.0f} s to the workload's end).")
    print(f"- Workload: {calls:,} I/O calls in {load_s:.0f} s = {calls_s:,.0f} calls/s, "
          f"{forks:,} children forked.")
    print(f"- Tracer: {events:,} events written in {elapsed:.0f} s = {events / elapsed:,.0f} events/s; "
          f"lost {ev['lost']:,}; {summary.get('processes_in_all', len(summary['processes'])):,} processes in "
          f"the summary ({len(summary['processes']):,} in detail, the rest folded by command).")
    print(f"- Tracer CPU: {100 * cpu:.1f} % of one CPU (utime+stime of all its threads over the samples).")

    # The steady state: bounded tables (the summary's detail of 1000 exited processes, the file
    # identities) fill during the first minutes; what must not grow is the second half.
    half = [r for r in judged if r["t_s"] >= (judged[0]["t_s"] + judged[-1]["t_s"]) / 2]
    if len(half) >= 2:
        half_rss = [mib(r["rss_kb"]) for r in half]
        print(f"- Second half ({half[0]['t_s']:.0f} s to {half[-1]['t_s']:.0f} s): RSS "
              f"{min(half_rss):.1f} to {max(half_rss):.1f} MiB, slope "
              f"{slope_per_hour([r['t_s'] for r in half], half_rss):+.2f} MiB/h.")
    heap = heap_samples(a.malloc_info) if a.malloc_info else []
    heap_judged = [h for h in heap if h[0] >= a.warmup] or heap
    if heap_judged:
        first, last = heap_judged[0], heap_judged[-1]
        peak = max(heap_judged, key=lambda h: h[1])
        print(f"- Heap held by glibc (malloc_info; in use = held - free): {mib(first[1] / 1024):.1f} MiB "
              f"({mib((first[1] - first[2]) / 1024):.1f} in use) at {first[0]:.0f} s, "
              f"{mib(last[1] / 1024):.1f} MiB ({mib((last[1] - last[2]) / 1024):.1f} in use) at {last[0]:.0f} s, "
              f"at most {mib(peak[1] / 1024):.1f} MiB ({peak[0]:.0f} s).")
    missed = []
    if rss_growth > a.rss_growth_mib:
        missed.append(f"memory grew {rss_growth:.1f} MiB after {a.warmup:.0f} s (limit {a.rss_growth_mib:g} MiB)")
    if fd_growth > 0:
        missed.append(f"open fds grew by {fd_growth:.0f} from the first minute after {a.warmup:.0f} s to the last")
    if ev["lost"]:
        missed.append(f"{ev['lost']:,} events lost")
    print(f"- Flat memory (RSS after {a.warmup:.0f} s never more than {a.rss_growth_mib:g} MiB above its "
          f"first value there): {'no' if rss_growth > a.rss_growth_mib else 'yes'} (max {rss_growth:+.1f} MiB); "
          f"no fd growth: {'no' if fd_growth > 0 else 'yes'}; 0 lost: {'no' if ev['lost'] else 'yes'}.")
    if a.verdict:
        open(a.verdict, "w").write("\n".join(missed) + "\n" if missed else "ok\n")


if __name__ == "__main__":
    main()
