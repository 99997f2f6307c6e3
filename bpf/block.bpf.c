/* The block layer (cat BLOCK): every request charged to a traced process, and to a file when
 * its pages belong to one. A request is charged when a traced thread submits it, or, for
 * writeback issued later by kernel workers, to the traced process that dirtied the file's pages.
 * Completion runs in interrupt context, so attribution is captured at submission. */
#include "common.bpf.h"

#define DC_PAGE_MAPPING_FLAGS 0x3UL /* anon / movable tag bits in page->mapping */

struct dc_block_owner {
  __u32 tgid;
  __u32 tid;
  __u32 cause;
  __u32 reserved;
  struct dc_file_ref file;
  struct dc_nesting nest;
};

/* What a request's BLOCK event says. Its sector, size, operation and device are taken at its
 * start and again at its issue (after any bio merged into it, and once accounting has named its
 * partition), so that a request whose completion ran no program can still be written. */
struct dc_block_request {
  struct dc_block_owner owner;
  __u64 start_ns;
  __u64 insert_ns;
  __u64 issue_ns;
  __u64 sector;
  __u32 bytes;
  __u32 dev;
  __u32 op;
  __u32 reserved;
};

/* Which traced process last dirtied pages of a file: (dev << 32 ^ ino) -> tgid. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64);
  __type(value, __u32);
} dc_block_dirtied_by SEC(".maps");

/* Requests in flight, first in a slot chosen by their address: a traced request takes its slot
 * when the slot is free (or holds a stale entry of its own address), with one compare-and-swap,
 * where the hash map below takes its bucket lock and allocates an element (~400 ns of
 * block_io_start's ~860, and its lookups and delete most of block_rq_complete's ~650, on a
 * direct read of a loop device: docs/performance.md). A request whose slot another one holds goes
 * to the hash map. Whoever ends a request (its completion, its merge) frees its slot. */
#define DC_BLOCK_SLOT_BITS 12
struct dc_block_slot {
  __u64 rq; /* struct request *, 0 when free */
  struct dc_block_request r;
};
static struct dc_block_slot dc_block_slots[1 << DC_BLOCK_SLOT_BITS]; /* .bss: not in the skeleton */

static __always_inline struct dc_block_slot* dc_slot_of(__u64 rq)
{
  __u64 index = (rq * 0x9E3779B97F4A7C15ULL) >> (64 - DC_BLOCK_SLOT_BITS); /* Fibonacci hashing */
  return &dc_block_slots[index & ((1 << DC_BLOCK_SLOT_BITS) - 1)];
}

/* Requests in flight whose slot was taken. Not an LRU: nothing is left in it for long (a
 * request's entry goes at its completion or merge, and is replaced when its preallocated address
 * starts another request), and an LRU's elements are all made when the map is (~35 ms of start-up
 * for 65,536). A request that finds it full is counted lost (no_state). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 65536);
  __type(key, __u64); /* struct request * */
  __type(value, struct dc_block_request);
} dc_block_requests SEC(".maps");

/* The traced request at address `key`, if it is one. The address is taken as a number
 * (dc_address_of): the verifier allows no arithmetic on a kernel pointer, and the slot is a
 * function of it. */
static __always_inline struct dc_block_request* dc_request_at(__u64 key)
{
  struct dc_block_slot* s = dc_slot_of(key);
  if (s->rq == key)
    return &s->r;
  return bpf_map_lookup_elem(&dc_block_requests, &key);
}

/* Its slot is freed, or else its entry in the hash map deleted. */
static __always_inline void dc_forget_request(__u64 key)
{
  struct dc_block_slot* s = dc_slot_of(key);
  if (s->rq == key)
    s->rq = 0; /* only the request's own end frees it: no other writer while it is held */
  else
    bpf_map_delete_elem(&dc_block_requests, &key);
}

static __always_inline void dc_block_emit(const struct dc_block_request* r, __u64 end_ns, int error);

/* A request held when its address starts another request ended without its completion or merge
 * running our program (a request is freed only after one of them fires): the kernel sometimes
 * does not run a tp_btf program for a completion, without counting a recursion miss
 * (docs/reliability.md). It is counted now, without its end: trace mode writes its event,
 * profile mode adds it to its counter with its bytes and no time, as one of the counter's
 * requests without an end (`pages`, struct dc_profile_counts). */
static __always_inline void dc_block_end_unseen(const struct dc_block_request* r)
{
  dc_count_loss(DC_LOSS_BLOCK_END_UNSEEN);
  if (dc_profiling())
    dc_profile_add(r->owner.tgid, DC_PROF_BLOCK, r->op, &r->owner.file, bpf_ktime_get_ns(), 0, r->bytes, 1);
  else
    dc_block_emit(r, 0, 0);
}

