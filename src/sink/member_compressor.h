// One gzip member compressed from a text, with Intel's ISA-L (igzip): on the recorded syscall
// storm of docs/benchmarks.md its level 1 compresses 3.1x as fast as libdeflate's level 1
// (2.26 GB/s against 0.72 GB/s of trace text on one core) for a file 3 % larger, and deflate
// was the largest part of the writer's CPU time. The output is a standard gzip member (header,
// deflate, CRC-32 and size trailer) that zcat, libdeflate and zlib read.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace dc {

// Bytes of the gzip header at the start of a member (RFC 1952), 0 if it is not one.
size_t gzip_header_size(std::string_view member);

class member_compressor {
 public:
  static constexpr int lowest_level = 0, highest_level = 3;  // igzip's levels
  // Fails for a level outside lowest_level..highest_level.
  static result<member_compressor> create(int level);
  member_compressor(member_compressor&&) noexcept;
  member_compressor& operator=(member_compressor&&) noexcept;
  ~member_compressor();

  // Compresses text into one whole gzip member at the start of out (resized to fit); returns
  // the member's size.
  size_t compress(std::string_view text, std::string& out);

 private:
  struct state;
  explicit member_compressor(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
};

}  // namespace dc
