// The run loop behind the probes: one thread drains the ring in batches (it is woken on a timer
// or when the ring passes its fill mark, never per event, and never blocks on I/O); a second
// thread decodes, formats and compresses whole batches, and in profile mode takes the kernel's
// counters of each ended interval.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "collect/decoder.h"
#include "collect/heap_report.h"
#include "collect/profile_reader.h"
#include "collect/mapped_ring.h"
#include "collect/record_batch.h"
#include "collect/ring_recording.h"
#include "core/result.h"
#include "core/wakeable_wait.h"
#include "sink/pfw_writer.h"

namespace dc {

class collector {
 public:
  static constexpr int poll_interval_ms = 100;

  // Reads `ring` (its records come here from now on). `profile` (profile mode only) is read on
  // the formatting thread, in order with the ring.
  static result<std::unique_ptr<collector>> start(std::unique_ptr<mapped_ring> ring, decoder& dec,
                                                  pfw_writer* writer,
                                                  std::unique_ptr<profile_reader> profile = nullptr);
  ~collector();

  // Drains every record still in the ring, then stops both threads. Returns the first error the
  // sinks met, if any.
  result<> stop();
  // Why the ring recording (DATACRUMBS_RECORD_RING) stopped early, "" if it did not.
  const std::string& recording_trouble() const { return recorder_.trouble(); }

 private:
  collector(decoder& dec, pfw_writer* writer, std::unique_ptr<profile_reader> profile, ring_recorder recorder,
            heap_report heap)
      : decoder_(dec),
        writer_(writer),
        profile_(std::move(profile)),
        recorder_(std::move(recorder)),
        heap_(std::move(heap))
  {
    if (profile_)  // counters name their files intervals after the files were named
      decoder_.state().files.hold_for_counters();
  }
  static int on_record(void* ctx, void* data, size_t size);
  void consume_loop();
  void note_ring_error(std::string_view what, int err);
  void format_loop();
  void hand_over_batch();
  void recycle(record_batch&& batch);
  void take_counters(uint64_t decoded_until_ns, bool all);

  decoder& decoder_;
  pfw_writer* writer_;
  std::unique_ptr<profile_reader> profile_;
  ring_recorder recorder_;  // formatter side
  heap_report heap_;        // formatter side, at each trim
  // From the start: no interval has ended two intervals ago before then, and a take reads the
  // whole counter map (its buckets walked in the kernel), which a short run's end paid twice.
  std::chrono::steady_clock::time_point last_take_ = std::chrono::steady_clock::now();
  static constexpr std::chrono::seconds trim_interval{10};
  std::chrono::steady_clock::time_point last_trim_ = std::chrono::steady_clock::now();
  std::unique_ptr<mapped_ring> ring_;
  std::optional<wakeable_wait> wait_;  // on the ring; stop() cuts it short
  record_batch batch_;                 // consumer side

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<record_batch> queue_;
  // Formatted batches kept for the consumer to fill again; more than this many are unmapped.
  static constexpr size_t max_spare_batches = 2;
  std::vector<record_batch> spare_;
  uint64_t drained_ns_ = 0;  // every record submitted before this was in a handed-over batch
  bool consumer_done_ = false;
  std::atomic<bool> stopping_{false};
  result<> sink_status_;
  result<> ring_status_;  // the consumer's first ring error (read after it is joined)

  std::thread consumer_;
  std::thread formatter_;
};

}  // namespace dc
