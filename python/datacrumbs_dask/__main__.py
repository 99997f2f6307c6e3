"""python3 -m datacrumbs_dask PATH... [--scheduler URL] [--workers N] [--json F] [--csv D] [--html F]"""

import argparse
import glob
import logging
import os
import shutil
import sys

from .inputs import expand_paths, split_indices
from .run import analyze_on_cluster


class _Parser(argparse.ArgumentParser):
    """A bad command line is one line naming the problem, and exit 2 (argparse prints its usage
    first; --help still shows it)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def _whole_number(low, high):
    def check(text):
        if not text.isdigit() or not text.isascii():
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number ({low} to {high})")
        if not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"'{text}' is out of range ({low} to {high})")
        return int(text)
    return check


def _output_file(path):
    """A file this tool creates (as analyze checks its own): not empty, not a directory, in a
    directory that exists."""
    parent = os.path.dirname(path)
    if not path:
        raise argparse.ArgumentTypeError("an empty path")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"'{path}' is a directory, not a file")
    if parent and not os.path.exists(parent):
        raise argparse.ArgumentTypeError(f"'{path}': directory '{parent}' does not exist")
    if parent and not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"'{path}': '{parent}' is not a directory")
    return path


def _output_directory(path):
    if not path:
        raise argparse.ArgumentTypeError("an empty path")
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"'{path}' exists and is not a directory")
    up = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(up):
        up = os.path.dirname(up)
    if not os.path.isdir(up):
        raise argparse.ArgumentTypeError(f"'{path}': '{up}' is not a directory")
    return path


def _input(path):
    """A trace, a directory of them or a glob (a glob matching nothing is the report's problem)."""
    if not path:
        raise argparse.ArgumentTypeError("an empty path")
    if not glob.has_magic(path) and not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"'{path}' does not exist")
    return path


def _executable(path):
    if not path:
        raise argparse.ArgumentTypeError("an empty path")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(f"'{path}' is not an executable file")
    return path


def _not_empty(text):
    if not text:
        raise argparse.ArgumentTypeError("an empty value")
    return text


def _parser():
    p = _Parser(
        prog="datacrumbs-dask",
        description="datacrumbs analyze over many traces on a Dask cluster: each worker analyzes "
                    "a subset (--partial), the partials are merged (--merge) into the same report.")
    p.add_argument("paths", nargs="+", metavar="PATH", type=_input,
                   help="trace files (.pfw, .pfw.gz), directories (searched recursively) or globs")
    p.add_argument("--scheduler", metavar="URL", type=_not_empty,
                   help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster")
    p.add_argument("--workers", type=_whole_number(1, 1024), metavar="N",
                   help="LocalCluster worker processes (default: 2, at most the cores)")
    p.add_argument("--parts", type=_whole_number(1, 1 << 20), metavar="N",
                   help="subsets of the traces, one task each (default: 2 per worker)")
    p.add_argument("--threads", type=_whole_number(1, 4096), metavar="N",
                   help="analyze threads per task (default: the cores of a worker)")
    p.add_argument("--json", metavar="FILE", type=_output_file, help="the report as JSON")
    p.add_argument("--csv", metavar="DIR", type=_output_directory, help="the report as CSV files")
    p.add_argument("--html", metavar="FILE", type=_output_file, help="the report as one HTML page")
    p.add_argument("--bin-ms", type=_whole_number(1, 1 << 40), metavar="N",
                   help="time-series bin width in milliseconds")
    p.add_argument("--clock-skew-us", type=_whole_number(0, 1 << 40), metavar="N",
                   help="move a host's timestamps onto NTP time when its recorded clock offset "
                        "exceeds N us (default: analyze's, 1000); applied by each worker")
    p.add_argument("--datacrumbs", metavar="BIN", type=_executable,
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
        except ValueError as e:  # not an address: distributed says why
            print(f"datacrumbs-dask: --scheduler: {e}", file=sys.stderr)
            return 2
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
