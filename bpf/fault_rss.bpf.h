/* The page-fault layer's account of a traced process's file RSS (kmem:rss_stat, see fault.bpf.c):
 * the counters' exact sums over the CPUs, read from the tracepoint's own arguments, and which
 * event each change belongs to. Included by fault.bpf.c. */
#ifndef DATACRUMBS_FAULT_RSS_BPF_H
#define DATACRUMBS_FAULT_RSS_BPF_H

/* How a traced process's file RSS (file and shmem pages) is followed. Each counter is a
 * percpu_counter: a CPU adds to its own part, and folds that part into the shared count under the
 * counter's lock once it would pass the batch (the part is then 0). The kernel makes a change and
 * its kmem:rss_stat event on one CPU with preemption off (under the page-table lock), so a change
 * that did not fold is exactly its CPU's part minus the part at that CPU's last event
 * (dc_fault_rss_parts). A fold is known only by the exact sum of the counter, which the event
 * reads and moves the process's baseline to (dc_fault_rss); the rise is the event's. Other CPUs'
 * non-folding changes whose events are not through yet are left out of that sum (their parts
 * tell them); another CPU's fold is not told apart from this one, so two folds at once are
 * taken by whichever event reads the sum first: the process's sum stays exact, the split
 * between the two faults does not. */
struct dc_fault_rss {
  __s64 pages[2]; /* MM_FILEPAGES, MM_SHMEMPAGES: the baseline */
  __u32 tgid;
  __u32 seq; /* odd while a CPU moves the baseline; +2 at each move */
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 65536);
  __type(key, __u64); /* the mm's address */
  __type(value, struct dc_fault_rss);
} dc_fault_rss SEC(".maps");

/* Each CPU's part of the two counters at its last rss_stat event for the mm. Allocated per
 * process, not up front: a per-CPU value per possible CPU. */
struct dc_fault_rss_part {
  __s32 part[2];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 65536);
  __type(key, __u64); /* the mm's address */
  __type(value, struct dc_fault_rss_part);
} dc_fault_rss_parts SEC(".maps");

/* Each traced process's mm, to drop its entries when it exits or execs. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 65536);
  __type(key, __u32);   /* TGID */
  __type(value, __u64); /* the mm's address */
} dc_fault_rss_mm SEC(".maps");

/* The possible CPUs (set by the loader): how many per-CPU parts a counter has. */
const volatile __u32 dc_nr_cpus = 1;

#define DC_MAX_CPUS 8192

/* A per-CPU map of our own, read for where the kernel puts each CPU's copy of a per-CPU
 * allocation: the kernel's per-CPU offsets are in no symbol a BPF program can name here (no
 * CONFIG_KALLSYMS_ALL), and the counters' per-CPU pointer has no __percpu type tag in BTF. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} dc_fault_cpu_probe SEC(".maps");

/* Each CPU's offset, once learnt (0: not yet): it never changes while the kernel runs. */
__u64 dc_fault_cpu_offsets[DC_MAX_CPUS] = {};

/* CPU `cpu`'s offset into the per-CPU area (the kernel's __per_cpu_offset[cpu]): the map's
 * value on that CPU minus the value's per-CPU pointer; 0 when it cannot be found. */
static __always_inline __u64 dc_cpu_offset(__u32 cpu)
{
  if (cpu >= DC_MAX_CPUS)
    return 0;
  if (dc_fault_cpu_offsets[cpu])
    return dc_fault_cpu_offsets[cpu];
  __u32 zero = 0;
  void* on_cpu = bpf_map_lookup_percpu_elem(&dc_fault_cpu_probe, &zero, cpu);
  __u64 array = dc_address_of(&dc_fault_cpu_probe), base = 0;
  if (!on_cpu || !array ||
      bpf_probe_read_kernel(&base, sizeof(base),
                            (void*)(array + bpf_core_field_offset(struct bpf_array, pptrs))) ||
      !base)
    return 0;
  return dc_fault_cpu_offsets[cpu] = dc_address_of(on_cpu) - base;
}

