// Comparing the short strings the per-event tallies compare (operation names, layers, arg keys)
// inline: a call to memcmp for each comparison cost more than the comparison itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace dc {

// Whether a and b are the same text. Up to 16 bytes are compared as two overlapping words,
// reading only within both strings.
inline bool same_text(std::string_view a, std::string_view b)
{
  size_t n = a.size();
  if (n != b.size())
    return false;
  if (n > 16)
    return a == b;
  auto same_two = [&]<class Word>(Word) {
    Word a_head, a_tail, b_head, b_tail;
    std::memcpy(&a_head, a.data(), sizeof(Word));
    std::memcpy(&a_tail, a.data() + n - sizeof(Word), sizeof(Word));
    std::memcpy(&b_head, b.data(), sizeof(Word));
    std::memcpy(&b_tail, b.data() + n - sizeof(Word), sizeof(Word));
    return a_head == b_head && a_tail == b_tail;
  };
  if (n >= 8)
    return same_two(uint64_t{});
  if (n >= 4)
    return same_two(uint32_t{});
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

}  // namespace dc
