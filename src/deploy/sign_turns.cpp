#include "deploy/sign_turns.h"

#include <cmath>

namespace dc {

namespace {

// Use halves every 10 s (the connection deadline): what a uid did a minute ago hardly counts.
constexpr double half_life_s = 10;
// Below this a uid's use is forgotten, so the ledger holds only uids that used the worker lately.
constexpr double forgotten_s = 1e-4;

double decayed(double seconds, std::chrono::steady_clock::duration since)
{
  return seconds * std::exp2(-std::chrono::duration<double>(since).count() / half_life_s);
}

}  // namespace

double turn_ledger::used(uint32_t uid, clock::time_point now) const
{
  auto it = uses_.find(uid);
  return it == uses_.end() ? 0 : decayed(it->second.seconds, now - it->second.at);
}

void turn_ledger::charge(uint32_t uid, clock::duration used_now, clock::time_point now)
{
  std::erase_if(uses_, [&](const auto& entry) { return used(entry.first, now) < forgotten_s; });
  double before = used(uid, now);
  uses_[uid] = {before + std::chrono::duration<double>(used_now).count(), now};
}

size_t turn_ledger::next(std::span<const uint32_t> waiting, clock::time_point now) const
{
  size_t best = 0;
  double least = used(waiting[0], now);
  for (size_t i = 1; i < waiting.size(); ++i) {
    double u = used(waiting[i], now);
    if (u < least) {  // strictly: among equals the oldest keeps its place
      least = u;
      best = i;
    }
  }
  return best;
}

}  // namespace dc
