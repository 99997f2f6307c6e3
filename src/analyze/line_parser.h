// One trace line -> one record, with simdjson's DOM parser (dispatched at run time
// to the CPU's best kernel). Accepts DataCrumbs' lines and
// DFTracer's v1.0.x lines (numbers as JSON numbers or strings, hex-string hashes, the newer
// integer ph), and says why a line is not an event instead of guessing.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "analyze/parsed_chunk.h"

namespace dc::analyze {

class line_parser {
 public:
  enum class outcome { blank, record, problem };

  // Parses the line at [at, at + len) of chunk.text (the text has simdjson's padding after its
  // end) and appends a record or a problem (with line number `line`) to chunk.
  outcome parse(parsed_chunk& chunk, size_t at, size_t len, uint64_t line);

  // Parses every complete line of chunk.text; fills head, tail, counts; links the spans.
  void parse_chunk(parsed_chunk& chunk);

  // Points each record's args and texts into the chunk's vectors, once they stop growing.
  static void link_spans(parsed_chunk& chunk);

 private:
  simdjson::dom::parser parser_;
};

// A string that holds room for simdjson's padding after its contents.
void reserve_padding(std::string& text);

}  // namespace dc::analyze
