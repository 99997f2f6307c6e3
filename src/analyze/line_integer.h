// The line parser's integer conversion (line_fast.cpp): a JSON integer token of up to 18 digits
// converted here, short ones a digit at a time and long ones eight digits at a time. simdjson
// converts integers a digit at a time through its portable kernel, which with the 14- to 16-digit
// ids, times and hashes of every line was a fifth of reading it. Inline: it runs for most values.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace dc::analyze {

// A JSON real number as the field rules read it: truncated toward zero, and saturated to int64's
// range (a C++ conversion outside it is undefined: the fuzzer's -1e300). Both line readers use it.
[[gnu::always_inline]] inline int64_t real_as_int64(double x)
{
  if (!(x == x))
    return 0;  // NaN: not JSON, but no value to make of it
  if (x >= 9223372036854775808.0)
    return INT64_MAX;
  if (x < -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(x);
}

// JSON's blanks (what simdjson's stage 1 leaves after a token).
[[gnu::always_inline]] inline bool is_json_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Whether the word's eight bytes are all ASCII digits, and their value (SWAR, after Lemire's
// and simdjson's float path).
[[gnu::always_inline]] inline bool eight_digits(uint64_t w)
{
  return ((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
         0x3333333333333333ULL;
}

[[gnu::always_inline]] inline uint64_t eight_digit_value(uint64_t w)
{
  w = ((w & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
  w = ((w & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
  return ((w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}

// The value of the k digits (1 to 8) at p, as one word with leading '0's; false when one of them
// is not a digit. Reads 8 bytes from p: the line has padding after it.
[[gnu::always_inline]] inline bool digits_value(const char* p, size_t k, uint64_t& value)
{
  uint64_t w;
  std::memcpy(&w, p, 8);
  if (k < 8)  // the first digit is the lowest byte: shift the k digits up, '0's in below
    w = (w << (8 * (8 - k))) | (0x3030303030303030ULL >> (8 * k));
  if (!eight_digits(w))
    return false;
  value = eight_digit_value(w);
  return true;
}

// Digits up to this many are converted one at a time: fewer instructions than a word's
// arithmetic (pids, lengths, offsets, levels and fds are short).
constexpr size_t digit_by_digit = 5;

// A number token (with the blanks after it) that is a JSON integer of 1 to 18 digits,
// -?(0|[1-9][0-9]*), which always fits an int64_t. Anything else (19 digits or more, a fraction,
// an exponent, a malformed number): false, and simdjson reads and judges it. Reads up to 7 bytes
// past the token: the line has padding after it.
[[gnu::always_inline]] inline bool short_integer(std::string_view token, int64_t& out)
{
  const char* p = token.data();
  size_t n = token.size();
  if (n != 0 && static_cast<unsigned char>(p[n - 1]) <= ' ')  // blanks are below any digit
    while (n != 0 && is_json_blank(p[n - 1])) --n;
  bool negative = n != 0 && *p == '-';
  p += negative;
  n -= negative;
  if (n - 1 >= 18 || (*p == '0' && n > 1))  // n - 1 wraps when n is 0
    return false;
  uint64_t v = 0;
  if (n <= digit_by_digit) {
    for (size_t i = 0; i < n; ++i) {
      unsigned digit = static_cast<unsigned char>(p[i]) - unsigned{'0'};
      if (digit > 9)
        return false;
      v = v * 10 + digit;
    }
  } else {
    size_t head = n % 8 == 0 ? 8 : n % 8;  // the digits before the last groups of eight
    if (!digits_value(p, head, v))
      return false;
    for (size_t i = head; i < n; i += 8) {
      uint64_t group;
      if (!digits_value(p + i, 8, group))
        return false;
      v = v * 100000000 + group;
    }
  }
  out = static_cast<int64_t>(negative ? 0 - v : v);
  return true;
}

}  // namespace dc::analyze
