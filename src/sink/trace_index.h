// The line index written beside a trace at the end of a run: TRACE.pfw.gz.zindex, the SQLite
// file zindex (and DFTracer's zindex_py) builds, so dfanalyzer uses it instead of inflating the
// whole trace to build its own, and any reader fetches line N by inflating only the member that
// holds it. Tables as zindex makes them:
//   AccessPoints(uncompressedOffset, uncompressedEndOffset, compressedOffset, bitOffset, window):
//     one per gzip member: where its deflate data starts (after its header), bitOffset 0, and a
//     zlib-compressed 32 KiB window (zeros: a member refers to nothing before it);
//   LineOffsets(line, offset, length): every line, 1-based, its offset in the uncompressed text
//     and its length with its newline;
//   Metadata(key, value): version 1, compressedFile, compressedSize, compressedModTime, sparse 0;
//   Indexes(name, creationString, isNumeric): empty (no key index).
// Built from the members' spans alone (each member is inflated once to find its lines), so it
// does not care how the members were compressed.
#pragma once

#include <span>
#include <string>

#include "core/result.h"
#include "sink/gzip_members.h"

namespace dc {

// Writes index_path (through a temporary file renamed into place: never half-written) for the
// closed trace at trace_path made of `members`.
[[nodiscard]] result<> write_trace_index(const std::string& trace_path,
                                         std::span<const gzip_member_span> members,
                                         const std::string& index_path);

}  // namespace dc
