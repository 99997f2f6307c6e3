// Copying and comparing the short strings a trace line's keys and the per-event tallies' names
// are, inline: a call to memcpy or memcmp for each cost more than the copy or the comparison.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace dc {

// The word of type Word at p, wherever p is aligned.
template <class Word>
Word word_at(const char* p)
{
  Word w;
  std::memcpy(&w, p, sizeof(Word));
  return w;
}

// Copies s to p; returns the end. Up to 16 bytes are copied as two overlapping words.
[[gnu::always_inline]] inline char* copy_text(char* p, std::string_view s)
{
  const char* d = s.data();
  size_t n = s.size();
  auto copy_two = [&]<class Word>(Word) {
    Word head = word_at<Word>(d), tail = word_at<Word>(d + n - sizeof(Word));
    std::memcpy(p, &head, sizeof(Word));
    std::memcpy(p + n - sizeof(Word), &tail, sizeof(Word));
  };
  if (n > 16) {
    std::memcpy(p, d, n);
  } else if (n >= 8) {
    copy_two(uint64_t{});
  } else if (n >= 4) {
    copy_two(uint32_t{});
  } else if (n > 0) {
    p[0] = d[0];
    p[n / 2] = d[n / 2];
    p[n - 1] = d[n - 1];
  }
  return p + n;
}

// Whether a and b are the same text. Up to 16 bytes are compared as two overlapping words,
// reading only within both strings.
[[gnu::always_inline]] inline bool same_text(std::string_view a, std::string_view b)
{
  size_t n = a.size();
  if (n != b.size())
    return false;
  if (n > 16)
    return a == b;
  auto same_two = [&]<class Word>(Word) {
    const char *a_tail = a.data() + n - sizeof(Word), *b_tail = b.data() + n - sizeof(Word);
    return word_at<Word>(a.data()) == word_at<Word>(b.data()) &&
           word_at<Word>(a_tail) == word_at<Word>(b_tail);
  };
  if (n >= 8)
    return same_two(uint64_t{});
  if (n >= 4)
    return same_two(uint32_t{});
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

}  // namespace dc
