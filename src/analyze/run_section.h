// The report's "run" section: hosts, processes (rank and size when the trace says), threads,
// time span, event counts, and the losses the traces' own end records state.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "analyze/lookup_index.h"
#include "analyze/record.h"
#include "analyze/record_values.h"
#include "core/result.h"

namespace dc::analyze {

struct process_facts {
  std::string name;       // process_name (the command's short name)
  uint64_t cmd_hash = 0;  // SH hash of the command line
  int64_t ppid = -1;
  int64_t rank = -1;   // from PR rank or process_name "Rank N"
  int64_t size = -1;   // from PR size
  std::string system;  // storage-system label DataCrumbs gave it
  std::set<uint64_t> tids;
  uint64_t last_tid = UINT64_MAX;  // the last tid added (most lines repeat it)
  uint64_t events = 0;
  uint64_t bytes = 0;
  int64_t start_us = INT64_MAX;
  int64_t end_us = INT64_MIN;
};

// Processes are (host hash, pid): pids repeat across hosts.
using process_key = std::pair<uint64_t, uint64_t>;

struct run_section {
  std::map<process_key, process_facts> processes;
  std::set<uint64_t> hosts;
  uint64_t events = 0;    // spans of traced layers
  uint64_t counters = 0;  // "C" samples
  uint64_t metadata = 0;  // "M" lines
  uint64_t instants = 0;
  uint64_t io_time_us = 0;  // top-level calls (placed on a thread, no parent)
  int64_t start_us = INT64_MAX;
  int64_t end_us = INT64_MIN;
  std::map<std::string, uint64_t> lost;
  lookup_index<process_key, process_facts*, key_hash> index;

  void add(const record& r) { add(r, facts_of(r)); }
  void add(const record& r, const call_facts& c);  // c: facts_of(r)
  void merge(const run_section& other);
  nlohmann::json partial() const;
  static dc::result<run_section> from_partial(const nlohmann::json& j);
  nlohmann::json report(const name_map& names) const;

  double wall_s() const { return end_us > start_us ? (end_us - start_us) / 1e6 : 0.0; }
};

// "host:pid (rank N)": how the heat map and text name a process.
std::string process_label(const process_key& key, const process_facts* facts, const name_map& names);
std::string host_name(uint64_t hhash, const name_map& names);

}  // namespace dc::analyze
