// Walking a BPF map's keys from user space: one loop for the layers and readers that count or
// read what a map holds. Header-only, for the modules that link libbpf.
#pragma once

#include <bpf/bpf.h>

namespace dc {

// Calls fn(key) for each key of map `fd` (none when fd < 0), in the kernel's order. Deleting the
// key the walk stands on restarts it (the kernel's rule for hash maps): collect keys first and
// delete after, as the profile reader does.
template <class Key, class Fn>
void for_each_map_key(int fd, Fn&& fn)
{
  Key key{}, next{};
  const Key* prev = nullptr;
  while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
    fn(next);
    key = next;
    prev = &key;
  }
}

}  // namespace dc
