// Appending JSON pieces to a line buffer without allocation per value: the trace writer's hot
// path formats millions of lines a second. Two levels: append_* grow a std::string piece by
// piece (metadata lines, rare); a hot line is written in place with put_* into room reserved
// once for the whole line (append_line), with no capacity check per piece.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dc {

// The most bytes put_json_string writes for s: every byte as a 6-byte \u escape, and quotes.
constexpr size_t json_string_bound(std::string_view s)
{
  return 6 * s.size() + 2;
}
// Room any integer of up to 64 bits takes in decimal, sign included.
constexpr size_t json_int_bound = 20;

// Writes s as a JSON string literal (with quotes) at p, escaping what RFC 8259 requires and
// replacing bytes that are not valid UTF-8 with U+FFFD, so every line parses. Returns the end.
char* put_json_string(char* p, std::string_view s);

// Copies s (a literal or a preformatted piece) to p; returns the end.
inline char* put_raw(char* p, std::string_view s)
{
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

template <class Int>
char* put_int(char* p, Int v)
{
  return std::to_chars(p, p + json_int_bound, v).ptr;
}

// Appends what fill(char* at) writes at the end of out, in at most `most` bytes; fill returns
// where it stopped. Nothing is zeroed or checked per byte; out grows only when its capacity is
// short.
template <class Fill>
void append_line(std::string& out, size_t most, Fill&& fill)
{
  size_t old = out.size();
  out.resize_and_overwrite(old + most,
                           [&](char* d, size_t) { return static_cast<size_t>(fill(d + old) - d); });
}

inline void append_json_string(std::string& out, std::string_view s)
{
  append_line(out, json_string_bound(s), [&](char* p) { return put_json_string(p, s); });
}

template <class Int>
void append_int(std::string& out, Int v)
{
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

// Appends ,"key":value (or "key":value when first).
template <class Int>
void append_field(std::string& out, std::string_view key, Int v, bool first = false)
{
  if (!first)
    out.push_back(',');
  out.push_back('"');
  out.append(key);
  out.append("\":");
  append_int(out, v);
}

inline void append_string_field(std::string& out, std::string_view key, std::string_view v,
                                bool first = false)
{
  if (!first)
    out.push_back(',');
  out.push_back('"');
  out.append(key);
  out.append("\":");
  append_json_string(out, v);
}

}  // namespace dc
