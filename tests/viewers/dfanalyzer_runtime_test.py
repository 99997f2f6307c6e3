#!/usr/bin/python3
"""Traces of a real mixed run, loaded by LLNL's dfanalyzer as a user would load them.

Traces the workload of viewer_traces.py in trace and profile mode (root: it loads BPF),
prepares a patched copy of the vendored dfanalyzer (scripts/prepare-dfanalyzer.py; Debian's
Dask, pandas dtypes for pyarrow's), and loads each trace with it on a two-process LocalCluster,
through the trace's own .zindex (zindex_py.py refuses to build one): the event count must be
the trace's events (spans in trace mode, counter samples in profile mode; metadata, page-cache
totals included, are not events), its I/O time the POSIX dur the trace holds (in profile mode,
the calls' summed time), its files the trace's, every file hash of an event (a sample's beside
its args, read with a load_fn) must name one of them, and summary() must run and say so.
Skips (exit 77) only when the dfanalyzer tarball is absent.
Usage: dfanalyzer_runtime_test.py DATACRUMBS_BIN TCP_PAIR_BIN STDIO_APP_BIN
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PREPARE = os.path.join(HERE, "..", "..", "scripts", "prepare-dfanalyzer.py")


def sample_file(val, d, time_approximate, condition_fn, load_data):
    """dfanalyzer load_fn: a counter sample names its file beside its args."""
    if val.get("ph") == "C" and "fhash" in val:
        return {"fhash": val["fhash"]}
    return {}


def check(trace, mode):
    """Runs in a child whose PYTHONPATH has the patched dfanalyzer (the workers inherit it)."""
    import logging

    from dask.distributed import Client, LocalCluster
    from dfanalyzer.main import DFAnalyzer, update_dft_configuration
    from viewer_traces import trace_lines

    lines = trace_lines(trace)
    kind = "X" if mode == "trace" else "C"
    events = [e for e in lines if e["ph"] != "M"]
    assert all(e["ph"] == kind for e in events), f"{mode} trace holds other than {kind} events"
    posix_time = sum(e["dur"] for e in events if e["cat"] == "POSIX")
    files = {e["args"]["name"] for e in lines if e["ph"] == "M" and e["name"] == "FH"}
    if mode == "profile":
        assert posix_time == sum(e["args"]["time_us"] for e in events if e["cat"] == "POSIX")

    update_dft_configuration(workers=2, log_file=trace + ".dfanalyzer.log")
    logging.getLogger("distributed").setLevel(logging.WARNING)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        a = DFAnalyzer(trace, load_fn=sample_file)
        got_events = len(a.events)
        io_time = a.events.query("phase == 2")["io_time"].sum().compute()
        got_files = set(a.file_hash["name"].compute())
        hashes = {int(float(h)) for h in a.file_hash.index.compute()}
        used = {int(float(h)) for h in a.events["fhash"].dropna().compute()}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            a.summary()
    problems = []
    if got_events != len(events):
        problems.append(f"{got_events} events, the trace has {len(events)}")
    if int(io_time) != posix_time:
        problems.append(f"I/O time {io_time}, the trace's POSIX dur add up to {posix_time}")
    if got_files != files:
        problems.append(f"files differ: {sorted(got_files ^ files)[:5]}")
    if not used or not used <= hashes:
        problems.append(f"{len(used - hashes)} of {len(used)} event file hashes name no file")
    if f"Events Recorded: " not in out.getvalue() or "Overall I/O" not in out.getvalue():
        problems.append("summary() printed no summary:\n" + out.getvalue())
    print(f"{trace}: {got_events} events, I/O time {int(io_time)} us, {len(got_files)} files, "
          f"{len(used)} file hashes used")
    return problems


def main():
    if sys.argv[1] == "--check":
        problems = check(sys.argv[2], sys.argv[3])
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        sys.exit(1 if problems else 0)
    tool, tcp_pair, stdio_app = sys.argv[1:4]
    sys.path.insert(0, HERE)
    from viewer_traces import make_traces
    with tempfile.TemporaryDirectory(prefix="dc-dfanalyzer-") as tmp:
        prepared = subprocess.run([sys.executable, PREPARE, os.path.join(tmp, "dfanalyzer")],
                                  capture_output=True, text=True, check=False)
        if prepared.returncode == 3:
            print(f"SKIP: {prepared.stderr.strip()}")
            sys.exit(77)
        if prepared.returncode != 0:
            sys.exit(f"FAIL: prepare-dfanalyzer.py: {prepared.stderr}")
        root = prepared.stdout.strip()
        traces = make_traces(tool, tcp_pair, stdio_app, tmp)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, HERE]))
        failed = False
        for mode, trace in traces.items():
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--check", trace, mode], env=env,
                                  cwd=tmp, check=False)
            failed |= done.returncode != 0
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
