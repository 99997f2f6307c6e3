/* Profile mode, shared by every layer: each event is added to a counter of its process, layer,
 * operation and file for the interval it ended in, instead of going to the ring as a record.
 * Included by common.bpf.h, after thread_state.bpf.h.
 *
 * Events a thread causes itself (its system calls, the FS operations they end, its probed
 * user-space calls) are coalesced in the thread's own state: consecutive events with the same key
 * (same op, file and interval: the common case) add to one of DC_PROFILE_SLOTS slots, with plain
 * adds on memory only this thread writes. A slot evicted for a new key, the thread's exit, and the
 * interval-end flush (dc_profile_flush_thread, run by user space over every thread before it reads
 * an interval, and once more when the programs are detached) send the slot's counts through the
 * ring (dc_profile_send), and user space sums them per key (collect/profile_reader.h): a record
 * written in order, where a shared hash cost a random access into its buckets and a new element
 * whenever keys churn (many files: 2.3-2.4x untraced against trace mode's 1.6-2x,
 * docs/performance.md). Events other contexts end (block completions, network, faults and FS
 * operations another thread closed) are added to the shared map dc_profile, which user space reads
 * and deletes by interval. A slot's epoch is its claim word: the owner and the flusher take a
 * slot from its epoch to DC_SLOT_BUSY with a compare-and-swap before sending its counts, so no
 * count is sent twice or lost. The owner adds to a slot of the interval it is in; the flusher
 * takes only slots at least two intervals old: a program that read the clock in such an interval
 * has long finished its update. A buffered read or write counts in its system call's slot (the
 * key's folded_fs: same time, bytes and file), which user space splits into the two counters: one
 * slot update a call, not two. */
#ifndef DATACRUMBS_PROFILE_BPF_H
#define DATACRUMBS_PROFILE_BPF_H

/* The interval length; 0 means trace mode (one record per event). Set by user space. */
const volatile __u64 dc_profile_interval_ns = 0;

/* The flush below this epoch: set by user space before it runs dc_process_profile_flush. */
__u64 dc_profile_flush_below = 0;

#define DC_SLOT_EMPTY (~0ULL)
#define DC_SLOT_BUSY (~0ULL - 1)

/* The counts of events other contexts end. One hash, not a per-CPU one: a new key of a per-CPU
 * hash allocates its values from the kernel's per-CPU allocator, ~35 us a key where keys churn,
 * and takes a value per possible CPU (4 KiB a key on a 128-CPU node); atomic adds instead. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 1); /* sized by user space in profile mode */
  __type(key, struct dc_profile_key);
  __type(value, struct dc_profile_counts);
} dc_profile SEC(".maps");

static __always_inline int dc_profiling(void)
{
  return dc_profile_interval_ns != 0;
}

/* Adds counts to the shared map. Atomic adds: a block completion in an interrupt can land on a
 * counter another completion on the same CPU is updating. A new key is inserted with the counts
 * themselves (one map operation less than inserting zeros to add to); another CPU that inserted
 * it first (-EEXIST) is added to. */
static __always_inline void dc_profile_merge(const struct dc_profile_key* key,
                                             const struct dc_profile_counts* add)
{
  struct dc_profile_counts* c = bpf_map_lookup_elem(&dc_profile, key);
  if (!c) {
    long err = bpf_map_update_elem(&dc_profile, key, add, BPF_NOEXIST);
    if (!err)
      return;
    c = err == -DC_EEXIST ? bpf_map_lookup_elem(&dc_profile, key) : NULL;
    if (!c) {
      dc_count_loss_n(DC_LOSS_PROFILE_FULL, add->count);
      return;
    }
  }
  __sync_fetch_and_add(&c->count, add->count);
  __sync_fetch_and_add(&c->time_ns, add->time_ns);
  __sync_fetch_and_add(&c->bytes, add->bytes);
  if (add->pages)
    __sync_fetch_and_add(&c->pages, add->pages);
}

