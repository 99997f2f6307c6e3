/* Profile mode, shared by every layer: each event is added to a per-CPU counter of its process,
 * layer, operation and file for the interval it ended in, instead of going to the ring. The map
 * is shared like the ring (reuse_fd "dc_profile"); user space sizes it, and reads and deletes
 * the intervals that have ended. Included by common.bpf.h. */
#ifndef DATACRUMBS_PROFILE_BPF_H
#define DATACRUMBS_PROFILE_BPF_H

/* The interval length; 0 means trace mode (one record per event). Set by user space. */
const volatile __u64 dc_profile_interval_ns = 0;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 1); /* sized by user space in profile mode */
  __type(key, struct dc_profile_key);
  __type(value, struct dc_profile_counts);
} dc_profile SEC(".maps");

static __always_inline int dc_profiling(void)
{
  return dc_profile_interval_ns != 0;
}

/* Counts one event that ended at `end_ns`, on `file` and, for a call that moved data between two
 * files, `file2` (one counter per pair, so a copy is one call, as in trace mode). Atomic adds: a
 * block completion in an interrupt can land on a counter another completion on the same CPU is
 * updating. */
static __always_inline void dc_profile_add_pair(__u32 tgid, __u32 layer, __u32 op,
                                                const struct dc_file_ref* file,
                                                const struct dc_file_ref* file2, __u64 end_ns, __u64 dur_ns,
                                                __u64 bytes, __u64 pages)
{
  struct dc_profile_key key = {
      .epoch = end_ns / dc_profile_interval_ns,
      .tgid = tgid,
      .layer = layer,
      .op = op,
  };
  if (file)
    key.file = *file;
  if (file2)
    key.file2 = *file2;
  struct dc_profile_counts* c = bpf_map_lookup_elem(&dc_profile, &key);
  if (!c) {
    struct dc_profile_counts zero = {};
    bpf_map_update_elem(&dc_profile, &key, &zero, BPF_NOEXIST);
    c = bpf_map_lookup_elem(&dc_profile, &key);
    if (!c) {
      dc_count_loss(DC_LOSS_PROFILE_FULL);
      return;
    }
  }
  __sync_fetch_and_add(&c->count, 1);
  __sync_fetch_and_add(&c->time_ns, dur_ns);
  __sync_fetch_and_add(&c->bytes, bytes);
  if (pages)
    __sync_fetch_and_add(&c->pages, pages);
}

static __always_inline void dc_profile_add(__u32 tgid, __u32 layer, __u32 op, const struct dc_file_ref* file,
                                           __u64 end_ns, __u64 dur_ns, __u64 bytes, __u64 pages)
{
  dc_profile_add_pair(tgid, layer, op, file, NULL, end_ns, dur_ns, bytes, pages);
}

#endif
