// A file written as consecutive complete gzip members. Each flush compresses what is buffered
// into one member and writes it whole, so a reader (zcat, or a parallel decoder) can use every
// member written before a crash, and no member is ever half-formed by our own doing. Members
// are independent, so with worker threads they are compressed in parallel (deflate is most of
// the writer's time) and still written in order.
#pragma once

#include <fcntl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace dc {

class member_compressor;  // sink/member_compressor.h

class trace_index_builder;  // sink/trace_index.h

// Where one member lies in the file and which lines it holds: what a reader needs to fetch a
// line without inflating the members before it (sink/trace_index.h).
struct gzip_member_span {
  uint64_t offset = 0;           // of its gzip header in the file
  uint64_t compressed_size = 0;  // header to trailer
  uint64_t text_offset = 0;      // of its first byte in the uncompressed text
  uint64_t text_size = 0;        // uncompressed
  uint64_t first_line = 0;       // 1-based, in the whole text
  uint64_t line_count = 0;       // it ends at a line end: every line is whole in one member
};

// The lines of a member's text, each ending at its newline (a member holds whole lines): their
// number, and each one's length with its newline appended to `lengths` when given. memchr per
// line: glibc's is vectorized, a byte loop (std::count at -O2) cost 5 % of the tracer's time on a
// syscall storm.
uint64_t scan_lines(std::string_view text, std::vector<uint32_t>* lengths);

// What the caller put in a member (its events, say), summed over the members written whole: so
// that what reached the file is known exactly, even when members are written by workers.
struct member_tally {
  uint64_t events = 0;
  uint64_t counters = 0;
};

class gzip_member_writer {
 public:
  // igzip's level 1 (sink/member_compressor.h): on the recorded syscall storm of
  // docs/benchmarks.md level 0 is as fast for a file 30 % larger, level 2 as fast and 0.1 %
  // smaller, level 3 5.7x slower for 2.6 % smaller.
  static constexpr int default_level = 1;
  // Workers for a run's trace: one per four CPUs, one at least and four at most, so that
  // compression overlaps formatting without taking the traced program's CPUs.
  static int default_workers();

  // Creates (or truncates) path without following a symlink at its last component. Refuses
  // what is not a regular file (a device, a directory) and a file with other hard links (it
  // would truncate a file someone linked there). With workers > 0, members are compressed and written by that
  // many threads (flush_member only hands one over); with 0, flush_member compresses and writes it before it
  // returns.
  // With `in` (a directory's descriptor) and `name`, the file is `name` in that directory, so
  // nothing on the way to it is looked up again; `path` only names it in messages.
  static result<gzip_member_writer> create(const std::string& path, int level = default_level,
                                           int workers = 0, int in = AT_FDCWD, const char* name = nullptr);
  gzip_member_writer(gzip_member_writer&&) noexcept;
  gzip_member_writer& operator=(gzip_member_writer&&) noexcept;
  ~gzip_member_writer();

  std::string& buffer() { return pending_; }
  size_t buffered() const { return pending_.size(); }
  // Members made so far (with workers: handed over; on disk once close() returned).
  size_t members_written() const { return members_; }
  // Every member written, in file order (with workers: complete after close()).
  const std::vector<gzip_member_span>& members() const { return spans_; }
  const std::string& path() const { return path_; }
  // Gives the open file to uid:gid (fchown: the file this writer holds, whatever its name is now).
  [[nodiscard]] bool give_to(uint32_t uid, uint32_t gid) const;
  // Builds the trace's line index (sink/trace_index.h) while the members are written, and
  // writes it to index_path when the file is closed whole. Asked for before the first member.
  // Its trouble never fails the trace: index_status() tells it after close().
  // With `dir_fd`: `leaf` in that directory, reached through the descriptor, not by path.
  void index_to(const std::string& index_path, int dir_fd = -1, const std::string& leaf = {});
  const result<>& index_status() const { return index_status_; }

  // Compresses the buffer into one member and writes it; a no-op when nothing is buffered.
  // With workers, an error of an earlier member is returned by a later call or close(). A
  // member that cannot be written whole (a full disk, an I/O error) is cut off again, so the
  // file stays a run of complete members; from then on nothing is written and every flush fails.
  result<> flush_member(member_tally tally = {});
  // Waits until every member handed over is in the file (with workers; else at once); returns
  // the first error.
  result<> drain();
  // Flushes and closes the file.
  result<> close(member_tally tally = {});
  // After a failure: drops the buffer and waits for the workers, so that written() is final.
  void abandon();
  // The tallies of the members in the file (with workers: final after close() or abandon()).
  member_tally written() const { return written_; }
  // The file's name was removed (its directory deleted, or it was unlinked) while it was open:
  // what is written goes nowhere anyone can read.
  bool removed() const;
  // The open file's device and inode (0, 0 once closed): to tell whether a path still names it.
  std::pair<uint64_t, uint64_t> identity() const;

 private:
  struct workers;  // the threads and the members they hold (gzip_members.cpp)

  gzip_member_writer(int fd, std::string path, std::unique_ptr<member_compressor> compressor);
  void stop_workers();
  void drop_index(const std::string& why);

  int fd_ = -1;
  std::string path_;
  std::unique_ptr<member_compressor> compressor_;
  std::string pending_;
  std::string compressed_;
  size_t members_ = 0;
  std::vector<gzip_member_span> spans_;
  std::unique_ptr<trace_index_builder> index_;
  result<> index_status_;
  std::unique_ptr<workers> workers_;
  member_tally written_;
  bool failed_ = false;
};

}  // namespace dc
