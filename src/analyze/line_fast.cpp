// The line parser's fast reader: simdjson On-Demand over the line where it lies in the chunk.
// Keys and strings without escapes are used in place (views into the chunk's text, which lives
// as long as its records) instead of being unescaped and copied. Every value is read, so the
// line is checked as the DOM parser checks it: numbers, atoms and escapes by simdjson, and
// nothing may follow the object. An object or
// array value is left to the DOM reader (verdict::nested).
#include <cstring>

#include "analyze/line_fields.h"
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

bool is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A string value: in place when plain, else unescaped by simdjson (which checks the escapes) and
// kept in the arena.
[[gnu::always_inline]] inline read_status string_of(od::value& v, string_arena& arena, std::string_view& out)
{
  std::string_view token = v.raw_json_token();  // the string and the blanks after it
  while (token.size() > 1 && is_blank(token.back())) token.remove_suffix(1);
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
  char first = v.raw_json_token().front();
  if (first == '"') {
    std::string_view text;
    read_status s = string_of(v, arena, text);
    if (s == read_status::ok)
      out = string_value(text);
    return s;
  }
  if (first == '-' || (first >= '0' && first <= '9')) {
    int64_t n;
    if (!v.get_int64().get(n)) {  // the common case; anything else is classified below
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
      out = {num_kind::number, static_cast<int64_t>(x.get_double()), {}};
    return read_status::ok;
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

// Whether the raw key at k is `quoted` (the key and its closing quote: a match is the whole
// key, and plain). Reading past a shorter key is safe: the line has padding after it.
template <size_t N>
bool raw_is(const char* k, const char (&quoted)[N])
{
  return std::memcmp(k, quoted, N - 1) == 0;
}

// A key as read: its text and what the field rules make of it.
struct read_key {
  std::string_view text;
  field_key id = field_key::other;
};

// The keys every line of ours and DFTracer's has, matched on their raw bytes: no search for the
// key's end and escapes. Empty text when the key is another.
read_key known_key(const char* k)
{
  using enum field_key;
  switch (k[0]) {
    case 'a': return raw_is(k, "args\"") ? read_key{"args", args} : read_key{};
    case 'c':
      return raw_is(k, "cat\"")     ? read_key{"cat", cat}
             : raw_is(k, "count\"") ? read_key{"count"}
                                    : read_key{};
    case 'd': return raw_is(k, "dur\"") ? read_key{"dur", dur} : read_key{};
    case 'f':
      return raw_is(k, "fhash\"") ? read_key{"fhash", fhash}
             : raw_is(k, "fd\"")  ? read_key{"fd"}
                                  : read_key{};
    case 'h': return raw_is(k, "hhash\"") ? read_key{"hhash", hhash} : read_key{};
    case 'i': return raw_is(k, "id\"") ? read_key{"id", id} : read_key{};
    case 'l': return raw_is(k, "level\"") ? read_key{"level", level} : read_key{};
    case 'n': return raw_is(k, "name\"") ? read_key{"name", name} : read_key{};
    case 'o': return raw_is(k, "offset\"") ? read_key{"offset"} : read_key{};
    case 'p':
      return raw_is(k, "ph\"")      ? read_key{"ph", ph}
             : raw_is(k, "pid\"")   ? read_key{"pid", pid}
             : raw_is(k, "p_idx\"") ? read_key{"p_idx", p_idx}
                                    : read_key{};
    case 'r': return raw_is(k, "ret\"") ? read_key{"ret"} : read_key{};
    case 't':
      return raw_is(k, "ts\"") ? read_key{"ts", ts} : raw_is(k, "tid\"") ? read_key{"tid", tid} : read_key{};
    default: return {};
  }
}

// A field's key: a known one, or it ends at the quote before the ':' that precedes the value.
// Plain keys are taken from the line (through pool, when given), escaped ones unescaped (bad
// escapes are reported) into the arena.
[[gnu::always_inline]] inline read_status key_of(od::field& f, string_arena& arena, name_pool* pool,
                                                 read_key& key)
{
  const char* k = reinterpret_cast<const char*>(f.key().raw());
  key = known_key(k);
  if (!key.text.empty())
    return read_status::ok;
  const char* e = f.value().raw_json_token().data() - 1;
  while (e > k && is_blank(*e)) --e;
  if (e <= k || *e != ':')
    return read_status::nested;  // not as stage 1 left it: let the DOM parser judge the line
  for (--e; e > k && is_blank(*e);) --e;
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
fields_read read_fields(od::object& obj, parsed_chunk& chunk, record& r, line_fields& f)
{
  auto to_result = [](read_status st) {
    return st == read_status::bad ? fields_read::bad : fields_read::nested;
  };
  for (auto field_result : obj) {
    if (field_result.error())
      return fields_read::bad;
    od::field& field = field_result.value_unsafe();
    read_key key;
    if (read_status st = key_of(field, chunk.arena, nullptr, key); st != read_status::ok)
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
        if (read_status st = key_of(arg, chunk.arena, &chunk.names, arg_key); st != read_status::ok)
          return to_result(st);
        if (read_status st = value_of(arg.value(), chunk.arena, value); st != read_status::ok)
          return to_result(st);
        args_field(arg_key.id, arg_key.text, true, value, chunk, r);
      }
      continue;
    }
    line_value value;
    if (read_status st = value_of(v, chunk.arena, value); st != read_status::ok)
      return to_result(st);
    if (key.id != field_key::args)
      top_field(key.id, value, r, f);
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
  fields_read got = read_fields(obj, chunk, r, f);
  if (got != fields_read::read)
    return got == fields_read::bad ? verdict::not_json : verdict::nested;
  // The object was read to its end: anything after it makes the line not JSON.
  const char* after;
  return doc.current_location().get(after) == simdjson::OUT_OF_BOUNDS ? verdict::read : verdict::not_json;
}

bool line_parser::parse_run(parsed_chunk& chunk, size_t first, size_t last)
{
  std::string_view first_line = object_line(chunk.text, lines_[first]);
  std::string_view last_line = object_line(chunk.text, lines_[last - 1]);
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
    if (k == last || run + it.current_index() != object_line(chunk.text, lines_[k]).data())
      return undo();
    od::document_reference doc;
    od::object obj;
    if ((*it).get(doc) || doc.get_object().get(obj))
      return undo();
    size_t args_before = chunk.args.size(), texts_before = chunk.texts.size();
    record r;
    line_fields f;
    fields_read got = read_fields(obj, chunk, r, f);
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
