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
#include "sink/pfw_writer.h"

namespace dc {

struct op_stats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t time_us = 0;  // sum of the trace's dur values
};

// layer ("POSIX") -> operation ("read") -> totals
using layer_ops = std::map<std::string, std::map<std::string, op_stats>, std::less<>>;

class summary_builder {
 public:
  void add(const trace_event& ev);
  const layer_ops& totals() const { return totals_; }
  const std::map<uint32_t, layer_ops>& per_process() const { return per_process_; }

 private:
  layer_ops totals_;
  std::map<uint32_t, layer_ops> per_process_;
};

struct run_facts {
  std::vector<std::string> command;
  int exit_code = 0;
  uint64_t events_written = 0;
  loss_counts lost;
  std::string trace_path;
};

nlohmann::json summary_json(const summary_builder& s, const process_table& processes, const run_facts& run);
std::string summary_text(const summary_builder& s, const process_table& processes, const run_facts& run);

}  // namespace dc