/* Sends a thread's coalesced counts to user space through the ring, which sums them per key
 * (collect/profile_reader.h): a slot evicted for a new key costs a ring record written in order,
 * where a random access into the shared map's buckets and a new element cost cache misses
 * (an open/close storm over many files: a new key nearly every call). */
static __always_inline void dc_profile_send(const struct dc_profile_key* key,
                                            const struct dc_profile_counts* c)
{
  struct dc_profile_record* r = bpf_ringbuf_reserve(&dc_events, sizeof(*r), 0);
  if (!r) {
    dc_count_loss_n(DC_LOSS_RING_FULL, c->count);
    return;
  }
  r->hdr.kind = DC_REC_PROFILE;
  r->hdr.tgid = key->tgid;
  r->hdr.tid = 0;
  r->hdr.reserved = 0;
  r->hdr.ts_ns = 0;
  r->key = *key;
  r->counts = *c;
  bpf_ringbuf_submit(r, dc_submit_flags());
}

/* `file2`: for a call that moved data between two files, the file it wrote (`file`: the one it
 * read); one counter per pair, so a copy is one call, as in trace mode. */
static __always_inline void dc_profile_key_of(struct dc_profile_key* key, __u32 tgid, __u32 layer, __u32 op,
                                              const struct dc_file_ref* file, const struct dc_file_ref* file2,
                                              __u64 epoch)
{
  key->epoch = epoch;
  key->tgid = tgid;
  key->layer = layer;
  key->op = op;
  key->folded_fs = 0;
  if (file) {
    key->file = *file;
  } else {
    key->file.ino = 0;
    key->file.dev = 0;
    key->file.mode = 0;
  }
  if (file2) {
    key->file2 = *file2;
  } else {
    key->file2.ino = 0;
    key->file2.dev = 0;
    key->file2.mode = 0;
  }
}

/* Counts one event that ended at `end_ns`, straight into the shared map (events of other
 * threads: block completions, network, faults closed by another thread). */
static __always_inline void dc_profile_add(__u32 tgid, __u32 layer, __u32 op, const struct dc_file_ref* file,
                                           __u64 end_ns, __u64 dur_ns, __u64 bytes, __u64 pages)
{
  struct dc_profile_key key;
  dc_profile_key_of(&key, tgid, layer, op, file, NULL, end_ns / dc_profile_interval_ns);
  struct dc_profile_counts add = {.count = 1, .time_ns = dur_ns, .bytes = bytes, .pages = pages};
  dc_profile_merge(&key, &add);
}

/* Sends slot s's counts if its epoch is still `epoch` (claimed from it), leaving it
 * busy for the caller to refill (`refill`) or empty. Returns whether it claimed the slot. */
static __always_inline int dc_profile_slot_flush(struct dc_profile_slot* s, __u64 epoch, int refill)
{
  /* A busy slot is someone else's until they put an epoch back. */
  if (epoch == DC_SLOT_BUSY || __sync_val_compare_and_swap(&s->key.epoch, epoch, DC_SLOT_BUSY) != epoch)
    return 0;
  if (epoch != DC_SLOT_EMPTY && s->counts.count) { /* an empty slot's counts were moved already */
    struct dc_profile_key key = s->key;
    key.epoch = epoch;
    dc_profile_send(&key, &s->counts);
  }
  if (!refill)
    __sync_lock_test_and_set(&s->key.epoch, DC_SLOT_EMPTY);
  return 1;
}

static __always_inline int dc_profile_key_equal(const struct dc_profile_key* a,
                                                const struct dc_profile_key* b)
{
  return a->epoch == b->epoch && a->file.ino == b->file.ino && a->file.dev == b->file.dev &&
         a->file.mode == b->file.mode && a->tgid == b->tgid && a->layer == b->layer && a->op == b->op &&
         a->folded_fs == b->folded_fs && a->file2.ino == b->file2.ino && a->file2.dev == b->file2.dev &&
         a->file2.mode == b->file2.mode;
}

