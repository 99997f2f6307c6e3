// The report's "layers" (per layer and operation: count, bytes, time, rates, latency quantiles)
// and "layer_time" (per layer: time, time not overlapped by the calls nested inside it, time
// of its calls not inside a call of the layer above).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "core/latency_sketch.h"
#include "analyze/lookup_index.h"
#include "analyze/record.h"
#include "analyze/record_values.h"
#include "core/result.h"

namespace dc::analyze {

struct op_totals {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t time_us = 0;
  latency_sketch latency;  // spans only: a counter sample has no single latency
};

struct layer_times {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t time_us = 0;
  uint64_t nested_us = 0;     // time of calls whose parent is a call of this layer
  uint64_t top_level_us = 0;  // time of calls placed on a thread with no parent
};

struct layers_section {
  std::map<std::string, std::map<std::string, op_totals, std::less<>>, std::less<>> ops;
  std::map<std::string, layer_times, std::less<>> layers;
  uint64_t orphan_us = 0;  // time of nested calls whose parent never appeared in their file

  void add(const record& r) { add(r, facts_of(r)); }
  void add(const record& r, const call_facts& c);  // c: facts_of(r)
  std::pair<op_totals*, layer_times*> find_or_add(std::string_view cat, std::string_view name);
  void end_file();  // children still waiting for a parent become orphans
  void merge(const layers_section& other);
  nlohmann::json partial() const;
  static dc::result<layers_section> from_partial(const nlohmann::json& j);
  // {"layers": [...], "layer_time": [...]}; rates over wall_s (null when 0).
  nlohmann::json report(const name_map& names, double wall_s) const;

  // (pid, parent id) -> time of its children seen so far, for children written before their
  // parent (as the kernel sends them, and DFTracer writes them).
  struct pid_id_hash {
    size_t operator()(const std::pair<uint64_t, int64_t>& k) const
    {
      return std::hash<uint64_t>()(k.first * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(k.second));
    }
  };
  std::unordered_map<std::pair<uint64_t, int64_t>, uint64_t, pid_id_hash> waiting;
  // For children written after their parent (DataCrumbs writes a parent first where viewers
  // need it: sink/thread_order.h): per (pid, tid), the last span at each level, by its id. A
  // parent's children follow it before the next span at its level.
  struct span_ref {
    int64_t id = -1;
    layer_times* layer = nullptr;
  };
  std::unordered_map<std::pair<uint64_t, int64_t>, std::vector<span_ref>, pid_id_hash> last_at_level;
  std::pair<uint64_t, int64_t> last_thread{0, -1};  // the thread last looked up, and its levels
  std::vector<span_ref>* last_levels = nullptr;
  // The latest children's parent, kept out of `waiting` (its parent is most often the next line,
  // and a map entry costs an allocation); never also a key of `waiting`.
  struct waiting_slot {
    std::pair<uint64_t, int64_t> parent{};
    uint64_t us = 0;
    bool used = false;
  } latest;
  lookup_index<std::pair<std::string_view, std::string_view>, std::pair<op_totals*, layer_times*>, key_hash>
      index;
};

}  // namespace dc::analyze
