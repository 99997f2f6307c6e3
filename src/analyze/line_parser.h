// One trace line -> one record, with simdjson (its indexing dispatched at run time to the CPU's
// best kernel): On-Demand reads the common line (scalar values, and one level of "args") straight
// from the chunk's text; a line with nested values is read again by the DOM parser, so both accept
// and reject exactly the lines the DOM parser does. Accepts DataCrumbs' lines and
// DFTracer's v1.0.x lines (numbers as JSON numbers or strings, hex-string hashes, the newer
// integer ph), and says why a line is not an event instead of guessing.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/parsed_chunk.h"

namespace dc::analyze {

struct line_fields;

class line_parser {
 public:
  enum class outcome { blank, record, problem };
  // The fast reader's memory of the key order: after known key i came known key guess[i] last,
  // and second_guess[i] before it (indexes of its table of known keys; 0: none).
  struct key_state {
    std::array<uint8_t, 32> guess{};
    std::array<uint8_t, 32> second_guess{};
    uint8_t previous = 0;
  };

  // Parses the line at [at, at + len) of chunk.text (the text has simdjson's padding after its
  // end) and appends a record or a problem (with line number `line`) to chunk.
  outcome parse(parsed_chunk& chunk, size_t at, size_t len, uint64_t line);

  // Parses every complete line of chunk.text; fills head, tail, counts; links the spans.
  void parse_chunk(parsed_chunk& chunk);

  // Points each record's args and texts into the chunk's vectors, once they stop growing.
  static void link_spans(parsed_chunk& chunk);

 private:
  enum class verdict { read, not_json, not_an_object, nested };
  // Both read the object line s into r and f (args into chunk); room: bytes readable from s.
  verdict read_fast(std::string_view s, size_t room, parsed_chunk& chunk, record& r, line_fields& f);
  verdict read_dom(std::string_view s, parsed_chunk& chunk, record& r, line_fields& f);
  // The record (or problem) a line read with verdict v gives; args and texts from the given
  // sizes on are the line's.
  outcome finish(parsed_chunk& chunk, verdict v, record& r, const line_fields& f, uint64_t line,
                 size_t args_before, size_t texts_before);
  // Lines [first, last) of lines_ (each one object, objects_ from first on) read as one document
  // stream, their outcomes in run_outcomes_; false, and the chunk as it was, when the stream's
  // documents are not the lines one for one (a line with more or less than one object, or not
  // JSON).
  bool parse_run(parsed_chunk& chunk, size_t first, size_t last);

  simdjson::ondemand::parser fast_;
  simdjson::ondemand::parser runs_;
  simdjson::dom::parser dom_;
  std::vector<std::pair<size_t, size_t>> lines_;  // the chunk's complete lines: start, length
  std::vector<std::string_view> objects_;         // the run's lines, as object_line gives them
  std::vector<outcome> run_outcomes_;
  key_state keys_;
};

// The line at (start, length) of text without surrounding blanks when it is one JSON object's
// braces and what is between them, else empty.
std::string_view object_line(std::string_view text, std::pair<size_t, size_t> line);

// A string that holds room for simdjson's padding after its contents.
void reserve_padding(std::string& text);

}  // namespace dc::analyze
