#!/usr/bin/python3
"""The Dask driver gives exactly the report of single-process `datacrumbs analyze`.

Traces three different real `datacrumbs run` runs (root: it loads BPF), analyzes their
directory once with `datacrumbs analyze` and once with `datacrumbs-dask` on a LocalCluster of
two worker processes (one part per trace), and compares the JSON reports, the text reports and
the --csv directories (per-event tables of every trace, under the same names even where two
traces share a file name, and the report's tables) exactly.
Usage: dask_test.py DATACRUMBS_BIN DATACRUMBS_DASK_LAUNCHER
"""

import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def run(command, **kw):
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kw)
    if done.returncode != 0:
        sys.exit(f"FAIL: {shlex.join(command)} exited with {done.returncode}:\n{done.stderr}")
    return done


def differences(a, b, path="$"):
    """Paths where two JSON values differ (first 20)."""
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = [f"{path}.{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += differences(a[k], b[k], f"{path}.{k}")
        return out[:20]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{path}[{i}]")
        return out[:20]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def tree(root):
    """Every file under root: relative path -> bytes."""
    out = {}
    for d, _dirs, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = fh.read()
    return out


def end_record(trace):
    with gzip.open(trace, "rt") as f:
        for line in f:
            if '"name":"end"' in line:
                return json.loads(line)["args"]
    sys.exit(f"FAIL: {trace} has no end record")


def main():
    tool, launcher = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        sys.exit("FAIL: the Dask test traces real runs: it needs root")
    with tempfile.TemporaryDirectory(prefix="dc-dask-test-") as tmp:
        data, traces = os.path.join(tmp, "data"), os.path.join(tmp, "traces")
        os.makedirs(data)
        os.makedirs(os.path.join(traces, "host-b"))
        workloads = [
            ["sh", "-c", f"head -c 1000000 /dev/urandom > {data}/a; cat {data}/a > /dev/null"],
            ["dd", "if=/dev/zero", f"of={data}/b", "bs=4096", "count=256", "conv=fsync"],
            ["sh", "-c", f"for i in 1 2 3 4 5; do echo line$i >> {data}/c; done; cat {data}/c; "
                         f"ls -l {data} > /dev/null"],
        ]
        # Two traces named alike on two hosts: their tables are run-1 and run-1-2.
        paths = [os.path.join(traces, "run-1.pfw.gz"), os.path.join(traces, "run-2.pfw.gz"),
                 os.path.join(traces, "host-b", "run-1.pfw.gz")]
        for trace, command in zip(paths, workloads):
            run([tool, "run", "-o", trace, "--snapshot-dir", data, "--", *command])
        events = sum(end_record(t)["events_written"] for t in paths)

        single_json, dask_json = os.path.join(tmp, "single.json"), os.path.join(tmp, "dask.json")
        single_csv, dask_csv = os.path.join(tmp, "single-csv"), os.path.join(tmp, "dask-csv")
        single = run([tool, "analyze", traces, "--json", single_json, "--csv", single_csv])
        env = dict(os.environ, DATACRUMBS_BIN=tool)
        dask = run([launcher, traces, "--workers", "2", "--parts", "4", "--json", dask_json,
                    "--csv", dask_csv], env=env)
        # Three traces: three parts, one each.
        ran = re.search(r"3 parts ran in (\d+) worker processes", dask.stderr)
        if not ran or int(ran.group(1)) < 2:
            sys.exit(f"FAIL: the parts did not run in >= 2 worker processes:\n{dask.stderr}")

        with open(single_json) as f:
            a = json.load(f)
        with open(dask_json) as f:
            b = json.load(f)
        if a["inputs"]["files"] != 3 or a["run"]["events"] != events or events == 0:
            sys.exit(f"FAIL: analyze read {a['inputs']['files']} files and {a['run']['events']} "
                     f"events; the traces hold 3 files and {events} events")
        # The last run's end snapshot of the data directory, as stat sees the files now.
        ends = [d for d in a["snapshots"]["filesystem"] if d["dir"] == data and d["when"] == "end"]
        last = {e["path"]: e["size"] for e in max(ends, key=lambda d: d["ts_us"])["entries"]}
        truth = {os.path.join(data, f): os.path.getsize(os.path.join(data, f)) for f in os.listdir(data)}
        if len(ends) != 3 or last != truth or truth[os.path.join(data, "b")] != 256 * 4096:
            sys.exit(f"FAIL: end snapshots {len(ends)} (3 runs), last {last}, on disk {truth}")
        diff = differences(a, b)
        if diff:
            sys.exit("FAIL: Dask's report differs from analyze's:\n" + "\n".join(diff))
        if single.stdout != dask.stdout:
            sys.exit("FAIL: the text reports differ:\n--- analyze\n" + single.stdout +
                     "\n--- datacrumbs-dask\n" + dask.stdout)
        a_csv, b_csv = tree(single_csv), tree(dask_csv)
        if sorted(a_csv) != sorted(b_csv):
            sys.exit(f"FAIL: the CSV files differ: only analyze {sorted(set(a_csv) - set(b_csv))}, "
                     f"only Dask {sorted(set(b_csv) - set(a_csv))}")
        differing = [name for name in a_csv if a_csv[name] != b_csv[name]]
        if differing:
            sys.exit(f"FAIL: CSV files with different contents: {differing}")
        per_event = [n for n in a_csv if n.startswith("syscall/")]
        if sorted(per_event) != ["syscall/syscall_run-1-2.csv", "syscall/syscall_run-1.csv",
                                 "syscall/syscall_run-2.csv"]:
            sys.exit(f"FAIL: per-event syscall tables {per_event}: one per trace expected")
        print(f"ok: 3 runs, {events} events, {len(a.get('files', []))} files, {len(a_csv)} CSV files: "
              f"the Dask report equals analyze's ({ran.group(1)} worker processes)")


if __name__ == "__main__":
    main()
