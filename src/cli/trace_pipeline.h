// What every tracing mode (run, the daemon) shares once its probes are live: the decoder, the
// trace writer, the summary and the collector thread, and the orderly end of a trace (detach,
// drain every record, end-of-run counters, the end record, the summaries).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/collector.h"
#include "collect/decoder.h"
#include "collect/mapped_ring.h"
#include "core/result.h"
#include "probe/session.h"
#include "sink/async_output.h"
#include "sink/event_print.h"
#include "sink/live_view.h"
#include "sink/pfw_writer.h"
#include "sink/snapshots.h"
#include "sink/summary.h"
#include "sink/system_summary.h"

namespace dc {

// What is shown while the trace is written: --print's lines and the live view's frames.
struct live_views {
  std::unique_ptr<async_output> print;              // null: no --print
  std::set<std::string, std::less<>> print_layers;  // empty: every layer
  std::function<void(const live_frame&)> live;      // null: no live view
};

class trace_pipeline {
 public:
  // root_pid names the trace's host line; `rules` label storage systems; `snapshots` are taken
  // before the collector starts and (directories) after it stopped; the summary keeps the detail
  // of `process_detail` exited processes (decoder::keep_process_detail). `ring`: the session's
  // event ring mapped already (collect/mapped_ring.h), else mapped here.
  static result<std::unique_ptr<trace_pipeline>> start(session& probes, gzip_member_writer trace_file,
                                                       uint32_t root_pid, std::vector<system_rule> rules,
                                                       snapshot_plan snapshots = {}, live_views views = {},
                                                       size_t process_detail = default_process_detail,
                                                       std::unique_ptr<mapped_ring> ring = nullptr);
  ~trace_pipeline();

  decoder& dec() { return dec_; }
  // Detaches the probes, drains every record, writes the counters and the end record, and closes
  // the trace (with its line index, when the file was given one: gzip_member_writer::index_to).
  result<> finish();

  // After finish(): the facts of the run the writer knows (written, unwritten, lost).
  run_facts facts(std::vector<std::string> command, int exit_code, const std::string& trace_path,
                  uint64_t interval_ms) const;
  // After finish(): the JSON summary and the text one.
  nlohmann::json summary_json(const run_facts& facts) const;
  std::string summary_text(const run_facts& facts) const;
  // The trace file failed (the error names it): the command runs on, the trace is a prefix of
  // whole parts, and the summary counts what is not in it.
  const result<>& trace_status() const { return writer_.status(); }
  const loss_counts& lost() const { return lost_; }
  uint64_t malformed() const { return dec_.malformed(); }
  // --print's printer (null without --print): after finish(), its lines and its output's status.
  const event_printer* printer() const { return printer_.get(); }
  // Seconds from start() to the end of finish()'s drain: the run the summary's rates are over.
  double elapsed_s() const { return std::chrono::duration<double>(ended_ - started_).count(); }

 private:
  trace_pipeline(session& probes, gzip_member_writer trace_file, uint32_t root_pid,
                 std::vector<system_rule> rules);

  // What the live view needs from the kernel side: losses, and the page cache's misses so far.
  live_kernel_facts kernel_facts();

  session& probes_;
  std::vector<system_rule> rules_;
  uint32_t root_pid_;
  snapshot_plan snapshots_;
  process_snapshotter process_snapshots_;
  pfw_writer writer_;
  summary_builder summary_;
  decoder dec_;
  std::unique_ptr<event_printer> printer_;
  std::unique_ptr<live_view> live_;
  std::unique_ptr<collector> collector_;
  loss_counts lost_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point ended_ = started_;
};

}  // namespace dc
