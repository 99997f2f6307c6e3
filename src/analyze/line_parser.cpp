#include "analyze/line_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/hash.h"

namespace dc::analyze {

std::string_view skip_name(skip_reason r)
{
  switch (r) {
    case skip_reason::not_json: return "not_json";
    case skip_reason::not_an_event: return "not_an_event";
    case skip_reason::unknown_ph: return "unknown_ph";
    case skip_reason::negative_ts: return "negative_ts";
    case skip_reason::negative_dur: return "negative_dur";
    case skip_reason::truncated: return "truncated";
  }
  return "unknown";
}

void reserve_padding(std::string& text)
{
  text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
}

namespace {

bool is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\r';
}

// The line without surrounding blanks, a trailing comma, or the array brackets of the format.
std::string_view trim_line(std::string_view s)
{
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == ',')) s.remove_suffix(1);
  if (!s.empty() && s.front() == '[') {
    s.remove_prefix(1);
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  }
  if (!s.empty() && s.back() == ']' && (s.size() == 1 || s[s.size() - 2] != '"')) {
    // A lone "]" or "}]" closes the array; a "]" inside an object line is not at its end.
    if (s.size() == 1 || s[s.size() - 2] == '}' || is_space(s[s.size() - 2])) {
      s.remove_suffix(1);
      while (!s.empty() && (is_space(s.back()) || s.back() == ',')) s.remove_suffix(1);
    }
  }
  return s;
}