/* Keeps a traced request's state: in its slot when that is free or already its own (a stale
 * entry of a request that ended unseen at the same address), else in the hash map (where such
 * an entry is replaced too); a stale entry is written first. */
static __always_inline void dc_keep_request(__u64 key, const struct dc_block_request* r)
{
  struct dc_block_slot* s = dc_slot_of(key);
  __u64 held = s->rq;
  if (held == key)
    dc_block_end_unseen(&s->r);
  if (held == key || (held == 0 && __sync_val_compare_and_swap(&s->rq, 0, key) == 0)) {
    s->r = *r;
    return;
  }
  if (bpf_map_update_elem(&dc_block_requests, &key, r, BPF_NOEXIST) == 0)
    return;
  struct dc_block_request* stale = bpf_map_lookup_elem(&dc_block_requests, &key);
  if (!stale) {
    dc_count_loss(DC_LOSS_NO_STATE);
    return;
  }
  dc_block_end_unseen(stale);
  *stale = *r;
}

static __always_inline __u64 dc_file_key(const struct dc_file_ref* f)
{
  return ((__u64)f->dev << 32) ^ f->ino;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(dc_block_dirty, struct folio* folio, struct address_space* mapping)
{
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!mapping || !dc_is_traced(tgid))
    return 0;
  struct dc_file_ref f;
  dc_inode_ref(dc_plain(mapping)->host, &f);
  __u64 key = dc_file_key(&f);
  bpf_map_update_elem(&dc_block_dirtied_by, &key, &tgid, BPF_ANY);
  return 0;
}

/* The file a thread is doing direct I/O on (its pages are user memory, not the file's), in the
 * thread's state (thread_state.bpf.h), which its requests' start reads anyway. */
SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(dc_block_dio_begin, struct kiocb* iocb)
{
  struct dc_thread* t = dc_thread_of_traced(bpf_get_current_task_btf());
  if (t)
    dc_inode_ref(dc_plain(iocb)->ki_filp->f_inode, &t->dio_file);
  return 0;
}

/* A stacked device (loop, device mapper) hands the pages of its request to the device below;
 * that lower request is the upper one again, counted already on `home`, the device the pages'
 * file lives on. */
static __always_inline int dc_stacked(const struct dc_block_owner* o, __u32 home, struct block_device* part)
{
  return o->file.mode && part && part->bd_dev != home;
}

/* Who is behind a request, and which file its pages belong to: asked where the request starts
 * (block_io_start, in the submitting task). */
static __always_inline int dc_block_owner_of(struct request* trusted_rq, struct dc_block_owner* o)
{
  struct request* rq = dc_plain(trusted_rq);
  struct bio* bio = rq->bio;
  struct bio_vec* vec = bio ? bio->bi_io_vec : NULL;
  struct page* page = vec ? vec->bv_page : NULL;
  /* A bio may start inside a large folio (buffer-head reads, one per block, do when a folio mixes
   * holes and data): only the folio's head page names its mapping; a tail page's compound_head
   * points at the head, tagged by bit 0. */
  unsigned long head = 0;
  if (page && !bpf_probe_read_kernel(&head, sizeof(head), &page->compound_head) && (head & 1))
    page = (struct page*)(head - 1);
  /* Read as a number: its low bits tag anonymous and movable pages. */
  unsigned long mapping = 0;
  if (page)
    bpf_probe_read_kernel(&mapping, sizeof(mapping), &page->mapping);
  __u32 home = 0;
  if (mapping && !(mapping & DC_PAGE_MAPPING_FLAGS)) {
    struct address_space* as = dc_cast(mapping, address_space);
    dc_inode_ref(as->host, &o->file);
    /* A block device's own cache (a raw device written through it) lives on that device, which
     * its inode names in i_rdev; its superblock is the bdev pseudo file system's. */
    home = o->file.mode == DC_S_IFBLK ? dc_plain(as->host)->i_rdev : o->file.dev;
  }
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tgid = pid_tgid >> 32;
  /* The device the bio targets (a partition where there is one). Not rq->part: accounting sets
   * it after block_io_start fires. */
  struct block_device* part = bio ? bio->bi_bdev : NULL;
  /* A thread with state belongs to a traced process (dc_thread_of_traced): the traced set is
   * asked only for one without. */
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* t = dc_thread_of(task);
  if (t || dc_is_traced(tgid)) {
    o->tgid = tgid;
    o->tid = (__u32)pid_tgid;
    o->cause = DC_BLOCK_SUBMITTED;
    dc_nest_in_call(t, task, &o->nest);
    if (!o->file.mode && t) {
      o->file = t->dio_file;
      home = o->file.dev;
    }
    return !dc_stacked(o, home, part);
  }
  if (!o->file.mode || dc_stacked(o, home, part))
    return 0;
  __u64 key = dc_file_key(&o->file);
  __u32* dirtier = bpf_map_lookup_elem(&dc_block_dirtied_by, &key);
  /* Only traced processes are recorded as dirtiers; the dirtier may have exited since. */
  if (!dirtier)
    return 0;
  o->tgid = *dirtier;
  o->tid = *dirtier;
  o->cause = DC_BLOCK_WRITEBACK;
  return 1;
}

