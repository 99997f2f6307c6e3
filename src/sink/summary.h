// The run summary: per layer and operation, count, bytes and time, for the whole run and per
// process; rendered as JSON (--summary) and as a short table on stderr.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/names.h"
#include "sink/event_sums.h"
#include "sink/file_summary.h"
#include "sink/page_cache_summary.h"
#include "core/latency_sketch.h"
#include "sink/pfw_writer.h"

namespace dc {

struct op_stats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t time_us = 0;  // sum of the trace's dur values
  latency_sketch
      latency;  // device requests' durations: bounded, however long the run (core/latency_sketch.h)
};

// num / den as JSON, null when den is 0 (a ratio of nothing is not 0).
nlohmann::json ratio_json(uint64_t num, uint64_t den);

// layer ("POSIX") -> operation ("read") -> totals
using layer_ops = std::map<std::string, std::map<std::string, op_stats>, std::less<>>;

struct io_totals {
  layer_ops ops;
  std::map<std::string, layer_flow, std::less<>> flows;  // layer -> bytes each way
};

class summary_builder {
 public:
  summary_builder() = default;
  summary_builder(const summary_builder&) = delete;  // recent_ points into its own maps
  summary_builder& operator=(const summary_builder&) = delete;
  void add(const trace_event& ev);
  // Every read below first adds the events still summed (sink/event_sums.h): what is read is the
  // same either way, so it is const.
  const io_totals& totals() const { return settle(), totals_; }
  const std::map<process_key, io_totals>& per_process() const { return settle(), per_process_; }
  // Bytes the application moved (POSIX, both ways): what decides which processes stay in detail.
  uint64_t moved_bytes(process_key process) const;
  // Adds everything of process `from` to process `into` (a fold, core/names.h); forgets `from`.
  void fold(process_key from, process_key into);
  page_cache_tally& page_cache() { return settle(), page_cache_; }
  const page_cache_tally& page_cache() const { return settle(), page_cache_; }
  const file_tally& files() const { return settle(), files_; }

 private:
  // Mutable: a const read settles the sums into them first (settle).
  mutable io_totals totals_;
  mutable std::map<process_key, io_totals> per_process_;
  mutable page_cache_tally page_cache_;
  mutable file_tally files_;
  mutable event_sums sums_;
  void settle() const;
  void add_now(const trace_event& ev) const;
  // Where the last few (process, layer, operation)s of events were added: most events repeat
  // one of them, and looking them up in the maps by name was ~1,100 instructions an event.
  // Pointers into the maps' nodes, which stay where they are.
  struct recent_op {
    process_key key = 0;
    std::string category, name;
    op_stats* all = nullptr;
    op_stats* process = nullptr;
    io_totals* process_totals = nullptr;
    layer_flow* all_flow = nullptr;  // found when the op first moves data
    layer_flow* process_flow = nullptr;
  };
  mutable std::vector<recent_op> recent_;
  mutable size_t next_replaced_ = 0;
  // The last two ops found, tried first: a call and its folded FS part alternate.
  mutable size_t last_ = 0, before_last_ = 0;
  recent_op& recent(const trace_event& ev) const;
};

// The processes of a run, those folded by command included.
uint64_t processes_in_all(const process_table& processes);

// The bytes a layer moved in `t` (zero when it moved none).
layer_flow flow_of(const io_totals& t, std::string_view layer);

// Device bytes over application bytes, each way (the seed's R_AMP / W_AMP, in bytes);
// null where the application moved nothing that way.
nlohmann::json amplification_json(const io_totals& t);

struct run_facts {
  std::vector<std::string> command;
  int exit_code = 0;
  uint64_t events_written = 0;
  uint64_t counters_written = 0;  // profile mode: "ph":"C" samples
  loss_counts lost;
  std::string trace_path;
  uint64_t profile_interval_ms = 0;  // 0: trace mode
  double elapsed_s = 0;              // from the probes going live to the last record written
  uint64_t events_unwritten = 0;     // decoded (and summarised) but not in the trace: its file failed
  uint64_t counters_unwritten = 0;
};

nlohmann::json summary_json(const summary_builder& s, const process_table& processes, const name_table& names,
                            const run_facts& run);
std::string summary_text(const summary_builder& s, const process_table& processes, const run_facts& run);

}  // namespace dc
