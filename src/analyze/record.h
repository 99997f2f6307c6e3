// One parsed line of a DFTracer v1.0.x trace (ours or DFTracer's own): what the trace reader
// hands to the analysis accumulators. A passive view: the strings point into the reader's
// buffer and live only until the accumulator's add() returns.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace dc::analyze {

// "ph": X (complete span), C (counter sample), M (metadata), i/I (instant), anything else.
enum class phase : uint8_t { complete, counter, metadata, instant, other };

// Equality of short names (operations, layers, keys) without a call to memcmp, which costs more
// than the comparison on the hot path: a word at a time, the last word overlapping the one before
// (every load lies inside both strings).
inline bool same_text(std::string_view a, std::string_view b)
{
  size_t n = a.size();
  if (n != b.size())
    return false;
  const char *p = a.data(), *q = b.data();
  auto word = [](const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (word(p + i) != word(q + i))
        return false;
    return word(p + n - 8) == word(q + n - 8);
  }
  if (n >= 4) {
    auto half = [](const char* at) {
      uint32_t w;
      std::memcpy(&w, at, 4);
      return w;
    };
    return half(p) == half(q) && half(p + n - 4) == half(q + n - 4);
  }
  return n == 0 || (p[0] == q[0] && p[n / 2] == q[n / 2] && p[n - 1] == q[n - 1]);
}

struct record_arg {
  std::string_view key;
  int64_t value;
};

struct record_text {
  std::string_view key;
  std::string_view value;
};

struct record {
  phase ph = phase::other;
  std::string_view name;  // the operation ("pread64", "H5Dwrite") or the metadata kind ("FH")
  std::string_view cat;   // the layer ("POSIX", "STDIO", "FS", "BLOCK", ...)
  uint64_t pid = 0;
  uint64_t tid = 0;
  int64_t ts_us = 0;   // epoch microseconds (0 when the line has none)
  int64_t dur_us = 0;  // 0 when the line has none
  int64_t id = -1;
  int64_t p_idx = -1;  // DFTracer parent id, -1: none
  int32_t level = 0;
  uint64_t hhash = 0;  // host hash (args.hhash), 0: none
  uint64_t fhash = 0;  // file hash (args.fhash), 0: none
  // Every other numeric argument, in line order (ret, count, offset, fd, size, ...).
  std::span<const record_arg> args;
  // String arguments (metadata name/value, addresses, ...).
  std::span<const record_text> texts;

  std::optional<int64_t> arg(std::string_view key) const
  {
    for (const record_arg& a : args)
      if (same_text(a.key, key))
        return a.value;
    return std::nullopt;
  }

  std::string_view text(std::string_view key) const
  {
    for (const record_text& t : texts)
      if (same_text(t.key, key))
        return t.value;
    return {};
  }
};

// Hash -> string, from the traces' FH (files), HH (hosts) and SH (other strings) metadata lines.
struct name_map {
  std::unordered_map<uint64_t, std::string> files;
  std::unordered_map<uint64_t, std::string> hosts;
  std::unordered_map<uint64_t, std::string> strings;
};

}  // namespace dc::analyze
