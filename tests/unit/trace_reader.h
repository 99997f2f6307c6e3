// Reading traces back in tests: gzip members one by one (so a truncated tail is detected, not
// hidden), and the JSON lines between the brackets.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dc::test {

struct gzip_contents {
  std::string text;  // the concatenated output of every complete member
  size_t complete_members = 0;
  bool truncated_tail = false;  // bytes after the last complete member
};

gzip_contents read_gzip_members(const std::string& path);

// One gzip member from the start of `bytes`, inflated by zlib until it stops (the member's end, a
// cut or damage): what it gave, zlib's last status (Z_STREAM_END: the member is whole) and the
// input bytes it used. The independent truth the tests compare readers against.
struct inflated_member {
  std::string text;
  int status = 0;
  size_t used = 0;
};
inflated_member inflate_member(std::string_view bytes);

struct parsed_trace {
  std::vector<nlohmann::json> lines;  // every line but "[" and "]"
  bool opened = false;                // first line is "["
  bool closed = false;                // last line is "]"
};

// Throws (failing the test) when a line is not valid JSON.
parsed_trace parse_trace_text(const std::string& text);

}  // namespace dc::test