/* What the request says now (at its start, at its issue and at its completion). */
static __always_inline void dc_block_shape(struct request* trusted_rq, struct dc_block_request* r)
{
  struct request* rq = dc_plain(trusted_rq);
  r->sector = rq->__sector;
  r->bytes = rq->__data_len;
  r->op = rq->cmd_flags & 0xff; /* REQ_OP_MASK */
  /* The partition accounting names at the request's issue, or before that (block_io_start fires
   * before it is set) the one its first bio targets, which accounting copies. */
  struct block_device* part = rq->part;
  if (!part && rq->bio)
    part = rq->bio->bi_bdev;
  r->dev = part ? part->bd_dev : 0;
}

/* Requests are preallocated per tag: a new one reuses the address of one that ended, so an
 * entry left at that address (a request whose end went unseen) is written or counted and then
 * replaced or removed here, never inherited. Insert and issue only look up: they may run in
 * whichever task dispatches the queue, which is not the request's submitter. */
SEC("tp_btf/block_io_start")
int BPF_PROG(dc_block_io_start, struct request* rq)
{
  __u64 key = dc_address_of(rq);
  struct dc_block_request fresh = {};
  if (dc_block_owner_of(rq, &fresh.owner)) {
    fresh.start_ns = bpf_ktime_get_ns();
    dc_block_shape(rq, &fresh);
    dc_keep_request(key, &fresh);
    return 0;
  }
  struct dc_block_request* stale = dc_request_at(key);
  if (stale) {
    dc_block_end_unseen(stale);
    dc_forget_request(key);
  }
  return 0;
}

/* `next` was merged into another request and is freed without completing: its bytes complete
 * with that request, charged to that request's owner. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(dc_block_rq_merge, struct request* next)
{
  dc_forget_request(dc_address_of(next));
  return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(dc_block_rq_insert, struct request* rq)
{
  struct dc_block_request* r = dc_request_at(dc_address_of(rq));
  if (r)
    r->insert_ns = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(dc_block_rq_issue, struct request* rq)
{
  struct dc_block_request* r = dc_request_at(dc_address_of(rq));
  if (r) {
    r->issue_ns = bpf_ktime_get_ns();
    dc_block_shape(rq, r);
  }
  return 0;
}

/* The BLOCK event of request `r`, as its state says, ended at `end_ns` (0: its end unseen,
 * without a service time). */
static __always_inline void dc_block_emit(const struct dc_block_request* r, __u64 end_ns, int error)
{
  struct dc_block_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RING_FULL);
    return;
  }
  __u64 issued = r->issue_ns ? r->issue_ns : end_ns ? end_ns : r->start_ns;
  ev->hdr.kind = DC_REC_BLOCK;
  ev->hdr.tgid = r->owner.tgid;
  ev->hdr.tid = r->owner.tid;
  ev->hdr.reserved = 0;
  ev->hdr.ts_ns = issued;
  ev->service_ns = end_ns ? end_ns - issued : 0;
  ev->queue_ns = r->insert_ns && r->insert_ns <= issued ? issued - r->insert_ns : 0;
  ev->sector = r->sector;
  ev->file = r->owner.file;
  ev->bytes = r->bytes;
  ev->dev = r->dev;
  ev->op = r->op;
  ev->cause = r->owner.cause;
  ev->error = error;
  ev->end = end_ns ? DC_BLOCK_END_SEEN : DC_BLOCK_END_UNSEEN;
  ev->nest = r->owner.nest;
  bpf_ringbuf_submit(ev, dc_submit_flags());
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(dc_block_rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes)
{
  __u64 key = dc_address_of(rq);
  struct dc_block_request* r = dc_request_at(key);
  if (!r)
    return 0;
  /* `nr_bytes` of it completed now, at the sector it has reached. */
  __u64 now = bpf_ktime_get_ns();
  dc_block_shape(rq, r);
  r->bytes = nr_bytes;
  if (dc_profiling())
    dc_profile_add(r->owner.tgid, DC_PROF_BLOCK, r->op, &r->owner.file, now,
                   now - (r->issue_ns ? r->issue_ns : now), nr_bytes, 0);
  else
    dc_block_emit(r, now, error);
  /* Fired before the bytes are taken off the request: a driver that ends part of a request
   * (nr_bytes below what is left) completes the rest later, with the same owner. */
  if (nr_bytes >= rq->__data_len)
    dc_forget_request(key);
  else
    r->bytes = rq->__data_len - nr_bytes;
  return 0;
}
