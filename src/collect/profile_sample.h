// One profile-mode counter of one interval: what a thread sent through the ring (a slot it
// evicted or flushed, bpf/profile.bpf.h) or what the kernel's counter map held.
#pragma once

extern "C" {
#include "counters.h"
}

namespace dc {

struct profile_sample {
  dc_profile_key key;
  dc_profile_counts counts;
};

}  // namespace dc
