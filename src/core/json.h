// Appending JSON pieces to a line buffer without allocation per value: the trace writer's hot
// path formats millions of lines a second. Two levels: append_* grow a std::string piece by
// piece (metadata lines, rare); a hot line is written in place with put_* into room reserved
// once for the whole line (append_line), with no capacity check per piece.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/short_text.h"

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

// Copies s (a literal or a preformatted piece) to p; returns the end. Short pieces (a line's
// ~10 arg keys) are copied inline (copy_text): a call to memcpy for each cost a tenth of the
// writer's time.
inline char* put_raw(char* p, std::string_view s)
{
  return copy_text(p, s);
}

// Whether put_json_string writes s as it is between its quotes: printable ASCII, no quote or
// backslash (most names, layers and paths).
bool json_plain(std::string_view s);

// s between quotes, as it is: for a text json_plain says needs nothing escaped.
inline char* put_plain_json_string(char* p, std::string_view s)
{
  *p++ = '"';
  p = put_raw(p, s);
  *p++ = '"';
  return p;
}

namespace detail {

// "00" to "99": decimal digits are written two at a time, as std::to_chars does, but a 64-bit
// value is split into 8-digit parts first so that the divisions are 32-bit (the trace's numbers
// have ~16 digits; formatting them was the largest part of a line's cost).
inline constexpr auto digit_pairs = [] {
  std::array<char, 200> a{};
  for (int i = 0; i < 100; ++i) {
    a[2 * i] = static_cast<char>('0' + i / 10);
    a[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return a;
}();

inline char* put_pair(char* p, uint32_t two)
{
  std::memcpy(p, digit_pairs.data() + 2 * two, 2);
  return p + 2;
}

// Exactly 8 digits, leading zeros kept (v < 10^8).
inline char* put_8_digits(char* p, uint32_t v)
{
  uint32_t high = v / 10000, low = v % 10000;
  p = put_pair(put_pair(p, high / 100), high % 100);
  return put_pair(put_pair(p, low / 100), low % 100);
}

// 1 to 8 digits, no leading zero (v < 10^8).
inline char* put_up_to_8_digits(char* p, uint32_t v)
{
  int n = v < 10         ? 1
          : v < 100      ? 2
          : v < 1000     ? 3
          : v < 10000    ? 4
          : v < 100000   ? 5
          : v < 1000000  ? 6
          : v < 10000000 ? 7
                         : 8;
  char* end = p + n;
  char* at = end;
  for (; v >= 100; v /= 100) {
    at -= 2;
    put_pair(at, v % 100);
  }
  if (v >= 10)
    put_pair(at - 2, v);
  else
    at[-1] = static_cast<char>('0' + v);
  return end;
}

inline char* put_unsigned(char* p, uint64_t v)
{
  constexpr uint64_t e8 = 100000000;
  if (v < e8)
    return put_up_to_8_digits(p, static_cast<uint32_t>(v));
  uint64_t high = v / e8;
  p = high < e8 ? put_up_to_8_digits(p, static_cast<uint32_t>(high))
                : put_8_digits(put_up_to_8_digits(p, static_cast<uint32_t>(high / e8)),
                               static_cast<uint32_t>(high % e8));
  return put_8_digits(p, static_cast<uint32_t>(v % e8));
}

}  // namespace detail

template <class Int>
char* put_int(char* p, Int v)
{
  if constexpr (std::is_signed_v<Int>)
    if (v < 0) {
      *p++ = '-';
      return detail::put_unsigned(p, 0 - static_cast<uint64_t>(v));
    }
  return detail::put_unsigned(p, static_cast<uint64_t>(v));
}

// A number's decimal text kept for the next line that has it: a trace's lines mostly repeat the
// line before's pid, tid and file hash (a 16-digit hash formatted again cost ~60 instructions).
class kept_number {
 public:
  char* put(char* p, uint64_t v)
  {
    if (v != value_ || size_ == 0) {
      value_ = v;
      size_ = static_cast<uint8_t>(detail::put_unsigned(text_, v) - text_);
    }
    return copy_text(p, {text_, size_});
  }

 private:
  uint64_t value_ = 0;
  uint8_t size_ = 0;
  char text_[json_int_bound];
};

// A number whose digits above its last eight repeat from line to line (a trace's timestamps
// and kernel ids change there once in 100 s or 10^8 ids): those are kept as text, and only the
// last eight are formatted.
class kept_high_digits {
 public:
  char* put(char* p, uint64_t v)
  {
    constexpr uint64_t e8 = 100000000;
    if (v < e8)
      return detail::put_up_to_8_digits(p, static_cast<uint32_t>(v));
    uint64_t high = v / e8;
    if (high != high_ || size_ == 0) {
      high_ = high;
      size_ = static_cast<uint8_t>(detail::put_unsigned(text_, high) - text_);
    }
    return detail::put_8_digits(copy_text(p, {text_, size_}), static_cast<uint32_t>(v - high * e8));
  }

 private:
  uint64_t high_ = 0;
  uint8_t size_ = 0;
  char text_[json_int_bound];
};

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
