#include "analyze/line_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "analyze/line_fields.h"
#include "analyze/line_integer.h"
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

// A DOM value as the field rules read it; a string is copied into the arena (the parser's own
// buffer is reused line after line).
line_value dom_value(simdjson::dom::element v, string_arena& arena)
{
  using simdjson::dom::element_type;
  switch (v.type()) {
    case element_type::INT64: return {num_kind::number, v.get_int64().value_unsafe(), {}};
    case element_type::UINT64:
      return {num_kind::number, static_cast<int64_t>(v.get_uint64().value_unsafe()), {}};
    case element_type::DOUBLE: return {num_kind::number, real_as_int64(v.get_double().value_unsafe()), {}};
    case element_type::BOOL: return {num_kind::number, v.get_bool().value_unsafe(), {}};
    case element_type::STRING: return string_value(arena.keep(v.get_string().value_unsafe()));
    default: return {};  // null, object, array: not kept
  }
}

}  // namespace

line_parser::verdict line_parser::read_dom(std::string_view s, parsed_chunk& chunk, record& r, line_fields& f)
{
  simdjson::dom::element doc;
  if (dom_.parse(s.data(), s.size(), false).get(doc))
    return verdict::not_json;
  simdjson::dom::object obj;
  if (doc.get_object().get(obj))
    return verdict::not_an_object;
  for (auto [key, v] : obj) {
    if (key == "args") {
      simdjson::dom::object args;
      if (!v.get_object().get(args))
        for (auto [arg_key, arg] : args)
          args_field(field_key_of(arg_key), arg_key, false, dom_value(arg, chunk.arena), chunk, r, f);
      continue;
    }
    top_field(field_key_of(key), dom_value(v, chunk.arena), chunk, r, f);
  }
  return verdict::read;
}

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
  size_t room = chunk.text.capacity() - start;
  if (room < s.size() + simdjson::SIMDJSON_PADDING)
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
    bool json = !dom_.parse(s.data(), s.size(), false).get(any);
    return json ? fail(skip_reason::not_an_event, "not an event object (skipped)")
                : fail(skip_reason::not_json, "not JSON (skipped)");
  }
  record r;
  line_fields f;
  verdict v = read_fast(s, room, chunk, r, f);
  if (v == verdict::nested) {  // values the fast reader leaves to the DOM: read the line again
    chunk.args.resize(args_before);
    chunk.texts.resize(texts_before);
    r = record{};
    f = line_fields{};
    v = read_dom(s, chunk, r, f);
  }
  return finish(chunk, v, r, f, line, args_before, texts_before);
}

line_parser::outcome line_parser::finish(parsed_chunk& chunk, verdict v, record& r, const line_fields& f,
                                         uint64_t line, size_t args_before, size_t texts_before)
{
  auto fail = [&](skip_reason reason, std::string detail) {
    chunk.args.resize(args_before);
    chunk.texts.resize(texts_before);
    chunk.problems.push_back({line, reason, std::move(detail)});
    return outcome::problem;
  };
  if (v == verdict::not_json)
    return fail(skip_reason::not_json, "not JSON (skipped)");
  if (v == verdict::not_an_object)
    return fail(skip_reason::not_an_event, "not an event object (skipped)");
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
    return fail(skip_reason::not_an_event, "not an event object: no \"ph\" (skipped)");
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

std::string_view object_line(std::string_view text, std::pair<size_t, size_t> line)
{
  std::string_view s = text.substr(line.first, line.second);
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s.size() >= 2 && s.front() == '{' && s.back() == '}' ? s : std::string_view();
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
  lines_.clear();
  size_t at = 0;
  while (const void* nl = std::memchr(text.data() + at, '\n', text.size() - at)) {
    size_t end = static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    lines_.emplace_back(at, end - at);
    at = end + 1;
  }
  chunk.newlines = lines_.size();
  chunk.tail = std::string_view(text.data() + at, text.size() - at);
  chunk.records.reserve(lines_.size());
  chunk.record_lines.reserve(lines_.size());
  chunk.arg_ranges.reserve(lines_.size());
  chunk.text_ranges.reserve(lines_.size());
  chunk.args.reserve(lines_.size() * 8);
  auto note = [&](size_t line, outcome o) {
    if (line == 0)
      chunk.head_outcome = static_cast<int>(o);
    else if (o != outcome::blank)
      ++chunk.lines;
  };
  // Runs of object lines go through one document stream (up to run_bytes at a time: small enough
  // to be still in the cache when its documents are read); a run the stream does not read line
  // for line, and every other line, is parsed alone.
  constexpr size_t run_bytes = 32 << 10;
  for (size_t i = 0; i < lines_.size();) {
    size_t j = i, bytes = 0;
    objects_.clear();
    for (; j < lines_.size() && bytes < run_bytes; ++j) {
      std::string_view object = object_line(text, lines_[j]);
      if (object.empty())
        break;
      objects_.push_back(object);
      bytes += lines_[j].second + 1;
    }
    if (j - i >= 2 && parse_run(chunk, i, j)) {
      for (size_t k = i; k < j; ++k) note(k, run_outcomes_[k - i]);
    } else {
      j = std::max(j, i + 1);
      for (size_t k = i; k < j; ++k) note(k, parse(chunk, lines_[k].first, lines_[k].second, k));
    }
    i = j;
  }
  link_spans(chunk);
}

}  // namespace dc::analyze
