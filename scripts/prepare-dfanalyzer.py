#!/usr/bin/python3
"""Extracts LLNL's dfanalyzer (MIT; vendored as a tarball beside the repository, never in it)
into DEST and patches that copy to run on Debian 12's packages: prints DEST/dfanalyzer-<rev>,
the directory to put on PYTHONPATH (with a `zindex_py` module: tests/viewers/zindex_py.py).

The patches (/work/shared/vendor/dfanalyzer-notes.md): pyarrow is not packaged, so its import
goes and its Arrow dtypes become pandas' own ("string", UInt64/UInt16/UInt8), with float64 for
the time and size columns of io_columns() (nullable UInt64 there breaks Dask's meta inference
in summary()). Each patch must apply: a changed dfanalyzer fails here, not silently later.

usage: prepare-dfanalyzer.py DEST
  tarball: $DATACRUMBS_DFANALYZER_TARBALL, else ../shared/vendor/dfanalyzer-e8dcdf1.tar.gz next
  to the repository, else /work/shared/vendor/dfanalyzer-e8dcdf1.tar.gz.
  Exits 3 (printing why) when there is no tarball.
"""

import os
import re
import sys
import tarfile

NAME = "dfanalyzer-e8dcdf1"
HERE = os.path.dirname(os.path.abspath(__file__))

ARROW_DTYPES = {
    '"string[pyarrow]"': '"string"',
    '"uint64[pyarrow]"': '"UInt64"',
    '"uint16[pyarrow]"': '"UInt16"',
    '"uint8[pyarrow]"': '"UInt8"',
    "'uint64[pyarrow]'": "'UInt64'",
    "'uint16[pyarrow]'": "'UInt16'",
}


def find_tarball():
    candidates = [os.environ.get("DATACRUMBS_DFANALYZER_TARBALL", ""),
                  os.path.join(HERE, "..", "..", "shared", "vendor", NAME + ".tar.gz"),
                  os.path.join("/work/shared/vendor", NAME + ".tar.gz")]
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    return None


def replace(text, old, new, path, count=None):
    n = text.count(old)
    if n == 0 or (count is not None and n != count):
        sys.exit(f"prepare-dfanalyzer: {path}: expected {count or 'some'} of {old!r}, found {n}")
    return text.replace(old, new)


def patch_main(path):
    with open(path) as f:
        text = f.read()
    text = replace(text, "import pyarrow as pa\n", "", path, 1)
    text = replace(text, '    logging.debug(f"pa version {pa.__version__}")\n', "", path, 1)
    # io_columns(): time and size columns as float64.
    body = re.search(r"def io_columns\(\):.*?\n    }\n", text, re.S)
    if not body:
        sys.exit(f"prepare-dfanalyzer: {path}: io_columns() not found")
    columns = body.group(0)
    columns = replace(columns, '"uint64[pyarrow]"', '"float64"', path, 5)
    text = text.replace(body.group(0), columns)
    for old, new in ARROW_DTYPES.items():
        text = text.replace(old, new)
    if "pyarrow" in text:
        sys.exit(f"prepare-dfanalyzer: {path}: an Arrow dtype is left")
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: prepare-dfanalyzer.py DEST")
    dest = sys.argv[1]
    tarball = find_tarball()
    if not tarball:
        print(f"prepare-dfanalyzer: no {NAME}.tar.gz (set DATACRUMBS_DFANALYZER_TARBALL, or put it in "
              f"../shared/vendor next to the repository or /work/shared/vendor)", file=sys.stderr)
        sys.exit(3)
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(tarball) as t:
        t.extractall(dest)
    root = os.path.join(dest, NAME)
    patch_main(os.path.join(root, "dfanalyzer", "main.py"))
    print(root)


if __name__ == "__main__":
    main()
