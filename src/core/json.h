// Appending JSON pieces to a line buffer without allocation per value: the trace writer's hot
// path formats hundreds of thousands of lines a second.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace dc {

// Appends s as a JSON string literal (with quotes), escaping what RFC 8259 requires and
// replacing bytes that are not valid UTF-8 with U+FFFD, so every line parses.
void append_json_string(std::string& out, std::string_view s);

template <class Int>
void append_int(std::string& out, Int v)
{
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

// Appends ,"key":value (or "key":value when first).
template <class Int>
void append_field(std::string& out, std::string_view key, Int v, bool first = false)
{
  if (!first)
    out.push_back(',');
  out.push_back('"');
  out.append(key);
  out.append("\":");
  append_int(out, v);
}

inline void append_string_field(std::string& out, std::string_view key, std::string_view v,
                                bool first = false)
{
  if (!first)
    out.push_back(',');
  out.push_back('"');
  out.append(key);
  out.append("\":");
  append_json_string(out, v);
}

}  // namespace dc
