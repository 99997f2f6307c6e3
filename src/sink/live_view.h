// The live view (`datacrumbs run --live`, `datacrumbs live RUN-ID`): once a second, what the
// last second's events did (top processes, files and layers by bytes and operations), and the
// run so far (events, events/s, lost, per-layer totals, the page cache's hit ratio, device over
// application bytes). A frame counts the events decoded in its interval (the kernel hands them
// over within ~200 ms of their end). Rendered as text here, or kept as JSON (the daemon's
// snapshot file, docs/live.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "sink/event_sink.h"

namespace dc {

struct live_row {
  std::string name;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t ops = 0;
};

struct live_frame {
  uint64_t seq = 0;       // 1, 2, ... per run
  uint64_t time_us = 0;   // epoch, when the frame was made
  double elapsed_s = 0;   // since the live view began
  double interval_s = 0;  // what the interval rows cover
  uint64_t events = 0;    // events (spans) so far
  uint64_t interval_events = 0;
  uint64_t lost = 0;          // events the kernel could not deliver, so far
  bool cache_known = false;   // the PAGECACHE layer is live
  uint64_t pages_read = 0;    // pages the application's reads touched, so far
  uint64_t cache_misses = 0;  // pages brought into the cache for it (cachestat's misses), so far
  // The last interval, most bytes first: processes and files with the application's (POSIX)
  // bytes and every layer's operations, layers with their own.
  std::vector<live_row> processes, files, layers;
  std::vector<live_row> totals;  // per layer, so far
  bool ended = false;            // the run's last frame
};

// What only the kernel side knows, read by the pipeline when a frame is made.
struct live_kernel_facts {
  uint64_t lost = 0;
  std::optional<uint64_t> cache_misses;  // none: no PAGECACHE layer
};

class live_view : public event_sink {
 public:
  static constexpr std::chrono::seconds interval{1};
  static constexpr size_t top_rows = 5;

  live_view(std::function<live_kernel_facts()> facts, std::function<void(const live_frame&)> show);

  void add(const trace_event& ev, const trace_names& names) override;
  void tick(std::chrono::steady_clock::time_point now, const trace_names& names) override;
  void finish(const trace_names& names) override;

 private:
  struct tally {
    uint64_t read_bytes = 0, write_bytes = 0, ops = 0;
  };
  static void add_to(tally& t, const trace_event& ev, bool bytes);
  static void add_bytes(tally& t, io_dir dir, uint64_t bytes);  // dir: read or write
  void add_file(uint64_t fhash, io_dir dir, const trace_event& ev, bool bytes);
  void show(std::chrono::steady_clock::time_point now, const trace_names& names, bool ended);

  std::function<live_kernel_facts()> facts_;
  std::function<void(const live_frame&)> show_;
  std::unordered_map<process_key, tally> processes_;  // this interval
  std::unordered_map<uint64_t, tally> files_;
  std::map<std::string, tally, std::less<>> layers_;
  std::map<std::string, tally, std::less<>> totals_;  // so far
  uint64_t events_ = 0, interval_events_ = 0, pages_read_ = 0, seq_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = started_;
};

// Device bytes over application bytes so far (BLOCK over POSIX), as the summary's amplification;
// none where the application moved nothing that way.
std::optional<double> live_amplification(const live_frame& f, bool read);
// Hits over hits + misses so far, cachestat's way; none when unknown or nothing was read.
std::optional<double> live_hit_ratio(const live_frame& f);

// One frame as a block of plain text (what `--live` prints; a terminal gets it redrawn in place).
std::string live_text(const live_frame& f);
nlohmann::json live_frame_json(const live_frame& f);
result<live_frame> live_frame_from_json(const nlohmann::json& j);

}  // namespace dc
