// `datacrumbs run --print`: one aligned line per event, as the events are decoded, with the I/O
// amplification tracer's columns (TIME SYSTEM EVENT_TYPE PID TID COMM SIZE OFFSET LAT(us) RET)
// plus the layer and the file. Lines are formatted on the decoding thread into chunks that an
// async_output writes; the trace is written all the same.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "sink/async_output.h"
#include "sink/event_sink.h"

namespace dc {

class event_printer : public event_sink {
 public:
  static constexpr size_t chunk_bytes = 64 << 10;

  // `layers`: the layers to print (categories, as the trace's "cat"), empty for all;
  // `label` names a process's storage system ("" for none), as the trace's process lines do.
  event_printer(std::unique_ptr<async_output> out, std::set<std::string, std::less<>> layers,
                std::function<std::string(const process_info&)> label);

  void add(const trace_event& ev, const trace_names& names) override;
  void tick(std::chrono::steady_clock::time_point now, const trace_names& names) override;
  void finish(const trace_names& names) override;
  // Its storage-system label is a cache: recomputed if the pid is named again.
  void forget_process(uint32_t pid, process_key) override { systems_.erase(pid); }

  // After finish(): the output's first error, and how many lines were dropped (a reader slower
  // than the trace).
  result<> status() const { return status_; }
  uint64_t lines_printed() const { return printed_; }
  uint64_t lines_dropped() const { return dropped_; }

 private:
  const std::string& system_of(const process_info* p);
  void hand_over();

  std::unique_ptr<async_output> out_;
  std::set<std::string, std::less<>> layers_;
  std::function<std::string(const process_info&)> label_;
  std::unordered_map<uint32_t, std::pair<std::string, std::string>> systems_;  // pid -> (comm, label)
  std::string chunk_;
  uint64_t chunk_lines_ = 0;
  uint64_t printed_ = 0;
  uint64_t dropped_ = 0;
  result<> status_;
};

// The header line, and one event's line appended to `out` (what add() prints).
std::string event_print_header();
void append_event_line(std::string& out, const trace_event& ev, const trace_names& names,
                       std::string_view system);

}  // namespace dc
