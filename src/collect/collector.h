// The run loop behind the probes: one thread drains the ring in batches (it is woken on a timer
// or when the ring passes its fill mark, never per event, and never blocks on I/O); a second
// thread decodes, formats and compresses whole batches.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/decoder.h"
#include "core/result.h"
#include "sink/pfw_writer.h"

struct ring_buffer;

namespace dc {

class collector {
 public:
  static constexpr int poll_interval_ms = 100;

  static result<std::unique_ptr<collector>> start(int ring_fd, decoder& dec, pfw_writer* writer);
  ~collector();

  // Drains every record still in the ring, then stops both threads. Returns the first error the
  // sinks met, if any.
  result<> stop();

 private:
  collector(decoder& dec, pfw_writer* writer) : decoder_(dec), writer_(writer) {}
  static int on_record(void* ctx, void* data, size_t size);
  void consume_loop();
  void format_loop();
  void hand_over_batch();

  decoder& decoder_;
  pfw_writer* writer_;
  ring_buffer* ring_ = nullptr;
  std::vector<char> batch_;  // consumer side: [u32 size][record][pad to 8] ...

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::vector<char>> queue_;
  bool consumer_done_ = false;
  std::atomic<bool> stopping_{false};
  result<> sink_status_;

  std::thread consumer_;
  std::thread formatter_;
};

}  // namespace dc
