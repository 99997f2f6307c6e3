// The applying side of reading one trace file: joins lines cut between chunks, numbers lines,
// reports skipped ones, fills a line's missing host from its file's HH line, and streams with
// zlib the gzip members that could not be inflated whole (a cut member is read up to its last
// complete line).
#pragma once

#include <cstdint>
#include <string>

#include "analyze/inputs_section.h"
#include "analyze/line_parser.h"
#include "analyze/parsed_chunk.h"
#include "analyze/trace_reader.h"

namespace dc::analyze {

class file_reader {
 public:
  enum class stream_status { complete, cut, corrupt };
  struct stream_result {
    stream_status status = stream_status::complete;
    uint64_t end = 0;       // file offset after the member (complete), or where it failed
    uint64_t produced = 0;  // bytes of text it gave
    uint64_t newlines = 0;  // '\n' in that text (counted when the text is not used)
  };

  file_reader(std::string path, int fd, inputs_section& inputs, record_sink& sink)
      : path_(std::move(path)), fd_(fd), inputs_(inputs), sink_(sink)
  {
  }

  void apply(parsed_chunk& chunk);
  // Inflates the gzip member at `offset` as a stream, applying its text as it comes (with
  // use_text false: only says how the member ends).
  stream_result stream_member(uint64_t offset, bool use_text = true);
  // The end of the text (cut: the end of a member that stopped short): the last unterminated
  // line is read, or counted as truncated when cut (then: true).
  bool finish(bool cut);

  uint64_t lines() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  void deliver(record& r);
  void parse_single(std::string_view text);
  void report(uint64_t line, const line_problem& p);

  std::string path_;
  int fd_;
  inputs_section& inputs_;
  record_sink& sink_;
  line_parser parser_;
  uint64_t line_ = 0;    // '\n' seen so far: the 0-based number of the current line
  std::string pending_;  // an unterminated line carried into the next chunk
  uint64_t last_hh_ = 0;
};

}  // namespace dc::analyze
