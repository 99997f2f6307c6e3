// How a trace line's fields become a record, shared by the line parser's two readers (simdjson
// On-Demand for the common line, the DOM for the rest): each reader turns a value into
// (kind, number, text) and these rules decide what the record keeps, so both give the same
// record for the same line. Inline: they run for every field of every line.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>

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

// What the fields say beyond the record: the phase, as text or number; and, for DataCrumbs's
// device and softirq lanes (reserved tids, README "The trace file"), the thread a lane span was
// done for, and whether a thread_name line names a lane (not a thread of the process).
struct line_fields {
  std::string_view ph;
  int64_t ph_number = -1;
  int64_t submit_tid = -1;
  bool lane_name = false;
};

inline bool parse_decimal(std::string_view s, int64_t& out)
{
  // Most strings (names, layers, phases) are no number: told by their first byte, without a call.
  if (s.empty() || (static_cast<unsigned char>(s[0] - '0') > 9 && s[0] != '-'))
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

// The keys the rules treat apart; every other key is `other`.
enum class field_key : uint8_t {
  other,
  args,
  name,
  cat,
  ph,
  pid,
  tid,
  ts,
  dur,
  id,
  hhash,
  fhash,
  fhash2,
  level,
  p_idx,
  submit_id,
  submit_tid,
  lane
};

inline field_key field_key_of(std::string_view key)
{
  if (key.size() > 5) {  // longer than any of the others
    if (key == "submit_id")
      return field_key::submit_id;
    if (key == "fhash2")
      return field_key::fhash2;
    return key == "submit_tid" ? field_key::submit_tid : field_key::other;
  }
  constexpr std::pair<std::string_view, field_key> keys[] = {
      {"args", field_key::args},   {"name", field_key::name},   {"cat", field_key::cat},
      {"ph", field_key::ph},       {"pid", field_key::pid},     {"tid", field_key::tid},
      {"ts", field_key::ts},       {"dur", field_key::dur},     {"id", field_key::id},
      {"hhash", field_key::hhash}, {"fhash", field_key::fhash}, {"level", field_key::level},
      {"p_idx", field_key::p_idx}, {"lane", field_key::lane}};
  for (const auto& [name, k] : keys)
    if (key == name)
      return k;
  return field_key::other;
}

// A top-level field (other than "args").
inline void top_field(field_key key, const line_value& v, parsed_chunk& chunk, record& r, line_fields& f)
{
  bool num = v.kind == num_kind::number;
  switch (key) {
    case field_key::name: r.name = v.text; return;
    case field_key::cat: r.cat = v.text; return;
    case field_key::ph:
      f.ph = v.text;
      if (num && v.text.empty())
        f.ph_number = v.n;
      return;
    case field_key::pid:
      if (num)
        r.pid = static_cast<uint64_t>(v.n);
      return;
    case field_key::tid:
      if (num)
        r.tid = static_cast<uint64_t>(v.n);
      return;
    case field_key::ts:
      if (num)
        r.ts_us = v.n;
      return;
    case field_key::dur:
      if (num)
        r.dur_us = v.n;
      return;
    case field_key::id:
      if (num)
        r.id = v.n;
      return;
    case field_key::fhash:  // a counter sample carries its file and host beside args
    case field_key::hhash: {
      uint64_t h;
      if (hash_of(v, h))
        (key == field_key::fhash ? r.fhash : r.hhash) = h;
      return;
    }
    case field_key::fhash2: {  // a copy's counter sample: its output, read as a span's args.fhash2
      uint64_t h;
      if (hash_of(v, h))
        chunk.args.push_back({"fhash2", static_cast<int64_t>(h)});
      return;
    }
    default: return;
  }
}

// A field of "args" (key, which is `id`): the hashes, level and parent id go into the record,
// every other number and string into chunk.args / chunk.texts (key_stable: key outlives the
// chunk's records; else it is copied into the arena when kept).
[[gnu::always_inline]] inline void args_field(field_key id, std::string_view key, bool key_stable,
                                              const line_value& v, parsed_chunk& chunk, record& r,
                                              line_fields& f)
{
  if (v.kind == num_kind::none)
    return;
  uint64_t h;
  switch (id) {
    case field_key::hhash:
      if (hash_of(v, h)) {
        r.hhash = h;
        return;
      }
      break;
    case field_key::fhash:
      if (hash_of(v, h)) {
        r.fhash = h;
        return;
      }
      break;
    case field_key::level:
      if (v.kind == num_kind::number) {
        r.level = static_cast<int32_t>(v.n);
        return;
      }
      break;
    case field_key::p_idx:
    case field_key::submit_id:  // a lane span's parent: the call that asked for it
      if (v.kind == num_kind::number) {
        r.p_idx = v.n;
        return;
      }
      break;
    case field_key::submit_tid:
      if (v.kind == num_kind::number) {
        f.submit_tid = v.n;
        return;
      }
      break;
    case field_key::lane: f.lane_name = v.kind == num_kind::text; break;
    default: break;
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
