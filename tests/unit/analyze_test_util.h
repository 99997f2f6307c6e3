// Helpers for the analyze tests: trace files written as chosen gzip members, and a reader run
// that collects what the accumulators would see.
#pragma once

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/trace_reader.h"

namespace dc::test {

// A temporary directory removed at the end of the test.
struct temp_dir {
  std::string path;
  temp_dir();
  ~temp_dir();
  std::string file(const std::string& name) const { return path + "/" + name; }
};

// Writes `members` as consecutive gzip members with libdeflate at `level` (0 stores the text
// uncompressed).
void write_members(const std::string& path, const std::vector<std::string>& members, int level = 4);
void write_text(const std::string& path, const std::string& text);

// One line of ours: a POSIX span.
std::string span_line(const std::string& name, const std::string& cat, int pid, long ts, long dur, long ret,
                      const std::string& extra = "");

struct read_result {
  analyze::analysis all;
  std::vector<std::string> names;  // each record's name, in delivery order
};

read_result read_all(const std::vector<std::string>& paths, unsigned threads = 2);

}  // namespace dc::test
