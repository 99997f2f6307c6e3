// Text written to a descriptor by a thread of its own, so the thread that decodes events never
// waits on a terminal, a pipe or a disk. The queue is bounded: when the reader is slower than
// the trace, whole chunks are dropped and counted (the trace itself is never held back), and a
// reader that went away (EPIPE) ends the output, not the tool.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"

namespace dc {

class async_output {
 public:
  static constexpr size_t max_queued_bytes = 64ull << 20;

  // Writes to fd (not closed here unless `owned`); `what` names it in errors ("stdout").
  async_output(int fd, std::string what, bool owned);
  ~async_output();
  async_output(const async_output&) = delete;
  async_output& operator=(const async_output&) = delete;

  // Queues a chunk (moved from); false when it was dropped because the queue is full.
  bool write(std::string&& chunk);
  // Writes everything queued and stops the thread; the first write error, if any.
  result<> finish();
  uint64_t dropped_bytes() const { return dropped_; }

 private:
  void write_loop();

  int fd_;
  std::string what_;
  bool owned_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool done_ = false;
  uint64_t dropped_ = 0;  // written by the producer only
  std::string error_;     // the writer's first error ("" for none), read after the join
  std::thread writer_;
};

}  // namespace dc
