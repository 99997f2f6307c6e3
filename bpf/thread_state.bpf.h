/* Per-thread state shared by every layer: the system call in progress, the stage of finished
 * syscall records, and the stack of open user-space calls that gives every event its place in
 * the thread's call tree (DFTracer level and p_idx). Included by common.bpf.h. */
#ifndef DATACRUMBS_THREAD_STATE_BPF_H
#define DATACRUMBS_THREAD_STATE_BPF_H

/* An open call of a probed user-space function. `sp` is the stack pointer at its entry: a frame
 * entered below the current stack pointer has returned, even if its return was never seen
 * (longjmp, a thread killed): that is how a lost return cannot corrupt later nesting. */
struct dc_frame {
  __u64 id;
  __s64 parent;
  __u64 sp;
  __u64 ts;
  __u64 args[6];
  __u32 probe;
  __u32 level;
  char str[DC_UPROBE_STR];
};

struct dc_nest {
  __u32 depth;
  __u32 seq;
  struct dc_frame frames[DC_NEST_MAX];
};

/* Profile mode's counters of the thread's own events, before they reach the shared map
 * (profile.bpf.h). An epoch of all ones is an empty slot; zeroed storage is an empty slot too
 * (count 0). */
#define DC_PROFILE_SLOTS 4
struct dc_profile_slot {
  struct dc_profile_key key;
  struct dc_profile_counts counts;
};

/* Per-thread state, shared by every layer (one task-storage lookup per hook):
 * - the entry part of the syscall in progress, overwritten by the next entry, so a missed exit
 *   cannot poison a later event;
 * - the stage: finished syscall (and FS) records waiting to go to the ring DC_STAGE_EVENTS at a time (a
 *   ring reservation per call was the largest single cost of a traced pread,
 *   docs/performance.md). Per thread, it keeps each thread's records in call order. It is sent
 *   when full, before a record whose path records must not be overtaken, when its oldest record
 *   is DC_STAGE_MAX_AGE_NS old, when the thread exits, and by the dc_flush_stages iterator at
 *   the end of a run;
 * - the nesting stack of open user-space calls;
 * - in profile mode, the counters of the thread's own events not yet in the shared map. */
struct dc_thread {
  __u64 ts;
  __u64 args[6];
  struct dc_file_ref file_a; /* resolved at entry when the call removes the fd */
  __u32 nr;
  __u32 active;
  __u32 fs_open; /* `fs` holds an open operation (kept here, with the entry state, so that the
                  * syscall hooks touch no other cache line to check it) */
  __u32 reserved;
  __u64 id;
  __s64 parent;
  __u32 level;
  __u32 staged;
  __u64 first_staged_ts;
  __u64 fs_iocb; /* the kiocb of a synchronous direct I/O open in `fs` (fs_pending.bpf.h); 0 else */
  struct dc_file_ref dio_file; /* of the thread's last direct I/O: its block requests' file */
  /* What every call touches comes first, with the stage, in the element's first page: with `fs`
   * and `prof` 6 KiB in, behind the stage and the nest, every call touched two pages of it.
   * (bench/run_hook_costs.sh: dc_syscall_enter 309 -> 231 ns a run in profile mode; the pread
   * loop's A/B, bench/run_ab.sh, did not show it beyond its ~5 % noise.) */
  struct dc_fs_event fs; /* an FS operation that ends with the system call (fs_pending.bpf.h) */
  struct dc_profile_slot prof[DC_PROFILE_SLOTS];
  __u32 prof_next;             /* the slot a new key takes */
  __u32 prof_hit;              /* the slot the last event went to: the next one most likely goes there too */
  __u64 prof_epoch;            /* the interval the last event ended in */
  struct dc_record_header run; /* DC_REC_STAGED: sent with the stage after it */
  union dc_staged_record stage[DC_STAGE_EVENTS]; /* must follow `run` */
  struct dc_nest nest;
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct dc_thread);
} dc_threads SEC(".maps");

/* Sends the thread's staged records as one ring record. The syscall layer calls it when the
 * stage is full or old, before a path record, and at the thread's exit; the uprobe layer before
 * a probed function's own record, so the system calls it made reach user space before it, as
 * every other child does (user space writes parents first: sink/thread_order.h). */
/* A global function (common.bpf.h DC_GLOBAL): the verifier checks it once, not again on every
 * path of each caller (four places in dc_syscall_exit alone). */
DC_GLOBAL int dc_stage_flush(struct dc_thread* e)
{
  if (!e)
    return 0;
  __u32 n = e->staged;
  if (n == 0 || n > DC_STAGE_EVENTS)
    return 0;
  e->run.kind = DC_REC_STAGED;
  e->run.tgid = 0; /* each staged record names its own thread */
  e->run.tid = 0;
  e->run.reserved = 0;
  e->run.ts_ns = 0;
  if (bpf_ringbuf_output(&dc_events, &e->run, sizeof(e->run) + n * sizeof(e->stage[0]), dc_submit_flags()))
    dc_count_loss_n(DC_LOSS_RING_FULL, n);
  e->staged = 0;
  return 0;
}

