// A file written as consecutive complete gzip members. Each flush compresses what is buffered
// into one member and writes it whole, so a reader (zcat, or a parallel decoder) can use every
// member written before a crash, and no member is ever half-formed by our own doing. Members
// are independent, so with worker threads they are compressed in parallel (deflate is most of
// the writer's time) and still written in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct libdeflate_compressor;

namespace dc {

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

class gzip_member_writer {
 public:
  // libdeflate level 1: on a recorded syscall storm (docs/benchmarks.md) it takes 37 % less CPU
  // than level 4 for a file 12 % larger (19.0 MB against 16.9 MB for 269 MB of trace text).
  static constexpr int default_level = 1;
  // Workers for a run's trace: one per four CPUs, one at least and four at most, so that
  // compression overlaps formatting without taking the traced program's CPUs.
  static int default_workers();

  // Creates (or truncates) path without following a symlink at its last component. With
  // workers > 0, members are compressed and written by that many threads (flush_member only
  // hands one over); with 0, flush_member compresses and writes it before it returns.
  static result<gzip_member_writer> create(const std::string& path, int level = default_level,
                                           int workers = 0);
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

  // Compresses the buffer into one member and writes it; a no-op when nothing is buffered.
  // With workers, an error of an earlier member is returned by a later call or close().
  result<> flush_member();
  // Flushes and closes the file.
  result<> close();

 private:
  struct workers;  // the threads and the members they hold (gzip_members.cpp)

  gzip_member_writer(int fd, std::string path, libdeflate_compressor* compressor);
  void stop_workers();

  int fd_ = -1;
  std::string path_;
  libdeflate_compressor* compressor_ = nullptr;
  std::string pending_;
  std::string compressed_;
  size_t members_ = 0;
  std::vector<gzip_member_span> spans_;
  std::unique_ptr<workers> workers_;
};

}  // namespace dc
