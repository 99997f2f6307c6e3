// datacrumbs' command line: every subcommand's options, parsed and checked into plain values
// without running anything. main() runs what it says; the fuzz build parses argvs with it (no BPF
// here), so what is fuzzed is the parser users meet.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "core/names.h"

namespace dc {

struct run_options {
  std::string trace_path;    // empty: a default name in the current directory
  std::string summary_path;  // empty: no JSON summary
  std::vector<std::string> command;
  uint64_t ring_bytes = 0;       // --ring-mb; 0: by mode (run_mode.cpp, ring_bytes_for)
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
  unsigned keep_loaded_s = 120;  // the loaded object kept this long for the next run (probe/object_keeper.h)
};

struct daemon_options {
  std::string probe_file;
  std::string run_id;  // empty: the daemon's pid
  bool verbose = false;
  uint64_t hold_ring_bytes = 0;  // DATACRUMBS_HOLD_RING_KB (a test and tuning knob); 0: 64 KiB
};

struct live_options {
  std::string run_id;
  bool once = false;  // print the current frame and exit
};

struct analyze_options {
  std::vector<std::string> inputs;  // trace paths, or partials with merge
  bool merge = false;
  std::string json_path;
  std::string csv_dir;
  std::string html_path;
  std::string partial_path;
  uint64_t bin_ms = 0;  // 0: chosen from the run length
  unsigned threads = 0;
  int64_t clock_skew_us = -1;  // -1: analyze::default_clock_skew_us (traces only, not --merge)
  bool progress = true;        // when stderr is a terminal
};

struct explore_options {
  std::string target;  // a library name or a path
  std::string regex;   // whole-name filter; empty: everything
  bool kernel = false;
  bool usdt = false;  // the binary's USDT probes ("provider:name") instead of its functions
};

// What the command line asks for: one mode, and its options (the others' stay as they were).
struct command_line {
  enum class mode { daemon, run, live, layers, explore, analyze };
  mode which = mode::layers;
  daemon_options daemon;
  run_options run;
  live_options live;
  analyze_options analyze;
  explore_options explore;
  bool layers_verbose = false;
};

// Parses datacrumbs' argv (and the DATACRUMBS_HOLD_RING_KB knob). The command to run, or the
// exit code to leave with once what it printed is out: 0 after --help, 2 after one line on stderr
// naming what is wrong.
std::expected<command_line, int> parse_command_line(int argc, char** argv);

}  // namespace dc
