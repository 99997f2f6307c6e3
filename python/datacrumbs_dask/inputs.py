"""Which trace files a command line names, and how they are split into tasks."""

import glob
import os

TRACE_SUFFIXES = (".pfw", ".pfw.gz")


class InputError(Exception):
    """A path that names no trace (one line for the user)."""


def _traces_under(directory):
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(TRACE_SUFFIXES))
    return found


def expand_paths(paths):
    """Trace files named by PATHs: files as given, directories searched recursively for
    *.pfw and *.pfw.gz (as `datacrumbs analyze` does), globs the shell left unexpanded.
    Absolute paths, each once, in order. Raises InputError naming the first bad path."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = _traces_under(path)
            if not found:
                raise InputError(f"{path}: no traces (*.pfw, *.pfw.gz) found")
        elif os.path.exists(path):
            found = [path]
        elif glob.has_magic(path):
            found = []
            for match in sorted(glob.glob(path, recursive=True)):
                found.extend(_traces_under(match) if os.path.isdir(match) else [match])
            if not found:
                raise InputError(f"{path}: matches no trace")
        else:
            raise InputError(f"{path}: no such file or directory")
        files.extend(os.path.abspath(f) for f in found)
    seen = set()
    return [f for f in files if not (f in seen or seen.add(f))]


def split_balanced(files, parts, size_of=os.path.getsize):
    """Splits files into at most `parts` non-empty subsets of about equal bytes (largest file
    first into the lightest subset), each subset in the files' original order."""
    parts = max(1, min(parts, len(files)))
    order = {f: i for i, f in enumerate(files)}
    loads = [[0, []] for _ in range(parts)]
    for f in sorted(files, key=lambda f: (-size_of(f), order[f])):
        lightest = min(range(parts), key=lambda i: (loads[i][0], i))
        loads[lightest][0] += size_of(f)
        loads[lightest][1].append(f)
    return [sorted(subset, key=order.get) for _, subset in loads if subset]
