// The line parser's fast reader: simdjson On-Demand over the line where it lies in the chunk.
// Keys and strings without escapes are used in place (views into the chunk's text, which lives
// as long as its records) instead of being unescaped and copied. Every value is read, so the
// line is checked as the DOM parser checks it: numbers, atoms and escapes by simdjson, and
// nothing may follow the object. An object or
// array value is left to the DOM reader (verdict::nested).
#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <tuple>

#include "analyze/line_fields.h"
#include "analyze/line_integer.h"
#include "analyze/line_parser.h"

namespace dc::analyze {

namespace {

namespace od = simdjson::ondemand;

enum class read_status { ok, bad, nested };

// Whether [p, p + n) holds a backslash (an escape), eight bytes at a time; reading up to 7 bytes
// past the end is safe: the line has simdjson's padding after it. (Control characters, which
// JSON allows in a string only escaped, are refused by simdjson's indexing already.)
[[gnu::always_inline]] inline bool has_escape(const char* p, size_t n)
{
  constexpr uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (n - i < 8) {  // bytes past the end read as 'a'
      uint64_t keep = (uint64_t{1} << (8 * (n - i))) - 1;
      w = (w & keep) | (ones * 'a' & ~keep);
    }
    uint64_t slash = w ^ (ones * '\\');
    if ((slash - ones) & ~slash & highs)
      return true;
  }
  return false;
}

// A string value: in place when plain, else unescaped by simdjson (which checks the escapes) and
// kept in the arena.
[[gnu::always_inline]] inline read_status string_of(od::value& v, string_arena& arena, std::string_view& out)
{
  std::string_view token = v.raw_json_token();  // the string and the blanks after it
  while (token.size() > 1 && is_json_blank(token.back())) token.remove_suffix(1);
  if (token.size() >= 2 && token.back() == '"' && !has_escape(token.data() + 1, token.size() - 2)) {
    out = token.substr(1, token.size() - 2);
    return read_status::ok;
  }
  std::string_view unescaped;
  if (v.get_string().get(unescaped))
    return read_status::bad;
  out = arena.keep(unescaped);
  return read_status::ok;
}

// A value as the field rules read it (what dom_value gives for the same JSON).
[[gnu::always_inline]] inline read_status value_of(od::value& v, string_arena& arena, line_value& out)
{
  std::string_view token = v.raw_json_token();
  char first = token.front();
  if (static_cast<unsigned char>(first - '0') <= 9 || first == '-') {  // the most common value first
    int64_t n;
    if (short_integer(token, n) || !v.get_int64().get(n)) {  // the common cases; the rest below
      out = {num_kind::number, n, {}};
      return read_status::ok;
    }
    od::number x;
    if (v.get_number().get(x))
      return read_status::bad;
    if (x.is_int64())
      out = {num_kind::number, x.get_int64(), {}};
    else if (x.is_uint64())
      out = {num_kind::number, static_cast<int64_t>(x.get_uint64()), {}};
    else
      out = {num_kind::number, real_as_int64(x.get_double()), {}};
    return read_status::ok;
  }
  if (first == '"') {
    std::string_view text;
    read_status s = string_of(v, arena, text);
    if (s == read_status::ok)
      out = string_value(text);
    return s;
  }
  if (first == 't' || first == 'f') {
    bool b;
    if (v.get_bool().get(b))
      return read_status::bad;
    out = {num_kind::number, b, {}};
    return read_status::ok;
  }
  if (first == 'n') {
    bool null = false;
    if (v.is_null().get(null) || !null)
      return read_status::bad;
    out = {};
    return read_status::ok;
  }
  return first == '{' || first == '[' ? read_status::nested : read_status::bad;
}

// A key as read: its text and what the field rules make of it.
struct read_key {
  std::string_view text;
  field_key id = field_key::other;
};

// A key common in our and DFTracer's lines, as the first 16 raw bytes of a field hold it: the
// key and its closing quote (so a match is the whole key, and plain), the rest masked off. Keys
// of up to 7 characters fit the first word, and the second is then not compared.
struct known_key {
  uint64_t pattern[2] = {0, 0}, mask[2] = {0, 0};
  read_key key;
};

static_assert(std::endian::native == std::endian::little, "keys are matched as little-endian words");

constexpr known_key make_known(std::string_view text, field_key id)
{
  known_key k{{0, 0}, {0, 0}, {text, id}};
  for (size_t i = 0; i <= text.size(); ++i) {
    uint64_t byte = i < text.size() ? static_cast<unsigned char>(text[i]) : '"';
    k.pattern[i / 8] |= byte << (8 * (i % 8));
    k.mask[i / 8] |= uint64_t{0xff} << (8 * (i % 8));
  }
  return k;
}

constexpr known_key known_keys[] = {{},  // 0: none
                                    make_known("id", field_key::id),
                                    make_known("name", field_key::name),
                                    make_known("cat", field_key::cat),
                                    make_known("pid", field_key::pid),
                                    make_known("tid", field_key::tid),
                                    make_known("ts", field_key::ts),
                                    make_known("dur", field_key::dur),
                                    make_known("ph", field_key::ph),
                                    make_known("args", field_key::args),
                                    make_known("hhash", field_key::hhash),
                                    make_known("level", field_key::level),
                                    make_known("p_idx", field_key::p_idx),
                                    make_known("fd", field_key::other),
                                    make_known("count", field_key::other),
                                    make_known("offset", field_key::other),
                                    make_known("ret", field_key::other),
                                    make_known("fhash", field_key::fhash),
                                    make_known("fhash2", field_key::fhash2),
                                    make_known("first_page", field_key::other),
                                    make_known("last_page", field_key::other),
                                    make_known("submit_id", field_key::submit_id),
                                    make_known("submit_tid", field_key::submit_tid),
                                    make_known("value", field_key::other),
                                    make_known("mode", field_key::other),
                                    make_known("flags", field_key::other),
                                    make_known("size", field_key::other)};
static_assert(std::size(known_keys) <= std::tuple_size_v<decltype(line_parser::key_state::guess)>);
static_assert(std::ranges::all_of(known_keys, [](const known_key& k) { return k.key.text.size() < 16; }));

// Whether the 16 bytes at w hold known key i.
[[gnu::always_inline]] inline bool is_known(const uint64_t (&w)[2], size_t i)
{
  const known_key& k = known_keys[i];
  return (w[0] & k.mask[0]) == k.pattern[0] && (w[1] & k.mask[1]) == k.pattern[1];
}

// The index of the known key at k, or 0. Lines repeat their keys in the same order, and traces
// interleave a few kinds of line (a system call and the FS event beneath it): the two keys that
// followed the previous one when it was last missed are tried first.
[[gnu::always_inline]] inline size_t match_known(const char* k, line_parser::key_state& keys)
{
  uint64_t w[2];
  std::memcpy(w, k, 16);  // the line has padding after it
  uint8_t& first = keys.guess[keys.previous];
  uint8_t& second = keys.second_guess[keys.previous];
  if (first && is_known(w, first))
    return keys.previous = first;
  if (second && is_known(w, second))
    return keys.previous = second;
  for (size_t i = 1; i < std::size(known_keys); ++i)
    if (is_known(w, i)) {
      second = first;
      first = static_cast<uint8_t>(i);
      return keys.previous = first;
    }
  return keys.previous = 0;
}

// A field's key: a known one, or it ends at the quote before the ':' that precedes the value.
// Plain keys are taken from the line (through pool, when given), escaped ones unescaped (bad
// escapes are reported) into the arena.
[[gnu::always_inline]] inline read_status key_of(od::field& f, string_arena& arena, name_pool* pool,
                                                 line_parser::key_state& keys, read_key& key)
{
  const char* k = reinterpret_cast<const char*>(f.key().raw());
  if (size_t known = match_known(k, keys)) {
    key = known_keys[known].key;
    return read_status::ok;
  }
  const char* e = f.value().raw_json_token().data() - 1;
  while (e > k && is_json_blank(*e)) --e;
  if (e <= k || *e != ':')
    return read_status::nested;  // not as stage 1 left it: let the DOM parser judge the line
  for (--e; e > k && is_json_blank(*e);) --e;
  if (e < k || *e != '"')
    return read_status::nested;
  size_t n = static_cast<size_t>(e - k);
  if (!has_escape(k, n)) {
    key.text = pool ? pool->intern(std::string_view(k, n), arena) : std::string_view(k, n);
  } else {
    std::string_view unescaped;
    if (f.unescaped_key().get(unescaped))
      return read_status::bad;
    key.text = arena.keep(unescaped);
  }
  key.id = field_key_of(key.text);
  return read_status::ok;
}

// The fields of a line's object into r and f (args into chunk).
enum class fields_read { read, bad, nested };
fields_read read_fields(od::object& obj, parsed_chunk& chunk, line_parser::key_state& keys, record& r,
                        line_fields& f)
{
  auto to_result = [](read_status st) {
    return st == read_status::bad ? fields_read::bad : fields_read::nested;
  };
  for (auto field_result : obj) {
    if (field_result.error())
      return fields_read::bad;
    od::field& field = field_result.value_unsafe();
    read_key key;
    if (read_status st = key_of(field, chunk.arena, nullptr, keys, key); st != read_status::ok)
      return to_result(st);
    od::value& v = field.value();
    if (key.id == field_key::args && v.raw_json_token().front() == '{') {
      od::object args;
      if (v.get_object().get(args))
        return fields_read::bad;
      for (auto arg_result : args) {
        if (arg_result.error())
          return fields_read::bad;
        od::field& arg = arg_result.value_unsafe();
        read_key arg_key;
        line_value value;
        if (read_status st = key_of(arg, chunk.arena, &chunk.names, keys, arg_key); st != read_status::ok)
          return to_result(st);
        if (read_status st = value_of(arg.value(), chunk.arena, value); st != read_status::ok)
          return to_result(st);
        args_field(arg_key.id, arg_key.text, true, value, chunk, r, f);
      }
      continue;
    }
    line_value value;
    if (read_status st = value_of(v, chunk.arena, value); st != read_status::ok)
      return to_result(st);
    if (key.id != field_key::args)
      top_field(key.id, value, chunk, r, f);
  }
  // The applying thread reads the pool's copies, not each line's text.
  r.name = chunk.names.intern(r.name, chunk.arena);
  r.cat = chunk.names.intern(r.cat, chunk.arena);
  return fields_read::read;
}

}  // namespace

