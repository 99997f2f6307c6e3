// Whose request the signing service's worker (sign_worker.h) parses or signs next. A large
// request holds the worker for about a second (100,000 probes); served in arrival order, a user
// sending many would make every other user wait for all of them. Instead the next job is the
// waiting one whose uid used the worker least lately (its time halving every 10 s), the oldest of
// those first: a uid that asks little waits for the job under way, not for a queue of others'.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>

namespace dc {

class turn_ledger {
 public:
  using clock = std::chrono::steady_clock;

  // `uid`'s job took `used` of the worker, ending `now`.
  void charge(uint32_t uid, clock::duration used, clock::time_point now);
  // The index in `waiting` (the uids of the waiting jobs, oldest first; not empty) to run next.
  size_t next(std::span<const uint32_t> waiting, clock::time_point now) const;
  // Seconds of the worker `uid` used, as they count `now`.
  double used(uint32_t uid, clock::time_point now) const;
  size_t uids() const { return uses_.size(); }

 private:
  struct use {
    double seconds = 0;
    clock::time_point at;
  };
  std::map<uint32_t, use> uses_;
};

}  // namespace dc
