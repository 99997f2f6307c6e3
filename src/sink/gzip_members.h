// A file written as consecutive complete gzip members. Each flush compresses what is buffered
// into one member and writes it whole, so a reader (zcat, or a parallel decoder) can use every
// member written before a crash, and no member is ever half-formed by our own doing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

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
  // Creates (or truncates) path without following a symlink at its last component. Refuses
  // what is not a regular file (a device, a directory) and a file with other hard links (it
  // would truncate a file someone linked there).
  static result<gzip_member_writer> create(const std::string& path, int level = 4);
  gzip_member_writer(gzip_member_writer&&) noexcept;
  gzip_member_writer& operator=(gzip_member_writer&&) noexcept;
  ~gzip_member_writer();

  std::string& buffer() { return pending_; }
  size_t buffered() const { return pending_.size(); }
  size_t members_written() const { return members_; }
  // Every member written so far, in file order.
  const std::vector<gzip_member_span>& members() const { return spans_; }
  const std::string& path() const { return path_; }

  // Compresses the buffer into one member and writes it; a no-op when nothing is buffered. A
  // member that cannot be written whole (a full disk, an I/O error) is cut off again, so the file
  // stays a run of complete members; the buffer is dropped, and every later flush fails.
  result<> flush_member();
  // The file's name was removed (its directory deleted, or it was unlinked) while it was open:
  // what is written goes nowhere anyone can read.
  bool removed() const;
  // The open file's device and inode (0, 0 once closed): to tell whether a path still names it.
  std::pair<uint64_t, uint64_t> identity() const;
  // Flushes and closes the file.
  result<> close();

 private:
  gzip_member_writer(int fd, std::string path, libdeflate_compressor* compressor);

  int fd_ = -1;
  std::string path_;
  libdeflate_compressor* compressor_ = nullptr;
  std::string pending_;
  std::string compressed_;
  size_t members_ = 0;
  std::vector<gzip_member_span> spans_;
  uint64_t complete_bytes_ = 0;  // the file's size up to the end of its last complete member
  bool failed_ = false;
};

}  // namespace dc