bool parse_decimal(std::string_view s, int64_t& out)
{
  if (s.empty())
    return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_hex(std::string_view s, uint64_t& out)
{
  if (s.starts_with("0x"))
    s.remove_prefix(2);
  if (s.empty())
    return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

enum class num_kind { none, number, text };

// A number given as a JSON number (integer, or real truncated toward zero) or as a decimal
// string; `text` holds the string (kept in the arena) when it is one.
void number_of(simdjson::dom::element v, string_arena& arena, int64_t& n, std::string_view& text,
               num_kind& kind)
{
  using simdjson::dom::element_type;
  kind = num_kind::none;
  switch (v.type()) {
    case element_type::INT64:
      n = v.get_int64().value_unsafe();
      kind = num_kind::number;
      return;
    case element_type::UINT64:
      n = static_cast<int64_t>(v.get_uint64().value_unsafe());
      kind = num_kind::number;
      return;
    case element_type::DOUBLE:
      n = static_cast<int64_t>(v.get_double().value_unsafe());
      kind = num_kind::number;
      return;
    case element_type::BOOL:
      n = v.get_bool().value_unsafe();
      kind = num_kind::number;
      return;
    case element_type::STRING:
      text = arena.keep(v.get_string().value_unsafe());
      kind = parse_decimal(text, n) ? num_kind::number : num_kind::text;
      return;
    default: return;  // null, object, array: not kept
  }
}

// A hash: a JSON number, or a string in hexadecimal (as dfanalyzer reads string hashes).
bool hash_of(num_kind kind, int64_t n, std::string_view text, uint64_t& out)
{
  if (kind == num_kind::number && text.empty()) {
    out = static_cast<uint64_t>(n);
    return true;
  }
  return !text.empty() && parse_hex(text, out);
}

struct line_fields {
  std::string_view ph;
  int64_t ph_number = -1;
  bool has_ts = false;
  // DataCrumbs draws device and softirq work on lanes (reserved tids, README "The trace file"):
  // such a span names the thread it was done for and the call that asked for it, and a lane's
  // thread_name line is not a thread of the process.
  int64_t submit_tid = -1;
  bool lane_name = false;
};

void parse_args(simdjson::dom::object args, parsed_chunk& chunk, record& r, line_fields& f)
{
  for (auto [raw_key, v] : args) {
    int64_t n = 0;
    std::string_view text;
    num_kind kind;
    number_of(v, chunk.arena, n, text, kind);
    if (kind == num_kind::none)
      continue;
    uint64_t h;
    if (raw_key == "hhash" && hash_of(kind, n, text, h)) {
      r.hhash = h;
    } else if (raw_key == "fhash" && hash_of(kind, n, text, h)) {
      r.fhash = h;
    } else if (raw_key == "level" && kind == num_kind::number) {
      r.level = static_cast<int32_t>(n);
    } else if (raw_key == "p_idx" && kind == num_kind::number) {
      r.p_idx = n;
    } else if (raw_key == "submit_id" && kind == num_kind::number) {
      r.p_idx = n;
    } else if (raw_key == "submit_tid" && kind == num_kind::number) {
      f.submit_tid = n;
    } else {
      if (raw_key == "lane" && kind == num_kind::text)
        f.lane_name = true;
      std::string_view key = chunk.arena.keep(raw_key);
      if (kind == num_kind::number)
        chunk.args.push_back({key, n});
      if (!text.empty())
        chunk.texts.push_back({key, text});
      // Older dlio-profiler traces name the file and host in plain strings.
      if (kind == num_kind::text && key == "fname" && r.fhash == 0)
        r.fhash = string_hash(text);
      else if (kind == num_kind::text && key == "hostname" && r.hhash == 0)
        r.hhash = string_hash(text);
    }
  }
}

}  // namespace

line_parser::outcome line_parser::parse(parsed_chunk& chunk, size_t at, size_t len, uint64_t line)
{
  std::string_view whole(chunk.text.data() + at, len);
  std::string_view s = trim_line(whole);
  if (s.empty())
    return outcome::blank;
  auto problem = [&](skip_reason reason, std::string detail) {
    chunk.problems.push_back({line, reason, std::move(detail)});
    return outcome::problem;
  };
  size_t start = static_cast<size_t>(s.data() - chunk.text.data());
  if (chunk.text.capacity() - start < s.size() + simdjson::SIMDJSON_PADDING)
    return problem(skip_reason::not_json, "line without parser padding (internal)");
  size_t args_before = chunk.args.size(), texts_before = chunk.texts.size();
  auto fail = [&](skip_reason reason, std::string detail) {
    chunk.args.resize(args_before);
    chunk.texts.resize(texts_before);
    return problem(reason, std::move(detail));
  };
  if (s.front() != '{') {
    // JSON that is not an object (a number, a string, an array) is not an event; the rest is
    // not JSON at all.
    simdjson::dom::element any;
    bool json = !parser_.parse(s.data(), s.size(), false).get(any);
    return json ? fail(skip_reason::not_an_event, "not an event object (skipped)")
                : fail(skip_reason::not_json, "not JSON (skipped)");
  }
  simdjson::dom::element doc;
  if (parser_.parse(s.data(), s.size(), false).get(doc))
    return fail(skip_reason::not_json, "not JSON (skipped)");
  simdjson::dom::object obj;
  if (doc.get_object().get(obj))
    return fail(skip_reason::not_an_event, "not an event object (skipped)");
  record r;
  line_fields f;
  for (auto [key, v] : obj) {
    if (key == "args") {
      simdjson::dom::object args;
      if (!v.get_object().get(args))
        parse_args(args, chunk, r, f);
      continue;
    }
    int64_t n = 0;
    std::string_view text;
    num_kind kind;
    number_of(v, chunk.arena, n, text, kind);
    bool num = kind == num_kind::number;
    if (key == "name")
      r.name = text;
    else if (key == "cat")
      r.cat = text;
    else if (key == "ph") {
      f.ph = text;
      if (num && text.empty())
        f.ph_number = n;
    } else if (key == "pid" && num)
      r.pid = static_cast<uint64_t>(n);
    else if (key == "tid" && num)
      r.tid = static_cast<uint64_t>(n);
    else if (key == "ts" && num) {
      r.ts_us = n;
      f.has_ts = true;
    } else if (key == "dur" && num)
      r.dur_us = n;
    else if (key == "id" && num)
      r.id = n;
    else if ((key == "fhash" || key == "hhash") && kind != num_kind::none) {
      // A counter sample carries its file and host beside args (numeric args are drawn).
      uint64_t h;
      if (hash_of(kind, n, text, h))
        (key == "fhash" ? r.fhash : r.hhash) = h;
    } else if (key == "fhash2" && kind != num_kind::none) {
      // A copy's counter sample names the file it wrote there too; read like a span's args.fhash2.
      uint64_t h;
      if (hash_of(kind, n, text, h))
        chunk.args.push_back({"fhash2", static_cast<int64_t>(h)});
    }
  }
  if (f.submit_tid >= 0)
    r.tid = static_cast<uint64_t>(f.submit_tid);
  if (f.ph == "X" || f.ph_number == 1)
    r.ph = phase::complete;
  else if (f.ph == "C" || f.ph_number == 2)
    r.ph = phase::counter;
  else if (f.ph == "M" || f.ph_number == 4)
    r.ph = phase::metadata;
  else if (f.ph == "i" || f.ph == "I")
    r.ph = phase::instant;
  else if (f.ph.empty() && f.ph_number < 0)
    return fail(skip_reason::not_an_event, "no \"ph\" (skipped)");
  else
    return fail(
        skip_reason::unknown_ph,
        "unknown ph \"" + (f.ph.empty() ? std::to_string(f.ph_number) : std::string(f.ph)) + "\" (skipped)");
  if (r.ph == phase::counter)
    r.dur_us = 0;  // a counter sample's dur is its calls' summed time (args.time_us), not a span
  if (r.ph == phase::metadata && f.lane_name && r.name == "thread_name")
    r.name = "lane_name";
  if (r.ts_us < 0)
    return fail(skip_reason::negative_ts, "negative ts (skipped)");
  if (r.dur_us < 0)
    return fail(skip_reason::negative_dur, "negative dur (skipped)");
  chunk.records.push_back(r);
  chunk.record_lines.push_back(line);
  chunk.arg_ranges.emplace_back(static_cast<uint32_t>(args_before),
                                static_cast<uint32_t>(chunk.args.size() - args_before));
  chunk.text_ranges.emplace_back(static_cast<uint32_t>(texts_before),
                                 static_cast<uint32_t>(chunk.texts.size() - texts_before));
  return outcome::record;
}

void line_parser::link_spans(parsed_chunk& chunk)
{
  for (size_t i = 0; i < chunk.records.size(); ++i) {
    auto [a, na] = chunk.arg_ranges[i];
    auto [t, nt] = chunk.text_ranges[i];
    chunk.records[i].args = std::span<const record_arg>(chunk.args.data() + a, na);
    chunk.records[i].texts = std::span<const record_text>(chunk.texts.data() + t, nt);
  }
}

void line_parser::parse_chunk(parsed_chunk& chunk)
{
  const std::string& text = chunk.text;
  size_t first_nl = text.find('\n');
  if (first_nl == std::string::npos) {
    chunk.head = chunk.tail = text;
    return;
  }
  chunk.head = std::string_view(text.data(), first_nl);
  size_t expected = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  chunk.records.reserve(expected);
  chunk.record_lines.reserve(expected);
  chunk.arg_ranges.reserve(expected);
  chunk.text_ranges.reserve(expected);
  chunk.args.reserve(expected * 8);
  size_t at = 0;
  uint64_t line = 0;
  while (true) {
    const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
    if (!nl)
      break;
    size_t end = static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    outcome o = parse(chunk, at, end - at, line);
    if (line == 0)
      chunk.head_outcome = static_cast<int>(o);
    else if (o != outcome::blank)
      ++chunk.lines;
    ++line;
    at = end + 1;
  }
  chunk.newlines = line;
  chunk.tail = std::string_view(text.data() + at, text.size() - at);
  link_spans(chunk);
}

}  // namespace dc::analyze
