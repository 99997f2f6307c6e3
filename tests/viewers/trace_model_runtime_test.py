#!/usr/bin/python3
"""Traces of a real mixed run, read by @tracerbench/trace-model and Perfetto's importer rules.

Traces the workload of viewer_traces.py in trace and profile mode (root: it loads BPF) and runs
trace_model_test.js on both traces (Node, with the pinned trace-model that
scripts/install-deps.sh installs into tests/viewers/node_modules with `npm ci`).
Usage: trace_model_runtime_test.py DATACRUMBS_BIN TCP_PAIR_BIN STDIO_APP_BIN
"""

import os
import subprocess
import sys
import tempfile

from viewer_traces import make_traces

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    tool, tcp_pair, stdio_app = sys.argv[1:4]
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@tracerbench", "trace-model")):
        sys.exit(f"FAIL: @tracerbench/trace-model is not installed in {HERE}/node_modules: "
                 "run scripts/install-deps.sh (npm ci there)")
    with tempfile.TemporaryDirectory(prefix="dc-viewers-") as tmp:
        traces = make_traces(tool, tcp_pair, stdio_app, tmp)
        done = subprocess.run(["node", os.path.join(HERE, "trace_model_test.js"), traces["trace"], traces["profile"]],
                              cwd=HERE, check=False)
        sys.exit(done.returncode)


if __name__ == "__main__":
    main()
