// One parsed line of a DFTracer v1.0.x trace (ours or DFTracer's own): what the trace reader
// hands to the analysis accumulators. A passive view: the strings point into the reader's
// buffer and live only until the accumulator's add() returns.
#pragma once

#include <cstdint>
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
// than the comparison on the hot path.
inline bool same_text(std::string_view a, std::string_view b)
{
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return false;
  return true;
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