/* Puts a finished FS operation into the stage (one slot of its own: a record the thread's call
 * record follows), sending the stage first when it is full. */
static __always_inline void dc_stage_fs(struct dc_thread* e, const struct dc_fs_event* fs, __u64 now)
{
  if (e->staged >= DC_STAGE_EVENTS)
    dc_stage_flush(e);
  __u32 slot = e->staged;
  if (slot >= DC_STAGE_EVENTS)
    return;
  if (slot == 0)
    e->first_staged_ts = now;
  __builtin_memcpy(&e->stage[slot].fs, fs, sizeof(*fs));
  e->staged = slot + 1;
}

/* The state of `task` if it has one: only threads of traced processes do, so the traced set's
 * filter answers first for every other thread (one load, not a task-storage lookup). */
static __always_inline struct dc_thread* dc_thread_of(struct task_struct* task)
{
  if (!dc_maybe_traced(task->tgid))
    return NULL;
  return bpf_task_storage_get(&dc_threads, task, 0, 0);
}

_Static_assert(__builtin_offsetof(struct dc_thread, stage) ==
                   __builtin_offsetof(struct dc_thread, run) + sizeof(struct dc_record_header),
               "the stage must follow its run header: they go to the ring as one record");

/* The thread's state, created for a thread of a traced process; NULL for any other. A thread
 * with state belongs to a traced process (state is created for no other), so the traced-set
 * lookup is paid once per thread, not once per call. */
static __always_inline struct dc_thread* dc_thread_of_traced(struct task_struct* task)
{
  if (!dc_maybe_traced(task->tgid))
    return NULL;
  struct dc_thread* t = bpf_task_storage_get(&dc_threads, task, 0, 0);
  if (t)
    return t;
  if (!dc_is_traced(task->tgid))
    return NULL;
  t = bpf_task_storage_get(&dc_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!t)
    dc_count_loss(DC_LOSS_NO_STATE);
  return t;
}

/* Where the kernel's uretprobe trampoline is in this process: the return address of every
 * probed call still running was replaced by it. */
static __always_inline __u64 dc_uretprobe_trampoline(struct task_struct* task)
{
  return BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
}

/* Drops frames whose call ended unseen (longjmp, a thread killed): a frame entered below `sp`
 * has returned (the stack grows down), and so has one whose return-address slot no longer
 * holds the trampoline (a later call from the same depth overwrote it). A frame entered at
 * `sp` whose slot still holds the trampoline is live: the code at `sp` is its tail call. */
static __always_inline void dc_nest_unwind(struct dc_nest* n, __u64 sp, struct task_struct* task)
{
  if (n->depth == 0)
    return;
  __u64 trampoline = dc_uretprobe_trampoline(task);
  for (int i = 0; i < DC_NEST_MAX; i++) {
    __u32 d = n->depth;
    if (d == 0 || d > DC_NEST_MAX)
      break;
    __u64 frame_sp = n->frames[(d - 1) & (DC_NEST_MAX - 1)].sp;
    __u64 slot = 0;
    if (frame_sp >= sp && bpf_probe_read_user(&slot, sizeof(slot), (void*)frame_sp) == 0 &&
        slot == trampoline)
      break;
    n->depth = d - 1;
  }
}

/* Where a new event at stack pointer `sp` sits: its level and the id of its parent. */
static __always_inline void dc_nest_place(struct dc_nest* n, __u64 sp, struct task_struct* task, __u32* level,
                                          __s64* parent)
{
  dc_nest_unwind(n, sp, task);
  __u32 d = n->depth;
  *level = d + 1;
  *parent = d ? (__s64)n->frames[(d - 1) & (DC_NEST_MAX - 1)].id : -1;
}

static __always_inline __u64 dc_next_id(struct dc_nest* n, __u32 tid)
{
  n->seq++;
  return ((__u64)tid << DC_ID_SEQ_BITS) | (n->seq & ((1U << DC_ID_SEQ_BITS) - 1));
}

/* A kernel event the current thread (`task`, its state `t` or NULL) causes inside a system call
 * sits under that call. */
static __always_inline void dc_nest_in_call(struct dc_thread* t, struct task_struct* task,
                                            struct dc_nesting* out)
{
  out->flags = 0;
  if (!t || !t->active) {
    out->id = 0;
    out->parent = -1;
    out->level = 0;
    return;
  }
  out->parent = t->id;
  out->level = t->level + 1;
  out->id = dc_next_id(&t->nest, task->pid);
}

static __always_inline void dc_nest_under_syscall(struct task_struct* task, struct dc_nesting* out)
{
  dc_nest_in_call(dc_thread_of(task), task, out);
}

#endif
