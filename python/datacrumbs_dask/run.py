"""The client side: map `analyze --partial` over subsets on the cluster, then merge."""

import os
import subprocess
import sys
import tempfile

from . import tasks
from .csv_parts import gather_event_tables, part_dir


def _send_tasks_by_value():
    # Workers of a remote cluster then need only the datacrumbs binary, not this package.
    try:
        import cloudpickle
        cloudpickle.register_pickle_by_value(tasks)
    except (ImportError, AttributeError, ValueError):
        pass


def analyze_on_cluster(client, binary, files, parts, threads, merge_args, cwd, csv_dir=None,
                       log=sys.stderr, partial_args=()):
    """Runs one task per part (indices into `files`) on `client`'s cluster
    (`analyze --partial ... partial_args`) and merges their partials with
    `binary analyze --merge ... merge_args` (its text report goes to stdout).
    Returns the exit status: the merge's, or 1 when no part gave a partial. Tasks run in `cwd`
    (the client's: paths are passed as the user spelled them, so problems name them as one
    analyze would). With csv_dir (absolute, on a filesystem the workers share), each task also
    writes its traces' per-event tables, gathered under one analyze's names."""
    _send_tasks_by_value()
    n = len(parts)
    subsets = [[files[i] for i in p] for p in parts]
    csv_dirs = [part_dir(csv_dir, i) if csv_dir else None for i in range(n)]
    futures = client.map(tasks.analyze_subset, [binary] * n, subsets, [threads] * n, [cwd] * n,
                         csv_dirs, [tuple(partial_args)] * n, pure=False)
    results = client.gather(futures)
    if csv_dir:
        try:
            gather_event_tables(csv_dir, files, parts)
        except (OSError, RuntimeError) as e:
            log.write(f"datacrumbs-dask: --csv {csv_dir}: {e}\n")
            return 1
    pids = {r["worker_pid"] for r in results if "worker_pid" in r}
    log.write(f"datacrumbs-dask: {len(results)} parts ran in {len(pids)} worker processes\n")
    with tempfile.TemporaryDirectory(prefix="datacrumbs-dask-") as tmp:
        partials = []
        for i, r in enumerate(results):
            # Problem lines go on; whether nothing at all could be read is the merge's to say.
            log.write("".join(line for line in r["stderr"].splitlines(keepends=True)
                              if not line.startswith("datacrumbs: analyze: nothing could be read")))
            # analyze writes its partial also when nothing in it could be read (exit 1): its
            # problems are part of the report.
            if not r["partial"]:
                log.write(f"datacrumbs-dask: part {i + 1} ({r['files']} traces) gave no partial "
                          f"(analyze exited with {r['returncode']})\n")
                continue
            path = os.path.join(tmp, f"part-{i:05d}.json.gz")
            with open(path, "wb") as f:
                f.write(r["partial"])
            partials.append(path)
        if not partials:
            log.write("datacrumbs-dask: no part could be read\n")
            return 1
        log.flush()
        sys.stdout.flush()
        done = subprocess.run([binary, "analyze", "--merge", *partials, *merge_args], check=False)
        return done.returncode
