/* The traced set: a process is traced from its exec on (run mode arms it), its children are
 * added at fork, and it leaves the set when its last thread exits. Threads are covered by their
 * TGID. Also reports exec/fork/thread/exit so user space names processes and threads. */
#include "common.bpf.h"
#include "task_record.bpf.h"

#define DC_SIGCONT 18

/* New processes that catch SIGCONT, held at their exec rather than at fork. A forked child runs
 * its parent's handlers until it execs; continuing it at fork would run the parent's SIGCONT
 * handler in it (launchers such as mpirun then forward "signal 18" to their whole job). exec
 * resets the handlers, so the hold there is invisible. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 1 << 14);
  __type(key, __u32);
  __type(value, __u8);
} dc_hold_at_exec SEC(".maps");

static __always_inline bool dc_catches_sigcont(struct task_struct* task)
{
  unsigned long handler = (unsigned long)dc_plain(task)->sighand->action[DC_SIGCONT - 1].sa.sa_handler;
  return handler > 1; /* neither SIG_DFL (0) nor SIG_IGN (1) */
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(dc_process_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm)
{
  __u32 tgid = p->tgid;
  __u32* state = bpf_map_lookup_elem(&dc_traced, &tgid);
  if (!state)
    return 0;
  *state = DC_TRACE_ACTIVE;
  if (bpf_map_delete_elem(&dc_hold_at_exec, &tgid) == 0)
    dc_hold(NULL, tgid); /* stopped before the new program's first instruction */
  dc_emit_exec(p);
  /* The kernel opened the program itself: name it, as an open names what it opens, so that the
   * page faults and block reads of its code are charged to a path. */
  dc_emit_file_name(dc_plain(bprm)->file, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(dc_process_fork, struct task_struct* parent, struct task_struct* child)
{
  __u32 ptgid = parent->tgid;
  if (!dc_is_traced(ptgid))
    return 0;
  __u32 ctgid = child->tgid;
  __u32 op = DC_TASK_THREAD;
  if (ctgid != ptgid) {
    __u32 active = DC_TRACE_ACTIVE;
    bpf_map_update_elem(&dc_traced, &ctgid, &active, BPF_ANY);
    op = DC_TASK_FORK;
    /* a new process: its user-space probes are attached before it runs (or before its exec runs) */
    if (!dc_hold_new) {
    } else if (dc_catches_sigcont(child)) {
      __u8 one = 1;
      if (bpf_map_update_elem(&dc_hold_at_exec, &ctgid, &one, BPF_ANY))
        dc_count_loss(DC_LOSS_NOT_HELD);
    } else {
      dc_hold(child, ctgid);
    }
  }
  struct dc_task_event* ev = dc_task_begin(op);
  if (!ev)
    return 0;
  /* The record describes the child, not the current (parent) task. */
  ev->hdr.tgid = ctgid;
  ev->hdr.tid = child->pid;
  ev->ppid = ptgid;
  bpf_probe_read_kernel(ev->comm, sizeof(ev->comm), child->comm);
  bpf_ringbuf_submit(ev, dc_submit_flags());
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(dc_process_exit, struct task_struct* p)
{
  if (dc_profiling()) { /* the thread's coalesced counters, before its state goes */
    struct dc_thread* t = bpf_task_storage_get(&dc_threads, p, 0, 0);
    if (t)
      dc_profile_flush_thread(t, DC_SLOT_BUSY);
  }
  __u32 tgid = p->tgid;
  if (!bpf_map_lookup_elem(&dc_traced, &tgid))
    return 0;
  /* do_exit has already counted this thread out of signal->live. */
  if (BPF_CORE_READ(p, signal, live.counter) != 0)
    return 0;
  bpf_map_delete_elem(&dc_traced, &tgid);
  /* Forked with a SIGCONT handler and never exec'd: it ran unheld, its probes never attached. */
  if (bpf_map_delete_elem(&dc_hold_at_exec, &tgid) == 0)
    dc_count_loss(DC_LOSS_NOT_HELD);
  dc_hold_gone(tgid);
  struct dc_task_event* ev = dc_task_begin(DC_TASK_EXIT);
  if (!ev)
    return 0;
  ev->exit_code = BPF_CORE_READ(p, exit_code);
  bpf_ringbuf_submit(ev, dc_submit_flags());
  return 0;
}

/* Profile mode's interval-end flush: user space runs it over every thread before it reads an
 * interval (dc_profile_flush_below: the oldest interval it does not read yet), so that a thread
 * idle since then has its coalesced counters in the map too (profile.bpf.h). */
SEC("iter/task")
int dc_process_profile_flush(struct bpf_iter__task* ctx)
{
  struct task_struct* task = ctx->task;
  struct dc_thread* t = task ? bpf_task_storage_get(&dc_threads, task, 0, 0) : 0;
  if (t)
    dc_profile_flush_thread(t, dc_profile_flush_below);
  return 0;
}
