// The line index written beside a trace: TRACE.pfw.gz.zindex, the SQLite file zindex (and
// DFTracer's zindex_py) builds, so dfanalyzer uses it instead of inflating the whole trace to
// build its own, and any reader fetches line N by inflating only the member that holds it.
// Tables as zindex makes them:
//   AccessPoints(uncompressedOffset, uncompressedEndOffset, compressedOffset, bitOffset, window):
//     one per gzip member: where its deflate data starts (after its header), bitOffset 0, and a
//     zlib-compressed 32 KiB window (zeros: a member refers to nothing before it);
//   LineOffsets(line, offset, length): every line, 1-based, its offset in the uncompressed text
//     and its length with its newline;
//   Metadata(key, value): version 1, compressedFile, compressedSize, compressedModTime, sparse 0;
//   Indexes(name, creationString, isNumeric): empty (no key index).
// A run's writer builds it while it writes (gzip_member_writer::index_to): each member's lines
// are known when it is compressed, and the rows go into the index on a thread of the index's own
// as the members reach the file, so the end of a run only commits it. write_trace_index builds
// the same file by inflating a closed trace's members again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "sink/gzip_members.h"

namespace dc {

// How the index's thread keeps pace with the writer, in members waiting for their rows. It runs at
// nice 19 (the rows can wait for an idle CPU; the traced program and the writer cannot) until
// `catch_up_from` wait, then at the tool's own niceness until fewer than `relaxed_below` do: where
// the traced program keeps every CPU busy a nice-19 thread gets almost none, and the writer, which
// waits once `most_waiting` are queued, would stop draining the event ring.
struct trace_index_pacing {
  size_t most_waiting = 512;  // ~64 KiB of line lengths each: ~32 MiB for ~2 GiB of trace text
  size_t catch_up_from = 128;
  size_t relaxed_below = 16;
};

class trace_index_builder {
 public:
  // Creates the index's temporary file beside index_path (a fresh name: never a planted link).
  // With `dir_fd`, the index is `leaf` in that directory (index_path only names it in messages).
  static result<std::unique_ptr<trace_index_builder>> create(const std::string& index_path, int dir_fd = -1,
                                                             const std::string& leaf = {},
                                                             trace_index_pacing pacing = {});
  // Unfinished: the temporary file is removed, nothing is left.
  ~trace_index_builder();

  // One member, in file order: its span, its compressed bytes (for its gzip header's size) and
  // the length of each of its lines, newline included. Waits while many members are not yet in
  // the index, so a slow disk bounds the memory held. Trouble is kept for finish().
  void add_member(const gzip_member_span& member, std::span<const char> compressed,
                  std::vector<uint32_t> line_lengths);
  // Once the trace is closed to writing (trace_fd still open on it): waits for the rows, adds
  // the metadata (the trace's size and time; the index gets its owner and mode), commits and
  // renames the index into place. A trace whose name was removed gets no index.
  [[nodiscard]] result<> finish(const std::string& trace_path, int trace_fd);
  // The index thread's niceness now; nullopt before it has started.
  std::optional<int> thread_niceness() const;

  struct state;  // sink/trace_index.cpp

 private:
  explicit trace_index_builder(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
};

// Builds index_path for the closed trace at trace_path made of `members` by inflating each
// member again (for a trace written without an index, and to check the writer's own).
[[nodiscard]] result<> write_trace_index(const std::string& trace_path,
                                         std::span<const gzip_member_span> members,
                                         const std::string& index_path);

}  // namespace dc
