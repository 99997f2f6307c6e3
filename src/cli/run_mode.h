// `datacrumbs run`: trace a command tree from its exec to its exit.
#pragma once

#include <string>
#include <vector>

#include "collect/decoder.h"
#include "core/result.h"

namespace dc {

struct run_options {
  std::string trace_path;    // empty: a default name in the current directory
  std::string summary_path;  // empty: no JSON summary
  std::vector<std::string> command;
  uint64_t ring_bytes = 64ull << 20;
  uint64_t hold_ring_bytes = 0;  // DATACRUMBS_HOLD_RING_KB (a test and tuning knob); 0: 64 KiB
  bool verbose = false;
  std::vector<std::string> layers;         // empty: as the config says
  std::string config_path;                 // empty: the shipped default.yaml
  std::vector<std::string> systems;        // LABEL=REGEX rules naming storage systems
  std::string mode;                        // trace | profile; empty: as the config says
  uint64_t interval_ms = 0;                // profile mode's interval; 0: as the config says (or 1000)
  std::vector<std::string> snapshot_dirs;  // snapshotted (paths, sizes, mtimes) at start and end
  bool no_index = false;                   // skip TRACE.zindex (sink/trace_index.h)
  bool print = false;                      // one line per event (sink/event_print.h)
  std::vector<std::string> print_filter;   // --print only these layers; empty: all
  std::string print_file;                  // --print to this file; empty: stdout
  bool live = false;                       // the live view on stdout (sink/live_view.h)
  uint64_t process_detail = default_process_detail;  // exited processes the summary keeps in detail
};

// Returns the exit code the tool should exit with: the command's, as a shell reports it.
result<int> run_traced(const run_options& options);

}  // namespace dc