line_parser::verdict line_parser::read_fast(std::string_view s, size_t room, parsed_chunk& chunk, record& r,
                                            line_fields& f)
{
  od::document doc;
  if (fast_.iterate(s.data(), s.size(), room).get(doc))
    return verdict::not_json;
  od::object obj;
  if (doc.get_object().get(obj))
    return verdict::not_json;
  fields_read got = read_fields(obj, chunk, keys_, r, f);
  if (got != fields_read::read)
    return got == fields_read::bad ? verdict::not_json : verdict::nested;
  // The object was read to its end: anything after it makes the line not JSON.
  const char* after;
  return doc.current_location().get(after) == simdjson::OUT_OF_BOUNDS ? verdict::read : verdict::not_json;
}

bool line_parser::parse_run(parsed_chunk& chunk, size_t first, size_t last)
{
  std::string_view first_line = objects_.front(), last_line = objects_[last - 1 - first];
  const char* run = first_line.data();
  size_t size = static_cast<size_t>(last_line.data() + last_line.size() - run);
  if (chunk.text.capacity() - static_cast<size_t>(run - chunk.text.data()) <
      size + simdjson::SIMDJSON_PADDING)
    return false;
  size_t records = chunk.records.size(), args = chunk.args.size(), texts = chunk.texts.size(),
         problems = chunk.problems.size();
  auto undo = [&] {
    chunk.records.resize(records);
    chunk.record_lines.resize(records);
    chunk.arg_ranges.resize(records);
    chunk.text_ranges.resize(records);
    chunk.args.resize(args);
    chunk.texts.resize(texts);
    chunk.problems.resize(problems);
    return false;
  };
  run_outcomes_.clear();
  runs_.threaded = false;  // one batch, read on this thread
  od::document_stream stream;
  if (runs_.iterate_many(run, size, std::max<size_t>(size, 1 << 16)).get(stream))
    return false;
  size_t k = first;
  for (auto it = stream.begin(); it != stream.end(); ++it, ++k) {
    // Each document must be the next line's object, starting where the line does.
    if (k == last || run + it.current_index() != objects_[k - first].data())
      return undo();
    od::document_reference doc;
    od::object obj;
    if ((*it).get(doc) || doc.get_object().get(obj))
      return undo();
    size_t args_before = chunk.args.size(), texts_before = chunk.texts.size();
    record r;
    line_fields f;
    fields_read got = read_fields(obj, chunk, keys_, r, f);
    if (got == fields_read::nested) {  // read alone, by the DOM parser
      chunk.args.resize(args_before);
      chunk.texts.resize(texts_before);
      run_outcomes_.push_back(parse(chunk, lines_[k].first, lines_[k].second, k));
      continue;
    }
    if (got != fields_read::read)
      return undo();
    run_outcomes_.push_back(finish(chunk, verdict::read, r, f, k, args_before, texts_before));
  }
  return k == last || undo();
}

}  // namespace dc::analyze
