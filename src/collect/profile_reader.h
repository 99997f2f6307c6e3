// Profile mode's side of the run loop: reads the kernel's per-interval counters (bpf/profile.bpf.h)
// once an interval has surely ended, and deletes them, so each counter is read exactly once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/result.h"

extern "C" {
#include "counters.h"
}

namespace dc {

struct profile_sample {
  dc_profile_key key;
  dc_profile_counts counts;
};

// The samples with every folded FS operation (dc_profile_key::folded_fs) split into its own
// counter, and counters of one key summed: what the decoder takes.
std::vector<profile_sample> split_folded(const std::vector<profile_sample>& samples);

class profile_reader {
 public:
  // Moves the counters threads still coalesce in their own state for intervals before the
  // given one into the map (a thread idle since has nothing else that would); all of them with
  // UINT64_MAX - 1.
  using flush_fn = std::function<result<>(uint64_t below_epoch)>;

  // How the map is read: in batches where the kernel has them (5.6 and later), else key by key.
  enum class reading { batches, key_by_key };

  profile_reader(int map_fd, uint64_t interval_ns, flush_fn flush = nullptr, reading how = reading::batches)
      : fd_(map_fd), interval_ns_(interval_ns), flush_(std::move(flush)), how_(how)
  {
  }

  // Takes the counters of every interval that ended at least a whole interval before
  // `decoded_until_ns` (CLOCK_MONOTONIC), the time up to which every ring record has been
  // decoded: a program that read the clock in such an interval has finished its update, and
  // the file names it sent before have been read, so a counter never precedes its file's name.
  // With `all`, every counter (once the programs are detached).
  // The threads' counters of those intervals are flushed to the map first.
  std::vector<profile_sample> take(uint64_t decoded_until_ns, bool all);
  // The last interval whose counters take(decoded_until_ns, false) reads; nullopt while none has
  // ended a whole interval before.
  std::optional<uint64_t> read_through(uint64_t decoded_until_ns) const
  {
    uint64_t now = decoded_until_ns / interval_ns_;
    return now >= 2 ? std::optional<uint64_t>(now - 2) : std::nullopt;
  }
  uint64_t interval_ns() const { return interval_ns_; }
  // The first failure to flush the threads' counters (their counts then reach a later sample)
  // or to read the map.
  const result<>& flush_status() const { return flush_status_; }

 private:
  // The ended counters read (and deleted) in batches; nullopt when this kernel has no batch
  // operations on hash maps.
  std::optional<std::vector<profile_sample>> take_in_batches(
      bool all, const std::function<bool(const dc_profile_key&)>& ended);

  int fd_;
  uint64_t interval_ns_;
  flush_fn flush_;
  reading how_;
  result<> flush_status_;
};

}  // namespace dc