/* The interval an event of thread `t` that ended at `end_ns` falls in: the last one's while it
 * lasts, so a division (tens of cycles) is paid once an interval, not once an event. */
static __always_inline __u64 dc_profile_epoch_mine(struct dc_thread* t, __u64 end_ns)
{
  /* A multiply, not a division; wraps (and divides) when end_ns is before the interval. */
  if (end_ns - t->prof_epoch * dc_profile_interval_ns < dc_profile_interval_ns)
    return t->prof_epoch;
  t->prof_epoch = end_ns / dc_profile_interval_ns;
  return t->prof_epoch;
}

static __always_inline void dc_profile_slot_add(struct dc_profile_slot* s, __u64 dur_ns, __u64 bytes,
                                                __u64 pages)
{
  s->counts.count++;
  s->counts.time_ns += dur_ns;
  s->counts.bytes += bytes;
  s->counts.pages += pages;
}

/* Counts one event of the current thread `t`, under `key` (dc_profile_key_of with
 * dc_profile_epoch_mine), in its slots (see the top of this file): the last event's first. */
static __always_inline void dc_profile_count_mine(struct dc_thread* t, struct dc_profile_key* key,
                                                  __u64 dur_ns, __u64 bytes, __u64 pages)
{
  struct dc_profile_slot* last = &t->prof[t->prof_hit & (DC_PROFILE_SLOTS - 1)];
  if (dc_profile_key_equal(&last->key, key)) {
    dc_profile_slot_add(last, dur_ns, bytes, pages);
    return;
  }
  for (int i = 0; i < DC_PROFILE_SLOTS; i++) {
    struct dc_profile_slot* s = &t->prof[i];
    if (dc_profile_key_equal(&s->key, key)) {
      t->prof_hit = i;
      dc_profile_slot_add(s, dur_ns, bytes, pages);
      return;
    }
  }
  /* A new key: it takes the next slot in turn, whose counts are sent first. */
  t->prof_hit = t->prof_next;
  struct dc_profile_slot* s = &t->prof[t->prof_next & (DC_PROFILE_SLOTS - 1)];
  t->prof_next++;
  if (!dc_profile_slot_flush(s, s->key.epoch, 1)) {
    /* The flusher has it right now: this one event goes out on its own. */
    struct dc_profile_counts add = {.count = 1, .time_ns = dur_ns, .bytes = bytes, .pages = pages};
    dc_profile_send(key, &add);
    return;
  }
  s->counts.count = 1;
  s->counts.time_ns = dur_ns;
  s->counts.bytes = bytes;
  s->counts.pages = pages;
  __u64 epoch = key->epoch;
  struct dc_profile_key k = *key;
  k.epoch = DC_SLOT_BUSY; /* the claim word is written last, once the slot is whole */
  s->key = k;
  __sync_lock_test_and_set(&s->key.epoch, epoch);
}

/* Sends a thread's slots below epoch `below`: the interval-end flush, and with
 * DC_SLOT_BUSY every slot (the thread's exit, the end of a run). */
static __always_inline void dc_profile_flush_thread(struct dc_thread* t, __u64 below)
{
  for (int i = 0; i < DC_PROFILE_SLOTS; i++) {
    struct dc_profile_slot* s = &t->prof[i];
    __u64 epoch = s->key.epoch;
    if (epoch < below)
      dc_profile_slot_flush(s, epoch, 0);
  }
}

static __always_inline void dc_profile_add_mine(struct dc_thread* t, __u32 tgid, __u32 layer, __u32 op,
                                                const struct dc_file_ref* file, __u64 end_ns, __u64 dur_ns,
                                                __u64 bytes, __u64 pages)
{
  struct dc_profile_key key;
  dc_profile_key_of(&key, tgid, layer, op, file, NULL, dc_profile_epoch_mine(t, end_ns));
  dc_profile_count_mine(t, &key, dur_ns, bytes, pages);
}

#endif
