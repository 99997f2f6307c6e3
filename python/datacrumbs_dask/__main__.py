"""python3 -m datacrumbs_dask PATH... [--scheduler URL] [--workers N] [--json F] [--csv D] [--html F]"""

import argparse
import logging
import os
import shutil
import sys

from .inputs import expand_paths, split_indices
from .run import analyze_on_cluster


def _parser():
    p = argparse.ArgumentParser(
        prog="datacrumbs-dask",
        description="datacrumbs analyze over many traces on a Dask cluster: each worker analyzes "
                    "a subset (--partial), the partials are merged (--merge) into the same report.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="trace files (.pfw, .pfw.gz), directories (searched recursively) or globs")
    p.add_argument("--scheduler", metavar="URL",
                   help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster")
    p.add_argument("--workers", type=int, metavar="N",
                   help="LocalCluster worker processes (default: 2, at most the cores)")
    p.add_argument("--parts", type=int, metavar="N",
                   help="subsets of the traces, one task each (default: 2 per worker)")
    p.add_argument("--threads", type=int, metavar="N",
                   help="analyze threads per task (default: the cores of a worker)")
    p.add_argument("--json", metavar="FILE", help="the report as JSON")
    p.add_argument("--csv", metavar="DIR", help="the report as CSV files")
    p.add_argument("--html", metavar="FILE", help="the report as one HTML page")
    p.add_argument("--bin-ms", type=int, metavar="N", help="time-series bin width in milliseconds")
    p.add_argument("--clock-skew-us", type=int, metavar="N",
                   help="move a host's timestamps onto NTP time when its recorded clock offset "
                        "exceeds N us (default: analyze's, 1000); applied by each worker")
    p.add_argument("--datacrumbs", metavar="BIN",
                   help="the datacrumbs binary, at the same path on every worker "
                        "(default: $DATACRUMBS_BIN, else datacrumbs on PATH)")
    return p


def _binary(given):
    """The datacrumbs binary (absolute), or None when there is none."""
    candidate = given or os.environ.get("DATACRUMBS_BIN") or shutil.which("datacrumbs")
    if not candidate or not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
        print(f"datacrumbs-dask: datacrumbs binary not found ({candidate or 'not on PATH'}); "
              "give --datacrumbs BIN", file=sys.stderr)
        return None
    return os.path.abspath(candidate)


def _merge_args(args):
    out = []
    for flag, value in (("--json", args.json), ("--csv", args.csv), ("--html", args.html),
                        ("--bin-ms", args.bin_ms)):
        if value is not None:
            out += [flag, os.path.abspath(value) if isinstance(value, str) else str(value)]
    return out


def main(argv=None):
    args = _parser().parse_args(argv)
    for name in ("workers", "parts", "threads", "bin_ms"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            print(f"datacrumbs-dask: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    if args.clock_skew_us is not None and args.clock_skew_us < 0:
        print("datacrumbs-dask: --clock-skew-us must be at least 0", file=sys.stderr)
        return 2
    if args.scheduler and args.workers:
        print("datacrumbs-dask: --workers sizes a LocalCluster; not with --scheduler", file=sys.stderr)
        return 2
    binary = _binary(args.datacrumbs)
    if binary is None:
        return 1
    files = expand_paths(args.paths)

    from distributed import Client, LocalCluster

    cores = os.cpu_count() or 1
    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout="30s")
        except (OSError, TimeoutError) as e:
            print(f"datacrumbs-dask: cannot reach scheduler {args.scheduler}: {e}", file=sys.stderr)
            return 1
        cluster = None
        workers = max(1, len(client.scheduler_info().get("workers", {})))
    else:
        workers = args.workers or min(2, cores)
        # Process workers: Debian's distributed 2022.12 fails with processes=False.
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    threads = args.threads or max(1, cores // workers)
    parts = split_indices(files, args.parts or 2 * workers)
    print(f"datacrumbs-dask: {len(files)} inputs in {len(parts)} parts on {workers} workers "
          f"({args.scheduler or 'LocalCluster'})", file=sys.stderr)
    csv_dir = os.path.abspath(args.csv) if args.csv else None
    if csv_dir:
        os.makedirs(csv_dir, exist_ok=True)
    try:
        partial_args = [] if args.clock_skew_us is None else ["--clock-skew-us", str(args.clock_skew_us)]
        return analyze_on_cluster(client, binary, files, parts, threads, _merge_args(args), os.getcwd(),
                                  csv_dir, partial_args=partial_args)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
