// Cuts one trace file into chunks for the workers, reading it a block at a time: the gzip
// members of a .pfw.gz (found by their header; a lookalike inside compressed data is caught
// when the piece fails to inflate alone), or blocks of a plain .pfw.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace dc::analyze {

struct chunk_piece {
  enum class kind : uint8_t {
    member,       // bytes: one gzip member, if the candidate boundaries are true
    text,         // bytes: plain text
    stream_only,  // a member too large to inflate whole: the applier streams it from start
  };
  kind what = kind::text;
  uint64_t start = 0;  // byte offsets in the file
  uint64_t end = 0;
  std::string bytes;
};

class chunk_source {
 public:
  static constexpr size_t block_bytes = 4 << 20;
  static constexpr size_t max_member_bytes = 64 << 20;

  static dc::result<chunk_source> open(const std::string& path);
  chunk_source(chunk_source&&) noexcept;
  chunk_source& operator=(chunk_source&&) = delete;
  ~chunk_source();

  bool gzip() const { return gzip_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

  // The next piece; false at the end of the file.
  bool next(chunk_piece& out);
  // Continue at `offset` (the applier streamed a member up to there); a no-op when behind.
  void resume_at(uint64_t offset);

 private:
  chunk_source(int fd, uint64_t size, bool gzip) : fd_(fd), size_(size), gzip_(gzip) {}
  bool fill();  // reads one more block into buf_; false at EOF
  size_t find_candidate(size_t from) const;

  int fd_ = -1;
  uint64_t size_ = 0;
  bool gzip_ = false;
  // buf_ from head_ on holds bytes [buf_at_, read_to_) of the file; what was cut off before head_
  // is dropped at the next read (moving the rest once, not at every piece).
  std::string buf_;
  size_t head_ = 0;
  size_t window() const { return buf_.size() - head_; }
  uint64_t buf_at_ = 0;
  uint64_t piece_start_ = 0;  // where the piece being cut starts (== buf_at_ unless skipping)
  uint64_t read_to_ = 0;      // == buf_at_ + window()
  size_t scanned_ = 1;        // buf_ offsets before this were searched for a member header
  bool skipping_ = false;     // inside a stream_only member: looking for the next header
};

}  // namespace dc::analyze
