// The user-space side of holds (bpf/task_record.bpf.h): a process that joins the traced set at
// fork, or by registering with the daemon, is stopped by the kernel side; this thread attaches
// its user-space probes and continues it, so not one of its calls is missed, and drops the
// probes of processes that are gone: those whose end it is told of, and, when such a record was
// lost to a full ring, those a sweep finds gone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/result.h"
#include "core/wakeable_wait.h"
#include "probe/uprobe_layer.h"

struct ring_buffer;

namespace dc {

class process_holder {
 public:
  // holds_fd: the ring of hold records; gone_unsaid: how many of its GONE records were lost so
  // far (read at every wake: one lookup of a per-CPU counter).
  static result<std::unique_ptr<process_holder>> start(int holds_fd, user_probes& probes,
                                                       std::function<uint64_t()> gone_unsaid);
  ~process_holder();

  // Handles every hold still waiting (each held process is continued), then stops the thread.
  void stop();
  // Processes whose probes could not be attached (they were continued all the same), or
  // failures to wait on the hold ring, and why the first one failed.
  uint64_t failures() const { return failures_.load(); }
  std::string first_failure() const;

 private:
  process_holder(user_probes& probes, std::function<uint64_t()> gone_unsaid)
      : probes_(probes), gone_unsaid_(std::move(gone_unsaid))
  {
  }
  static int on_record(void* ctx, void* data, size_t size);
  void loop();
  // Sweeps when GONE records were lost since the last look; returns how long to wait at most
  // before the next look.
  int sweep_if_ends_lost();
  // Counts a failure; the first one's message is kept.
  void note_failure(std::string what);

  user_probes& probes_;
  std::function<uint64_t()> gone_unsaid_;
  uint64_t unsaid_seen_ = 0;
  std::chrono::steady_clock::time_point sweep_until_{}, next_sweep_{};
  ring_buffer* ring_ = nullptr;
  std::optional<wakeable_wait> wait_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> failures_{0};
  mutable std::mutex mutex_;
  std::string first_failure_;
  std::thread thread_;
};

}  // namespace dc
