#include "collect/profile_reader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

namespace dc {

std::vector<profile_sample> profile_reader::take(uint64_t decoded_until_ns, bool all)
{
  std::vector<profile_sample> out;
  uint64_t now_epoch = decoded_until_ns / interval_ns_;
  if (flush_ && (all || now_epoch >= 2)) {
    auto flushed = flush_(all ? UINT64_MAX - 1 : now_epoch - 1);
    if (!flushed && flush_status_)
      flush_status_ = flushed;
  }
  // Keys first, values and deletes after: deleting the key get_next_key stands on restarts it.
  std::vector<dc_profile_key> keys;
  dc_profile_key key{}, next{};
  const void* at = nullptr;
  while (bpf_map_get_next_key(fd_, at, &next) == 0) {
    if (all || next.epoch + 2 <= now_epoch)
      keys.push_back(next);
    key = next;
    at = &key;
  }
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0)
    return out;
  std::vector<dc_profile_counts> per_cpu(static_cast<size_t>(ncpu));
  for (const dc_profile_key& k : keys) {
    if (bpf_map_lookup_elem(fd_, &k, per_cpu.data()) != 0)
      continue;
    profile_sample s{k, {}};
    for (const dc_profile_counts& c : per_cpu) {
      s.counts.count += c.count;
      s.counts.time_ns += c.time_ns;
      s.counts.bytes += c.bytes;
      s.counts.pages += c.pages;
    }
    bpf_map_delete_elem(fd_, &k);
    out.push_back(s);
  }
  return out;
}

}  // namespace dc
