// Profile mode's side of the run loop: sums the counts threads sent through the ring with the
// kernel's counter map (bpf/profile.bpf.h) once an interval has surely ended, and deletes them
// from the map, so each count is read exactly once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "collect/profile_sample.h"
#include "core/result.h"

namespace dc {

// The samples with every folded FS operation (dc_profile_key::folded_fs) split into its own
// counter, and counters of one key summed: what the decoder takes.
std::vector<profile_sample> split_folded(const std::vector<profile_sample>& samples);

class profile_reader {
 public:
  // Sends the counts threads still coalesce in their own state for intervals before the given
  // one through the ring (a thread idle since has nothing else that would).
  using flush_fn = std::function<result<>(uint64_t below_epoch)>;

  // How the map is read: in batches where the kernel has them (5.6 and later), else key by key.
  enum class reading { batches, key_by_key };

  profile_reader(int map_fd, uint64_t interval_ns, flush_fn flush = nullptr, reading how = reading::batches)
      : fd_(map_fd), interval_ns_(interval_ns), flush_(std::move(flush)), how_(how)
  {
  }

  // Takes the counters of every interval whose counts are all in: it ended at least a whole
  // interval before `decoded_until_ns` (CLOCK_MONOTONIC), the time up to which every ring record
  // has been decoded, so a program that read the clock in it has finished its update and the
  // file names it sent before have been read (a counter never precedes its file's name), and
  // the threads' flush of it finished before then too, so what the flush sent was decoded. The
  // flush of the intervals that ended now is asked here; its counts are read by a later take.
  // `arrived`: the ring's counts decoded since the last take (decoder::take_profile_records).
  // With `all`, every counter: the programs are detached and the threads flushed
  // (session::detach) before the ring's last read.
  std::vector<profile_sample> take(uint64_t decoded_until_ns, bool all, std::vector<profile_sample> arrived);
  // The last interval whose counters have been taken; nullopt while none has.
  std::optional<uint64_t> read_through() const { return read_through_; }
  uint64_t interval_ns() const { return interval_ns_; }
  // The first failure to flush the threads' counters (their counts then reach a later sample)
  // or to read the map.
  const result<>& flush_status() const { return flush_status_; }

 private:
  // The last interval every count of which has reached the map or the decoder by
  // `decoded_until_ns`, after asking the threads' flush of the intervals that ended since.
  std::optional<uint64_t> complete_through(uint64_t decoded_until_ns);
  // The ended counters read (and deleted) in batches; nullopt when this kernel has no batch
  // operations on hash maps.
  std::optional<std::vector<profile_sample>> take_in_batches(
      bool all, const std::function<bool(const dc_profile_key&)>& ended);

  int fd_;
  uint64_t interval_ns_;
  flush_fn flush_;
  reading how_;
  result<> flush_status_;
  struct flush_asked {
    uint64_t below_epoch;
    uint64_t done_ns;  // every record it sent was in the ring by then
  };
  std::deque<flush_asked> flushes_;
  std::optional<uint64_t> read_through_;
  std::vector<profile_sample> pending_;  // the ring's counts of intervals not read yet
};

}  // namespace dc
