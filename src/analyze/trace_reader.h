// Reads traces: expands the inputs, cuts each file into chunks (gzip members or text blocks),
// inflates and parses chunks on worker threads, and hands each file's records to the sink in
// line order (parse in parallel, apply in order, on the calling thread).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyze/inputs_section.h"
#include "analyze/record.h"

namespace dc::analyze {

struct reader_options {
  unsigned threads = 0;   // 0: all cores
  bool progress = false;  // a progress bar on stderr (the caller checks it is a terminal)
};

struct record_sink {
  std::function<void(const record&)> add;
  std::function<void()> end_file;  // after each file's last record; may be empty
};

// Trace files named by PATHs: files as given, directories searched recursively for *.pfw and
// *.pfw.gz (in name order), globs expanded. Missing paths and empty directories are problems.
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths, inputs_section& inputs);

// Reads every file; problems and counts go to inputs. Never throws for bad input.
void read_traces(const std::vector<std::string>& files, const reader_options& options, inputs_section& inputs,
                 record_sink& sink);

}  // namespace dc::analyze