/* CPU `cpu`'s part of the per-CPU counter whose parts start at `parts`; 0 when unreadable. */
static __always_inline int dc_counter_part(__u64 parts, __u32 cpu, __s32* part)
{
  __u64 offset = dc_cpu_offset(cpu);
  return parts && offset && !bpf_probe_read_kernel(part, sizeof(*part), (void*)(parts + offset));
}

/* The kernel's number iterator (open-coded loops, kernel 6.4): the verifier checks a loop's body
 * once, not once per iteration, so the programs verify alike for 2 CPUs or 8,192. A bounded loop
 * over the CPUs made dc_fault_rss_change too large for the verifier above ~20 possible CPUs. */
extern int bpf_iter_num_new(struct bpf_iter_num* it, int start, int end) __ksym;
extern int* bpf_iter_num_next(struct bpf_iter_num* it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num* it) __ksym;

/* One pass over the CPUs' parts of one counter. */
struct dc_rss_pass {
  __u64 mm;      /* the key of dc_fault_rss_parts */
  __u64 parts;   /* the counter's per-CPU parts */
  __u32 slot;    /* 0: file pages, 1: shmem pages */
  __u32 cpu;     /* the event's CPU */
  __s64 sum;     /* the parts' sum */
  __s64 pending; /* other CPUs' changes left to their own events */
  __s32 own;     /* the event's CPU's part */
  __u32 start;   /* the process's first event: every CPU's part becomes its last seen */
};

/* CPU `cpu`'s part into the pass; 0 when it cannot be read. */
static __always_inline int dc_rss_pass_cpu(__u32 cpu, struct dc_rss_pass* pass)
{
  __u64 mm = pass->mm;
  __s32 part = 0;
  struct dc_fault_rss_part* last = bpf_map_lookup_percpu_elem(&dc_fault_rss_parts, &mm, cpu);
  if (!last || !dc_counter_part(pass->parts, cpu, &part))
    return 0;
  pass->sum += part;
  if (pass->start)
    last->part[pass->slot & 1] = part;
  else if (cpu == pass->cpu)
    pass->own = part;
  else if (part != 0) /* 0: maybe a fold, whose rise is in the shared count already */
    pass->pending += part - last->part[pass->slot & 1];
  return 1;
}

/* Counter `slot` of `mm`: 0 file pages, 1 shmem pages. */
static __always_inline struct percpu_counter* dc_rss_counter(__u64 mm, __u32 slot)
{
  struct mm_struct* m = dc_cast(mm, mm_struct);
  return slot ? &m->rss_stat[MM_SHMEMPAGES] : &m->rss_stat[MM_FILEPAGES];
}

/* The sum of counter `slot` of `mm` less other CPUs' changes left to their own events, read
 * consistently with a fold (which moves a part into the shared count under the counter's lock,
 * count first); -1 when the lock was held after the count was read, or the count changed
 * meanwhile (the caller reads again), or the parts cannot be read. A global function (common.bpf.h
 * DC_GLOBAL), as is dc_fault_rss_begin: the verifier checks each once, not once per caller's
 * state (inlined in the retries of dc_rss_move, this program verified 93,000 instructions). */
DC_GLOBAL __s64 dc_fault_rss_read(__u64 mm, struct dc_rss_pass* pass)
{
  if (!pass)
    return -1;
  struct percpu_counter* counter = dc_rss_counter(mm, pass->slot);
  pass->mm = mm;
  pass->parts = (__u64)BPF_CORE_READ(counter, counters);
  pass->cpu = bpf_get_smp_processor_id();
  __s64 count = BPF_CORE_READ(counter, count);
  if (BPF_CORE_READ(counter, lock.raw_lock.val.counter) != 0)
    return -1;
  pass->sum = count;
  pass->pending = 0;
  int read = 1, *cpu;
  struct bpf_iter_num cpus;
  bpf_iter_num_new(&cpus, 0, dc_nr_cpus < DC_MAX_CPUS ? dc_nr_cpus : DC_MAX_CPUS);
  while ((cpu = bpf_iter_num_next(&cpus))) {
    if (!dc_rss_pass_cpu(*cpu, pass)) {
      read = 0;
      break;
    }
  }
  bpf_iter_num_destroy(&cpus);
  if (!read || BPF_CORE_READ(counter, count) != count)
    return -1;
  return pass->sum - pass->pending;
}

