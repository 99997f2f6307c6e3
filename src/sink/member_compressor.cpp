#include "sink/member_compressor.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <vector>

namespace dc {

struct member_compressor::state {
  int level = 1;
  std::vector<unsigned char> level_buffer;  // igzip's hash tables for levels above 0
  isal_zstream stream{};
};

namespace {

size_t level_buffer_size(int level)
{
  switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
  }
}

}  // namespace

size_t gzip_header_size(std::string_view member)
{
  const auto* p = reinterpret_cast<const unsigned char*>(member.data());
  size_t n = member.size();
  if (n < 10 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8)
    return 0;
  uint8_t flags = p[3];
  size_t at = 10;
  if (flags & 4) {  // FEXTRA
    if (at + 2 > n)
      return 0;
    at += 2 + (p[at] | (p[at + 1] << 8));
  }
  for (uint8_t bit : {8, 16})  // FNAME, FCOMMENT: NUL-terminated
    if (flags & bit) {
      while (at < n && p[at] != 0) ++at;
      ++at;
    }
  if (flags & 2)  // FHCRC
    at += 2;
  return at <= n ? at : 0;
}

result<member_compressor> member_compressor::create(int level)
{
  if (level < lowest_level || level > highest_level)
    return fail("gzip level " + std::to_string(level) + " is not one of 0-3");
  auto s = std::make_unique<state>();
  s->level = level;
  s->level_buffer.resize(level_buffer_size(level));
  return member_compressor(std::move(s));
}

member_compressor::member_compressor(std::unique_ptr<state> s) : s_(std::move(s)) {}
member_compressor::member_compressor(member_compressor&&) noexcept = default;
member_compressor& member_compressor::operator=(member_compressor&&) noexcept = default;
member_compressor::~member_compressor() = default;

size_t member_compressor::compress(std::string_view text, std::string& out)
{
  isal_zstream& z = s_->stream;
  isal_deflate_init(&z);
  z.gzip_flag = IGZIP_GZIP;  // a default gzip header and the CRC-32 and size trailer
  z.level = static_cast<uint32_t>(s_->level);
  z.level_buf = s_->level_buffer.empty() ? nullptr : s_->level_buffer.data();
  z.level_buf_size = static_cast<uint32_t>(s_->level_buffer.size());
  z.flush = NO_FLUSH;
  // igzip counts in 32 bits: a larger text goes in in parts (a member is ~4 MiB in a run).
  constexpr size_t most_at_once = size_t{1} << 30;
  const char* in = text.data();
  size_t left = text.size();
  // Text that does not compress is stored: 5 bytes per 64 KiB block beside header and trailer.
  // Should the output still not fit, it grows and igzip goes on where it stopped.
  if (out.size() < text.size() + text.size() / 1024 + 1024)
    out.resize(text.size() + text.size() / 1024 + 1024);
  size_t done = 0;
  for (;;) {
    if (z.avail_in == 0 && left > 0) {
      size_t part = std::min(left, most_at_once);
      z.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in));
      z.avail_in = static_cast<uint32_t>(part);
      in += part;
      left -= part;
    }
    z.end_of_stream = left == 0 ? 1 : 0;
    if (done == out.size())
      out.resize(out.size() * 2);
    uint32_t room = static_cast<uint32_t>(std::min(out.size() - done, most_at_once));
    z.next_out = reinterpret_cast<uint8_t*>(out.data() + done);
    z.avail_out = room;
    if (isal_deflate(&z) != COMP_OK)
      return 0;
    done += room - z.avail_out;
    if (z.internal_state.state == ZSTATE_END)
      return done;
  }
}

}  // namespace dc
