"""--csv through Dask: the per-event tables each part wrote, under the names one analyze gives.

`datacrumbs analyze --csv DIR` writes one table per event type and trace, DIR/TYPE/TYPE_<stem>.csv,
as the records stream by; a merge of partials has no records. So each task writes its traces'
tables into a directory of its own inside DIR (same filesystem), and the client moves them to
the names a single analyze over all the inputs would give: the trace file's name without
.pfw.gz/.pfw/.gz, with -2, -3, ... when inputs share it, in input order, counting only the
inputs that could be opened (src/analyze/csv_events.cpp)."""

import os
import shutil

PART_PREFIX = ".datacrumbs-dask-part-"


def stem_of(path):
    base = os.path.basename(path)
    for ext in (".pfw.gz", ".pfw", ".gz"):
        if len(base) > len(ext) and base.endswith(ext):
            return base[: -len(ext)]
    return base


def _readable(path):
    return os.path.isfile(path) and os.access(path, os.R_OK)


def csv_stems(files, readable=_readable):
    """The stem analyze names each input's tables after (None: not opened, no tables)."""
    used, out = set(), []
    for f in files:
        if not readable(f):
            out.append(None)
            continue
        stem, n = stem_of(f), 2
        unique = stem
        while unique in used:
            unique, n = f"{stem}-{n}", n + 1
        used.add(unique)
        out.append(unique)
    return out


def part_dir(csv_dir, index):
    return os.path.join(csv_dir, f"{PART_PREFIX}{index:05d}")


def gather_event_tables(csv_dir, files, parts, readable=_readable):
    """Moves each part's per-event tables (part_dir(csv_dir, i)/TYPE/TYPE_<local stem>.csv,
    part i reading files[j] for j in parts[i], in that order) to csv_dir/TYPE/TYPE_<stem>.csv
    with the stems of one analyze over all of `files`, and removes the part directories. A
    part's report tables and snapshots/ are its own subset's: the merge writes the run's."""
    global_stems = csv_stems(files, readable)
    for i, indices in enumerate(parts):
        local = csv_stems([files[j] for j in indices], readable)
        renames = {l: global_stems[j] for l, j in zip(local, indices) if l is not None}
        src = part_dir(csv_dir, i)
        if not os.path.isdir(src):
            continue
        for kind in sorted(os.listdir(src)):
            kind_dir = os.path.join(src, kind)
            if kind == "snapshots" or not os.path.isdir(kind_dir):
                continue
            os.makedirs(os.path.join(csv_dir, kind), exist_ok=True)
            prefix = kind + "_"
            for name in os.listdir(kind_dir):
                ok = name.startswith(prefix) and name.endswith(".csv")
                stem = name[len(prefix):-len(".csv")] if ok else None
                if stem not in renames:
                    raise RuntimeError(f"part {i + 1} wrote {kind}/{name}, which names none of its traces")
                os.replace(os.path.join(kind_dir, name),
                           os.path.join(csv_dir, kind, f"{prefix}{renames[stem]}.csv"))
        shutil.rmtree(src)
