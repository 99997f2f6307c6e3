/* The page-fault layer (cat FAULT): page faults of traced threads on file-backed mappings, from
 * tracepoints only. A fault opens at exceptions:page_fault_user (or page_fault_kernel on a user
 * address); the filemap tracepoints inside it say which file and pages it touched. There is no
 * tracepoint where a fault ends, so a fault is closed when the thread's next fault begins, when
 * the thread exits, or at the end of a run (the dc_flush_faults iterator); whether it was
 * major or minor is then read from the kernel's own per-thread counters.
 *
 * The pages a fault mapped are counted by the process's own file RSS (kmem:rss_stat): with large
 * folios the kernel maps a whole folio at once, beyond the fault-around range that
 * mm_filemap_map_pages reports, and the RSS counters are the only tracepoint-visible account of
 * what was put in the page tables. rss_stat is taken as tp_btf (the mm and the counter), not as
 * the classic tracepoint: the classic one sums the counter over every CPU under its lock for
 * every process of the machine before any filter runs, and removing its perf-event link at the
 * end of a run waits ~80 ms for the kernel's grace periods. Here only a traced process's file
 * and shmem counters are read: the event's own CPU's part of them (see dc_fault_rss), with the
 * per-CPU offsets learnt from a per-CPU map of this object's (dc_cpu_offset). */
#include "common.bpf.h"
#include "fault_rss.bpf.h"

#define DC_USER_TOP 0x00007fffffffffffULL /* x86-64: highest user-space address */

struct dc_fault_state {
  struct dc_fault_event ev;
  __u64 maj_at_start;
  __u64 min_at_start;
  __u64 frame_ip; /* the thread's user register frame at the fault: the fault is still */
  __u64 frame_sp; /* running while the frame is the same (see dc_fault_running) */
  __u32 open;
  __u32 reserved;
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct dc_fault_state);
} dc_fault_states SEC(".maps");

/* Whether the probed call `nest` sits under (its parent, at depth level - 1) is still open. */
static __always_inline int dc_frame_open(struct task_struct* task, const struct dc_nesting* nest)
{
  struct dc_thread* t = dc_thread_of(task);
  if (!t)
    return 0;
  __u32 at = nest->level - 2;
  if (t->nest.depth < nest->level - 1 || at >= DC_NEST_MAX)
    return 0;
  return t->nest.frames[at & (DC_NEST_MAX - 1)].id == (__u64)nest->parent;
}

/* Sends the open fault of `task`, if it touched a file. */
static __always_inline void dc_fault_close(struct task_struct* task, struct dc_fault_state* st)
{
  if (!st->open)
    return;
  st->open = 0;
  if (!st->ev.file.mode)
    return; /* anonymous memory: not I/O */
  st->ev.major = task->maj_flt - st->maj_at_start;
  st->ev.minor = task->min_flt - st->min_at_start;
  /* Sent when the next fault begins: the probed call it happened in may have returned (and
   * gone to the ring) since. */
  if (!(st->ev.flags & DC_FAULT_KERNEL) && st->ev.nest.level >= 2 && !dc_frame_open(task, &st->ev.nest))
    st->ev.nest.flags |= DC_NEST_PARENT_SENT;
  if (dc_profiling()) {
    dc_profile_add(st->ev.hdr.tgid, DC_PROF_FAULT, st->ev.major ? DC_FAULT_MAJOR : DC_FAULT_MINOR,
                   &st->ev.file, st->ev.hdr.ts_ns, 0, 0, 0);
    return;
  }
  if (bpf_ringbuf_output(&dc_events, &st->ev, sizeof(st->ev), dc_submit_flags()))
    dc_count_loss(DC_LOSS_RING_FULL);
}

/* A fault in user mode sits under the innermost probed call open at its stack pointer; one in
 * kernel mode (copy_to_user, ...) under the system call that took it. */
static __always_inline void dc_fault_nest(struct task_struct* task, __u64 user_sp, __u32 flags,
                                          struct dc_nesting* out)
{
  if (flags & DC_FAULT_KERNEL) {
    dc_nest_under_syscall(task, out);
    return;
  }
  struct dc_thread* t = dc_thread_of(task);
  out->flags = 0;
  if (!t) {
    out->id = 0;
    out->parent = -1;
    out->level = 0;
    return;
  }
  dc_nest_place(&t->nest, user_sp, task, &out->level, &out->parent);
  out->id = dc_next_id(&t->nest, task->pid);
}

/* Whether `task` is still inside the fault `st` opened: its register frame (the user registers
 * of a user-mode fault, the system call's of a kernel-mode one) is the one the fault began with.
 * Back in user space the thread can change its file RSS only by a system call (another frame)
 * or another fault (which closes this one). */
static __always_inline int dc_fault_running(struct task_struct* task, struct dc_fault_state* st)
{
  struct pt_regs* frame = (struct pt_regs*)bpf_task_pt_regs(task);
  return frame && frame->ip == st->frame_ip && frame->sp == st->frame_sp;
}

