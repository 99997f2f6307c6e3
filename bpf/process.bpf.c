/* The traced set: a process is traced from its exec on (run mode arms it), its children are
 * added at fork, and it leaves the set when its last thread exits. Threads are covered by their
 * TGID. Also reports exec/fork/thread/exit so user space names processes and threads. */
#include "common.bpf.h"
#include "task_record.bpf.h"

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

/* Files mapped as code that need no hold (struct dc_code_key). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, 1 << 16);
  __type(key, struct dc_code_key);
  __type(value, __u8);
} dc_code_known SEC(".maps");

/* A traced process mapped file descriptor fd as code (mmap with PROT_EXEC: the dynamic loader
 * loading a library, or dlopen). A library the uprobe layer does not name may define an entry's
 * functions (a renamed or self-built copy): the process is held while user space searches the
 * new object and links what it defines, as at an exec, so its first call is seen. Files already
 * known to need nothing (dc_code_known) pass: a library is searched once per run. Files no name
 * reaches again (unlinked: memfd code, deleted libraries) cannot be searched and pass too. */
static __always_inline void dc_hold_code_map(long fd)
{
  if (!dc_hold_new)
    return;
  struct file* f = dc_fd_file(fd);
  struct inode* inode = f ? dc_plain(f)->f_inode : NULL;
  if (!inode || (inode->i_mode & DC_S_IFMT) != DC_S_IFREG || inode->__i_nlink == 0)
    return;
  struct dc_code_key key = {.ino = inode->i_ino, .dev = inode->i_sb->s_dev};
  if (bpf_map_lookup_elem(&dc_code_known, &key))
    return;
  struct task_struct* task = bpf_get_current_task_btf();
  if (dc_catches_sigcont(task)) /* a stop and a continue would run its handler */
    return;
  dc_hold(NULL, task->tgid);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(dc_process_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm)
{
  __u32 tgid = p->tgid;
  __u32* state = bpf_map_lookup_elem(&dc_traced, &tgid);
  if (!state)
    return 0;
  *state = DC_TRACE_ACTIVE;
  /* Held at every exec, before the new program's first instruction: user space attaches the
   * libraries' probes if the fork hold did not (a SIGCONT catcher), and the functions the program
   * itself defines (a library linked in statically), which it can only find now. */
  bpf_map_delete_elem(&dc_hold_at_exec, &tgid);
  dc_hold(NULL, tgid);
  dc_emit_exec(p);
  /* The kernel opened the program itself: name it, as an open names what it opens, so that the
   * page faults and block reads of its code are charged to a path. */
  dc_emit_file_name(dc_address_of(dc_plain(bprm)->file), bpf_ktime_get_ns());
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
    dc_traced_slot_add(ctgid);
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

/* The holder's pid namespace (device and inode of its /proc/self/ns/pid), set by user space:
 * the gate names the holder by its tgid there. */
const volatile __u64 dc_holder_ns_dev = 0;
const volatile __u64 dc_holder_ns_ino = 0;

extern struct task_struct* bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct* p) __ksym;

static long dc_continue_held(struct bpf_map* map, __u32* tgid, __u8* value, void* ctx)
{
  struct task_struct* t = bpf_task_from_pid(*tgid);
  if (t) {
    bpf_send_signal_task(t, DC_SIGCONT, PIDTYPE_TGID, 0);
    bpf_task_release(t);
  }
  return 0;
}

/* The holder's last thread is exiting with the gate open: it was killed, since user space closes
 * the gate before it stops continuing processes on every other way out. Nobody will continue a
 * process held from now on, so: close the gate, then (after a barrier that dc_hold pairs with)
 * continue every process still held. A process continued twice, here and by user space just
 * before its death, only gets a second SIGCONT. */
static __always_inline bool dc_holder_died(struct task_struct* p)
{
  __u32 zero = 0;
  __u32* gate = bpf_map_lookup_elem(&dc_hold_gate, &zero);
  if (!gate || !*gate)
    return false;
  struct bpf_pidns_info ns = {};
  if (bpf_get_ns_current_pid_tgid(dc_holder_ns_dev, dc_holder_ns_ino, &ns, sizeof(ns)) || ns.tgid != *gate)
    return false;
  if (BPF_CORE_READ(p, signal, live.counter) != 0)
    return true;
  *(volatile __u32*)gate = 0;
  dc_full_barrier();
  bpf_for_each_map_elem(&dc_held, dc_continue_held, NULL, 0);
  return true;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(dc_process_exit, struct task_struct* p)
{
  if (dc_holder_died(p))
    return 0;
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
  dc_traced_slot_remove(tgid);
  bpf_map_delete_elem(&dc_held, &tgid);
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
 * idle since then has its coalesced counts sent too (profile.bpf.h). */
SEC("iter/task")
int dc_process_profile_flush(struct bpf_iter__task* ctx)
{
  struct task_struct* task = ctx->task;
  struct dc_thread* t = task ? bpf_task_storage_get(&dc_threads, task, 0, 0) : 0;
  if (t)
    dc_profile_flush_thread(t, dc_profile_flush_below);
  return 0;
}

/* Forgets every thread's state: run over every task before an object is kept for the next run
 * (probe/object_keeper.h), so that it starts as a fresh load does, whatever threads outlived the
 * last run. */
SEC("iter/task")
int dc_process_forget(struct bpf_iter__task* ctx)
{
  if (ctx->task)
    bpf_task_storage_delete(&dc_threads, ctx->task);
  return 0;
}
