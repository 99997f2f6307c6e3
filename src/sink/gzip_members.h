// A file written as consecutive complete gzip members. Each flush compresses what is buffered
// into one member and writes it whole, so a reader (zcat, or a parallel decoder) can use every
// member written before a crash, and no member is ever half-formed by our own doing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

struct libdeflate_compressor;

namespace dc {

class gzip_member_writer {
 public:
  // Creates (or truncates) path without following a symlink at its last component.
  static result<gzip_member_writer> create(const std::string& path, int level = 4);
  gzip_member_writer(gzip_member_writer&&) noexcept;
  gzip_member_writer& operator=(gzip_member_writer&&) noexcept;
  ~gzip_member_writer();

  std::string& buffer() { return pending_; }
  size_t buffered() const { return pending_.size(); }
  size_t members_written() const { return members_; }

  // Compresses the buffer into one member and writes it; a no-op when nothing is buffered.
  result<> flush_member();
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
};

}  // namespace dc