static __always_inline int dc_fault_begin(unsigned long address, struct pt_regs* regs,
                                          unsigned long error_code, __u32 flags)
{
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_fault_state* st = bpf_task_storage_get(&dc_fault_states, task, 0, 0);
  if (!st) {
    if (!dc_is_traced(task->tgid))
      return 0;
    st = bpf_task_storage_get(&dc_fault_states, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!st) {
      dc_count_loss(DC_LOSS_NO_STATE);
      return 0;
    }
  }
  dc_fault_close(task, st);
  __builtin_memset(&st->ev, 0, sizeof(st->ev));
  dc_fill_header(&st->ev.hdr, DC_REC_FAULT, bpf_ktime_get_ns());
  st->ev.address = address;
  st->ev.error_code = error_code;
  st->ev.flags = flags;
  dc_fault_nest(task, regs ? regs->sp : 0, flags, &st->ev.nest);
  st->maj_at_start = task->maj_flt;
  st->min_at_start = task->min_flt;
  struct pt_regs* frame = (struct pt_regs*)bpf_task_pt_regs(task);
  st->frame_ip = frame ? frame->ip : 0;
  st->frame_sp = frame ? frame->sp : 0;
  st->open = 1;
  return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(dc_fault_user, unsigned long address, struct pt_regs* regs, unsigned long error_code)
{
  return dc_fault_begin(address, regs, error_code, 0);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(dc_fault_kernel, unsigned long address, struct pt_regs* regs, unsigned long error_code)
{
  if (address > DC_USER_TOP)
    return 0;
  return dc_fault_begin(address, regs, error_code, DC_FAULT_KERNEL);
}

/* The open fault of the current thread, if any. */
static __always_inline struct dc_fault_state* dc_open_fault(void)
{
  struct dc_fault_state* st = bpf_task_storage_get(&dc_fault_states, bpf_get_current_task_btf(), 0, 0);
  return st && st->open ? st : NULL;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(dc_fault_around, struct address_space* mapping, unsigned long first, unsigned long last)
{
  struct dc_fault_state* st = dc_open_fault();
  if (!st)
    return 0;
  dc_mapping_file(mapping, &st->ev.file);
  st->ev.around_first = first;
  st->ev.around_last = last;
  st->ev.flags |= DC_FAULT_AROUND;
  return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(dc_fault_filemap, struct address_space* mapping, unsigned long index)
{
  struct dc_fault_state* st = dc_open_fault();
  if (!st)
    return 0;
  dc_mapping_file(mapping, &st->ev.file);
  st->ev.index = index;
  st->ev.flags |= DC_FAULT_FILEMAP;
  return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(dc_fault_page_added, struct folio* folio)
{
  struct dc_fault_state* st = dc_open_fault();
  if (st)
    st->ev.pages_read += dc_folio_pages(folio);
  return 0;
}

/* The file mapped at `vma` (bpf_find_vma's callback). */
static long dc_fault_vma_file(struct task_struct* task, struct vm_area_struct* vma, void* ref)
{
  struct file* file = dc_plain(vma)->vm_file;
  if (file)
    dc_mapping_file(dc_plain(file)->f_mapping, ref);
  return 0;
}

/* A rise of a traced process's file RSS in the thread's open fault is pages that fault mapped
 * (fault-around, a whole large folio, or the faulting page). The event that starts a process's
 * accounting has no count of its own (DC_FAULT_MAPPED_UNKNOWN). */
SEC("tp_btf/rss_stat")
int BPF_PROG(dc_fault_rss_change, struct mm_struct* mm, int member)
{
  __u32 slot = member == MM_FILEPAGES ? 0 : member == MM_SHMEMPAGES ? 1 : 2;
  if (slot > 1)
    return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  int curr = task->mm == mm, started = 0;
  __u64 key = dc_address_of(mm);
  __s64 change = 0;
  if (!bpf_map_lookup_elem(&dc_fault_rss, &key)) {
    if (!curr || !dc_fault_rss_begin(key))
      return 0;
    started = 1;
  } else if (!dc_rss_move(key, slot, &change)) {
    return 0;
  }
  if (!curr)
    return 0;
  struct dc_fault_state* st = bpf_task_storage_get(&dc_fault_states, task, 0, 0);
  if (!st || !st->open || !dc_fault_running(task, st))
    return 0;
  if (started)
    st->ev.flags |= DC_FAULT_MAPPED_UNKNOWN;
  else if (change > 0)
    st->ev.pages_mapped += change;
  /* A fault that maps pages of the page cache may pass no filemap tracepoint (seen with four
   * threads faulting a cold file at once: whole folios of 256 and 512 pages mapped so, the
   * fault then taken for anonymous memory and dropped): its file is the mapping's. */
  if (!st->ev.file.mode) {
    struct dc_file_ref file = {};
    if (bpf_find_vma(task, st->ev.address, dc_fault_vma_file, &file, 0) == 0)
      st->ev.file = file;
  }
  return 0;
}

/* A process's baseline goes with its last thread. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(dc_fault_rss_exit, struct task_struct* task, bool group_dead)
{
  __u32 tgid = task->tgid;
  __u64* mm = group_dead ? bpf_map_lookup_elem(&dc_fault_rss_mm, &tgid) : 0;
  if (mm) {
    bpf_map_delete_elem(&dc_fault_rss, mm);
    bpf_map_delete_elem(&dc_fault_rss_parts, mm);
    bpf_map_delete_elem(&dc_fault_rss_mm, &tgid);
  }
  return 0;
}

/* Faults still open close at their thread's exit, and at the end of a run (dc_flush_faults). */
DC_FLUSH_AT_EXIT_AND_END(dc_fault_at_exit, dc_fault_flush, dc_fault_states, dc_fault_close)

/* Forgets every task's fault state before the object is kept (dc_process_forget says why). */
SEC("iter/task")
int dc_fault_forget(struct bpf_iter__task* ctx)
{
  if (ctx->task)
    bpf_task_storage_delete(&dc_fault_states, ctx->task);
  return 0;
}
