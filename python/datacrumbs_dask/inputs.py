"""Which trace files a command line names, and how they are split into tasks."""

import glob
import os

TRACE_SUFFIXES = (".pfw", ".pfw.gz")


def _traces_under(directory):
    found = []
    for root, _dirs, files in os.walk(directory):
        found.extend(p for p in (os.path.join(root, f) for f in files)
                     if p.endswith(TRACE_SUFFIXES) and os.path.isfile(p))
    return sorted(found)


def expand_paths(paths):
    """The inputs `datacrumbs analyze PATH...` reads, in its order and spelled as it spells
    them: a directory gives its trace files (*.pfw, *.pfw.gz, searched recursively, sorted by
    path), a glob the shell left unexpanded its matches, a file itself. A path that gives
    nothing (missing, an empty directory, a glob matching nothing) is kept as it is, so the
    analyze that gets it reports it exactly as a single analyze would."""
    inputs = []
    for path in paths:
        if os.path.isdir(path):
            inputs.extend(_traces_under(path) or [path])
        elif os.path.exists(path):
            inputs.append(path)
        elif glob.has_magic(path):
            inputs.extend(sorted(glob.glob(path)) or [path])
        else:
            inputs.append(path)
    return inputs


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def split_indices(files, parts, size_of=_size):
    """Splits the indices of files into at most `parts` non-empty subsets of about equal bytes
    (largest file first into the lightest subset), each subset in the files' original order."""
    parts = max(1, min(parts, len(files)))
    loads = [[0, []] for _ in range(parts)]
    for i in sorted(range(len(files)), key=lambda i: (-size_of(files[i]), i)):
        lightest = min(range(parts), key=lambda p: (loads[p][0], p))
        loads[lightest][0] += size_of(files[i])
        loads[lightest][1].append(i)
    return [sorted(indices) for _, indices in loads if indices]


def split_balanced(files, parts, size_of=_size):
    """split_indices, as the files themselves."""
    return [[files[i] for i in subset] for subset in split_indices(files, parts, size_of)]
