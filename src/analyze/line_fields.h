// How a trace line's fields become a record, shared by the line parser's two readers (simdjson
// On-Demand for the common line, the DOM for the rest): each reader turns a value into
// (kind, number, text) and these rules decide what the record keeps, so both give the same
// record for the same line. Inline: they run for every field of every line.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

#include "analyze/parsed_chunk.h"
#include "core/hash.h"

namespace dc::analyze {

// A value as the rules see it: a number (JSON number, boolean, or a string holding a decimal
// integer, whose text is kept too), a string, or nothing the record keeps (null, object, array).
enum class num_kind { none, number, text };

struct line_value {
  num_kind kind = num_kind::none;
  int64_t n = 0;
  std::string_view text;  // a string's contents (unescaped), empty for other values
};

// What the top-level fields say beyond the record: the phase, as text or number.
struct line_fields {
  std::string_view ph;
  int64_t ph_number = -1;
};

inline bool parse_decimal(std::string_view s, int64_t& out)
{
  if (s.empty())
    return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

inline bool parse_hex(std::string_view s, uint64_t& out)
{
  if (s.starts_with("0x"))
    s.remove_prefix(2);
  if (s.empty())
    return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

// A hash: a JSON number, or a string in hexadecimal (as dfanalyzer reads string hashes).
inline bool hash_of(const line_value& v, uint64_t& out)
{
  if (v.kind == num_kind::number && v.text.empty()) {
    out = static_cast<uint64_t>(v.n);
    return true;
  }
  return !v.text.empty() && parse_hex(v.text, out);
}

// A string value read: a number when it holds a decimal integer, else text.
inline line_value string_value(std::string_view text)
{
  line_value v{num_kind::text, 0, text};
  if (parse_decimal(text, v.n))
    v.kind = num_kind::number;
  return v;
}

// A top-level field (other than "args"). Keys are told apart by length first: this runs for
// every field of every line.
inline void top_field(std::string_view key, const line_value& v, record& r, line_fields& f)
{
  bool num = v.kind == num_kind::number;
  switch (key.size()) {
    case 2:
      if (key == "ph") {
        f.ph = v.text;
        if (num && v.text.empty())
          f.ph_number = v.n;
      } else if (key == "ts" && num) {
        r.ts_us = v.n;
      } else if (key == "id" && num) {
        r.id = v.n;
      }
      return;
    case 3:
      if (key == "cat")
        r.cat = v.text;
      else if (key == "pid" && num)
        r.pid = static_cast<uint64_t>(v.n);
      else if (key == "tid" && num)
        r.tid = static_cast<uint64_t>(v.n);
      else if (key == "dur" && num)
        r.dur_us = v.n;
      return;
    case 4:
      if (key == "name")
        r.name = v.text;
      return;
    default: return;
  }
}

// A field of "args": the hashes, level and parent id go into the record, every other number and
// string into chunk.args / chunk.texts (key_stable: key outlives the chunk's records; else it is
// copied into the arena when kept).
inline void args_field(std::string_view key, bool key_stable, const line_value& v, parsed_chunk& chunk,
                       record& r)
{
  if (v.kind == num_kind::none)
    return;
  if (key.size() == 5) {
    uint64_t h;
    if (key == "hhash" && hash_of(v, h)) {
      r.hhash = h;
      return;
    }
    if (key == "fhash" && hash_of(v, h)) {
      r.fhash = h;
      return;
    }
    if (key == "level" && v.kind == num_kind::number) {
      r.level = static_cast<int32_t>(v.n);
      return;
    }
    if (key == "p_idx" && v.kind == num_kind::number) {
      r.p_idx = v.n;
      return;
    }
  }
  if (!key_stable)
    key = chunk.arena.keep(key);
  if (v.kind == num_kind::number)
    chunk.args.push_back({key, v.n});
  if (!v.text.empty())
    chunk.texts.push_back({key, v.text});
  // Older dlio-profiler traces name the file and host in plain strings.
  if (v.kind == num_kind::text && key == "fname" && r.fhash == 0)
    r.fhash = string_hash(v.text);
  else if (v.kind == num_kind::text && key == "hostname" && r.hhash == 0)
    r.hhash = string_hash(v.text);
}

}  // namespace dc::analyze
