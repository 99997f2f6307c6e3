"""The three functions of DFTracer's zindex_py that dfanalyzer calls, reading the zindex-form
index DataCrumbs writes beside each trace (src/sink/trace_index.h) the way zindex reads it:
a line's offset and length from LineOffsets, the access point holding it from AccessPoints,
and raw inflate from there. zindex_py is not packaged for Debian; this is the repository's own
stand-in for the dfanalyzer test. create_index refuses: with DataCrumbs' index beside the trace,
dfanalyzer must not need to build one (the test proves it skips its indexing pass).
"""

import os
import sqlite3
import zlib

inflated_bytes = 0  # text inflated by zquery in this process (for the test's own checks)


def _index_path(index_file):
    return index_file[len("file:"):] if index_file.startswith("file:") else index_file


def _open(filename, index_file):
    db = sqlite3.connect(f"file:{_index_path(index_file)}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM Metadata"))
    if meta.get("compressedSize") != str(os.path.getsize(filename)):
        raise RuntimeError(f"zindex_py: {filename} changed since its index was built")
    return db


def create_index(filename, index_file=None, regex=None, numeric=False, unique=False, debug=False, verbose=False):
    raise RuntimeError(f"zindex_py (DataCrumbs test stand-in): no index {_index_path(index_file)} beside "
                       f"{filename}; DataCrumbs writes one at the end of every run")


def get_max_line(filename, index_file=None, debug=False, verbose=False):
    with _open(filename, index_file) as db:
        return db.execute("SELECT MAX(line) FROM LineOffsets").fetchone()[0] or 0


def _member_text(f, compressed_offset, size):
    """The text of the member whose deflate data starts at compressed_offset (and no more)."""
    global inflated_bytes
    f.seek(compressed_offset)
    d = zlib.decompressobj(-zlib.MAX_WBITS)
    text = b""
    while len(text) < size and not d.eof:
        chunk = f.read(1 << 16)
        if not chunk:
            break
        text += d.decompress(chunk, size - len(text))
        while d.unconsumed_tail and len(text) < size:
            text += d.decompress(d.unconsumed_tail, size - len(text))
    inflated_bytes += len(text)
    return text


def zquery(filename, index_file=None, raw=None, debug=False, verbose=False):
    """The lines (without their newline) that the SQL `raw` selects by number."""
    out = []
    members = {}
    with _open(filename, index_file) as db, open(filename, "rb") as f:
        for (line,) in db.execute(raw).fetchall():
            row = db.execute(
                "SELECT offset, length, compressedOffset, uncompressedOffset, uncompressedEndOffset, bitOffset "
                "FROM LineOffsets, AccessPoints WHERE offset >= uncompressedOffset AND "
                "offset <= uncompressedEndOffset AND line = ? LIMIT 1", (line,)).fetchone()
            if row is None:
                continue
            offset, length, compressed, start, end, bit = row
            if bit != 0:
                raise RuntimeError("zindex_py: access points inside a deflate byte are not supported")
            if start not in members:
                members[start] = _member_text(f, compressed, end - start + 1)
            text = members[start]
            out.append(text[offset - start:offset - start + length - 1].decode("utf-8", "replace"))
    return out
