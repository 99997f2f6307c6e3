// How a trace line's fields become a record, shared by the line parser's two readers (simdjson
// On-Demand for the common line, the DOM for the rest): each reader turns a value into
// (kind, number, text) and these rules decide what the record keeps, so both give the same
// record for the same line.
#pragma once

#include <cstdint>
#include <string_view>

#include "analyze/parsed_chunk.h"

namespace dc::analyze {

// A value as the rules see it: a number (JSON number, boolean, or a string holding a decimal
// integer, whose text is kept too), a string, or nothing the record keeps (null, object, array).
enum class num_kind { none, number, text };

struct line_value {
  num_kind kind = num_kind::none;
  int64_t n = 0;
  std::string_view text;  // a string's contents (unescaped), empty for other values
};

// A string value read: a number when it holds a decimal integer, else text.
line_value string_value(std::string_view text);

// What the top-level fields say beyond the record: the phase, as text or number.
struct line_fields {
  std::string_view ph;
  int64_t ph_number = -1;
};

// A top-level field (other than "args").
void top_field(std::string_view key, const line_value& v, record& r, line_fields& f);

// A field of "args": the hashes, level and parent id go into the record, every other number and
// string into chunk.args / chunk.texts (key_stable: key outlives the chunk's records; else it is
// copied into the arena when kept).
void args_field(std::string_view key, bool key_stable, const line_value& v, parsed_chunk& chunk, record& r);

}  // namespace dc::analyze