/* A new traced process (or one after exec), at its own thread's first rss_stat event: the
 * baselines are the counters' sums, and every CPU's part is its last seen. No other thread runs
 * in a new mm yet, so nothing moves them while they are read. Returns whether it began. */
DC_GLOBAL int dc_fault_rss_begin(__u64 mm)
{
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!dc_is_traced(tgid))
    return 0;
  __u64* old = bpf_map_lookup_elem(&dc_fault_rss_mm, &tgid);
  if (old && *old != mm) {
    bpf_map_delete_elem(&dc_fault_rss, old);
    bpf_map_delete_elem(&dc_fault_rss_parts, old);
  }
  struct dc_fault_rss_part none = {};
  if (bpf_map_update_elem(&dc_fault_rss_parts, &mm, &none, BPF_ANY))
    return 0;
  struct dc_fault_rss fresh = {.tgid = tgid};
  struct dc_rss_pass pass = {.start = 1};
  fresh.pages[0] = dc_fault_rss_read(mm, &pass);
  pass.slot = 1;
  fresh.pages[1] = fresh.pages[0] < 0 ? -1 : dc_fault_rss_read(mm, &pass);
  if (fresh.pages[1] < 0 || bpf_map_update_elem(&dc_fault_rss, &mm, &fresh, BPF_NOEXIST) ||
      bpf_map_update_elem(&dc_fault_rss_mm, &tgid, &mm, BPF_ANY)) {
    bpf_map_delete_elem(&dc_fault_rss_parts, &mm);
    return 0;
  }
  return 1;
}

/* This CPU's part of counter `slot` of `mm`; 0 when it cannot be read. */
static __always_inline int dc_rss_own_part(__u64 mm, __u32 slot, __s32* part)
{
  struct percpu_counter* counter = dc_rss_counter(mm, slot);
  return dc_counter_part((__u64)BPF_CORE_READ(counter, counters), bpf_get_smp_processor_id(), part);
}

/* Moves the baseline of counter `slot` of traced `mm` by this event's change, and this CPU's
 * last seen part with it, like a seqlock's writer (compare-and-swap on the sequence): each rise
 * is taken once. A change that left this CPU's part non-zero did not fold: it is the part minus
 * its last seen, read from this CPU alone (no pass over the CPUs). One that left it 0 may have
 * folded into the shared count: the baseline moves to the sum (less other CPUs' pending
 * changes). Returns whether it moved, with the change; a change whose event loses that race, or
 * cannot read a consistent sum, eight times is left in the next event's. */
static __always_inline int dc_rss_move(__u64 mm, __u32 slot, __s64* change)
{
  struct dc_fault_rss* seen = bpf_map_lookup_elem(&dc_fault_rss, &mm);
  struct dc_fault_rss_part* own = bpf_map_lookup_elem(&dc_fault_rss_parts, &mm);
  if (!seen || !own)
    return 0;
  __s32 part = 0;
  int fold = !dc_rss_own_part(mm, slot, &part) || part == 0;
  struct dc_rss_pass pass = {.slot = slot};
  for (int attempt = 0; attempt < 8; ++attempt) {
    __u32 seq = *(volatile __u32*)&seen->seq;
    if (seq & 1)
      continue;
    __s64 now = fold ? dc_fault_rss_read(mm, &pass) : 0;
    if (now < 0 || __sync_val_compare_and_swap(&seen->seq, seq, seq + 1) != seq)
      continue;
    if (fold) {
      *change = now - seen->pages[slot & 1];
      seen->pages[slot & 1] = now;
      own->part[slot & 1] = pass.own;
    } else {
      *change = part - own->part[slot & 1];
      seen->pages[slot & 1] += *change;
      own->part[slot & 1] = part;
    }
    __sync_fetch_and_add(&seen->seq, 1);
    return 1;
  }
  return 0;
}

#endif
