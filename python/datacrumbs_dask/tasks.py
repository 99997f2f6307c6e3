"""What runs on a Dask worker: `datacrumbs analyze --partial` over one subset of traces.

This module is sent to the workers by value (cloudpickle), so a worker needs only the
`datacrumbs` binary at the same path, not this package.
"""

import os
import subprocess
import tempfile


def analyze_subset(binary, files, threads, cwd, csv_dir=None, options=()):
    """Runs `binary analyze FILES --partial P --threads N [--csv CSV_DIR] OPTIONS` here, in
    directory `cwd` (OPTIONS: what applies while traces are read, e.g. --clock-skew-us), and
    returns {"returncode", "partial" (the gzipped partial's bytes, b"" on failure), "stderr",
    "files"}. With csv_dir, the traces' per-event tables are written there (a directory of this
    part's own on the shared filesystem; the client renames them)."""
    with tempfile.TemporaryDirectory(prefix="datacrumbs-dask-") as tmp:
        partial = os.path.join(tmp, "partial.json.gz")
        command = [binary, "analyze", "--partial", partial]
        if threads:
            command += ["--threads", str(threads)]
        if csv_dir:
            command += ["--csv", csv_dir]
        command += list(options)
        command += ["--", *files]  # a path may start with "-"
        try:
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  cwd=cwd, check=False)
        except OSError as e:
            return {"returncode": 127, "partial": b"", "files": len(files),
                    "worker_pid": os.getpid(),
                    "stderr": f"cannot run {binary} in {cwd}: {e.strerror}\n"}
        data = b""
        if os.path.exists(partial):
            with open(partial, "rb") as f:
                data = f.read()
        return {"returncode": done.returncode, "partial": data, "files": len(files),
                "worker_pid": os.getpid(), "stderr": done.stderr.decode("utf-8", "replace")}
