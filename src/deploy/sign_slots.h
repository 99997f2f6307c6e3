// Who gets a connection slot of the signing service (signing_service.cpp) when all are taken.
// Users share the slots by count: a new connection whose uid holds none, or holds at least two
// fewer than the uid holding the most, takes the place of one of that busiest uid's connections
// (its oldest still sending its request, else its oldest); otherwise the new one is refused.
// So no set of uids can keep another out: a uid holding nothing always gets a slot. A uid never
// displaces its own connections (it holds fewer than the uid it displaces), and between uids that
// hold any, each displacement narrows the gap (the new holder ends at most at the old one's
// count less one), so they cannot take one slot back and forth forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace dc {

// One open connection, in accept order (the oldest first).
struct slot_holder {
  std::optional<uint32_t> uid;  // SO_PEERCRED; none when the kernel did not say
  bool request_read = false;    // its whole request is in (being checked or answered)
};

struct slot_choice {
  std::optional<size_t> displace;  // the index of the connection to close; none: refuse
  size_t own = 0;                  // connections the new one's uid holds
  size_t most = 0;                 // connections the busiest uid holds
};

// For a new connection of `uid` when every slot is taken.
slot_choice choose_slot(std::span<const slot_holder> held, std::optional<uint32_t> uid);

}  // namespace dc
