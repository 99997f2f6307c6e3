// Stable string hashes for FH/HH/SH metadata. 53 bits, so every JSON reader (JavaScript in
// Perfetto included) holds the value exactly.
#pragma once

#include <cstdint>
#include <string_view>

namespace dc {

constexpr uint64_t string_hash(std::string_view s)
{
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h & ((1ULL << 53) - 1);
}

}  // namespace dc
