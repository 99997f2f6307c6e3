#include "core/json.h"

namespace dc {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
size_t utf8_sequence_length(std::string_view s, size_t i)
{
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80)
      return 0;
  if (n == 2 && c < 0xc2)
    return 0;  // overlong
  return n;
}

// Printable ASCII other than '"' and '\\': copied as it is.
bool plain(unsigned char c)
{
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

// Whether every byte of w is plain, a word at a time: a byte loop was ~7 instructions a byte,
// and a line's name, layer and texts are ~25 bytes. Each test is exact for "any byte":
// (x - 0x01..) & ~x & 0x80.. is nonzero iff some byte of x is 0 (and with 0x20.. iff some
// byte is below 0x20, once no byte has its high bit set).
template <class Word>
bool plain_word(Word w)
{
  constexpr Word ones = static_cast<Word>(~Word{0}) / 0xff, highs = ones * 0x80;
  auto some_zero = [](Word x) { return ((x - ones) & ~x & highs) != 0; };
  return (w & highs) == 0 && ((w - ones * 0x20) & ~w & highs) == 0 && !some_zero(w ^ (ones * '"')) &&
         !some_zero(w ^ (ones * '\\'));
}

}  // namespace

// Whether all of s is plain: whole words, the last one overlapping the one before it.
bool json_plain(std::string_view s)
{
  const char* d = s.data();
  size_t n = s.size();
  if (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8)
      if (!plain_word(word_at<uint64_t>(d + i)))
        return false;
    return n % 8 == 0 || plain_word(word_at<uint64_t>(d + n - 8));
  }
  if (n >= 4)
    return plain_word(word_at<uint32_t>(d)) && plain_word(word_at<uint32_t>(d + n - 4));
  for (size_t i = 0; i < n; ++i)
    if (!plain(static_cast<unsigned char>(d[i])))
      return false;
  return true;
}

char* put_json_string(char* p, std::string_view s)
{
  static constexpr char hex[] = "0123456789abcdef";
  if (json_plain(s))  // names, layers and paths almost always are
    return put_plain_json_string(p, s);
  *p++ = '"';
  // The plain run before the first byte that is not, at once.
  size_t i = 0;
  while (i < s.size() && plain(static_cast<unsigned char>(s[i]))) ++i;
  p = put_raw(p, s.substr(0, i));
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        p = put_raw(p, "\\ufffd");
        ++i;
      } else {
        p = put_raw(p, s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': p = put_raw(p, "\\\""); break;
      case '\\': p = put_raw(p, "\\\\"); break;
      case '\n': p = put_raw(p, "\\n"); break;
      case '\r': p = put_raw(p, "\\r"); break;
      case '\t': p = put_raw(p, "\\t"); break;
      case '\b': p = put_raw(p, "\\b"); break;
      case '\f': p = put_raw(p, "\\f"); break;
      default:
        if (c < 0x20) {
          p = put_raw(p, "\\u00");
          *p++ = hex[c >> 4];
          *p++ = hex[c & 0xf];
        } else {
          *p++ = static_cast<char>(c);
        }
    }
    ++i;
  }
  *p++ = '"';
  return p;
}

}  // namespace dc
