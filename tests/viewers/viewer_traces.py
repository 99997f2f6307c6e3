"""Traces of one mixed run, in trace and profile mode, for the viewer tests.

The run touches every layer a viewer draws: files written and read buffered, an fsync, direct
I/O, a loopback TCP exchange (a socket, and a forked server), a forked shell child, and stdio
calls that make system calls (user-space probes, so calls nest under calls). The tool runs as a
user would run it: `datacrumbs run` with its default probe config (kernel layers and stdio).
"""

import gzip
import json
import os
import shlex
import subprocess
import sys

WORKLOAD = r"""set -e
d=$1
dd if=/dev/urandom of=$d/a.bin bs=64k count=16 conv=fsync status=none
dd if=$d/a.bin of=/dev/null bs=4k status=none
cat $d/a.bin > $d/copy.bin
dd if=/dev/zero of=$d/direct.bin bs=1M count=4 oflag=direct status=none
dd if=$d/direct.bin of=/dev/null bs=256k iflag=direct status=none
( echo child > $d/child.txt; sync $d/child.txt ) &
wait
"$TCP_PAIR" 100000 > /dev/null
"$STDIO_APP" $d/stdio.txt 25
"""


def run(command, **kw):
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kw)
    if done.returncode != 0:
        sys.exit(f"FAIL: {shlex.join(command)} exited with {done.returncode}:\n{done.stderr[-4000:]}")
    return done


def make_traces(tool, tcp_pair, stdio_app, tmp):
    """Runs the workload under `datacrumbs run` twice; returns {"trace": path, "profile": path}."""
    if os.geteuid() != 0:
        sys.exit("FAIL: the viewer tests trace real runs: they need root")
    script = os.path.join(tmp, "workload.sh")
    with open(script, "w") as f:
        f.write(WORKLOAD)
    env = dict(os.environ, TCP_PAIR=tcp_pair, STDIO_APP=stdio_app)
    traces = {}
    for mode, extra in (("trace", []), ("profile", ["--mode", "profile", "--interval-ms", "50"])):
        data = os.path.join(tmp, mode + "-data")
        os.makedirs(data)
        path = os.path.join(tmp, mode + ".pfw.gz")
        run([tool, "run", "-o", path, "--summary", path + ".summary.json", *extra, "--", "bash", script, data],
            env=env)
        traces[mode] = path
    return traces


def trace_lines(path):
    """The trace's JSON objects, in file order (its "[" and "]" lines left out)."""
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("{"):
                out.append(json.loads(line))
    return out
