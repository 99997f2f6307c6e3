/* Process records (DC_REC_TASK), shared by the process tracker and the daemon's beacon, and
 * the holds that let user space attach a new process's user-space probes before it runs on. */
#ifndef DATACRUMBS_TASK_RECORD_BPF_H
#define DATACRUMBS_TASK_RECORD_BPF_H

#define DC_SIGSTOP 19
#define DC_SIGCONT 18

/* Set by user space when user-space functions are probed (per traced process). */
const volatile __u8 dc_hold_new = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 16);
} dc_holds SEC(".maps");

/* Entry 0: the tgid (in the holder's own pid namespace) of the process that continues held
 * processes, 0 when none does. Closed by user space before it stops doing so, and by the kernel
 * when that process dies (dc_holder_died), so that no process is stopped once nobody would
 * continue it. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} dc_hold_gate SEC(".maps");

/* Processes stopped by a hold and not yet continued (tgid -> 1): what the holder's death
 * continues. An entry stays until the process exits (user space never deletes one: the entry it
 * would delete after its SIGCONT may already be the process's next hold, at its exec). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1 << 14);
  __type(key, __u32);
  __type(value, __u8);
} dc_held SEC(".maps");

extern int bpf_send_signal_task(struct task_struct* task, int sig, enum pid_type type, __u64 value) __ksym;

/* Orders every store before it against every load after it: an atomic add (a locked instruction
 * on x86, whose JIT is the only one this project targets) to a counter of this object's. */
__u64 dc_hold_fences = 0;
static __always_inline void dc_full_barrier(void)
{
  __sync_fetch_and_add(&dc_hold_fences, 1);
}

static __always_inline int dc_signal(struct task_struct* task, int sig)
{
  return task ? bpf_send_signal_task(task, sig, PIDTYPE_TGID, 0) : bpf_send_signal(sig);
}

/* Stops `task`'s process (or, with task NULL, the current one) and tells user space, which
 * attaches its probes and continues it. The record's room is taken first: a process is never
 * stopped without the record that gets it going again. SIGCONT also discards a SIGSTOP still
 * pending, so the order of the two at the process does not matter. */
static __always_inline void dc_hold(struct task_struct* task, __u32 tgid)
{
  if (!dc_hold_new)
    return;
  __u32 zero = 0;
  __u32* gate = bpf_map_lookup_elem(&dc_hold_gate, &zero);
  if (!gate || !*gate)
    return;
  struct dc_hold_record* r = bpf_ringbuf_reserve(&dc_holds, sizeof(*r), 0);
  if (!r) {
    dc_count_loss(DC_LOSS_NOT_HELD);
    return;
  }
  r->tgid = tgid;
  r->op = DC_HOLD_STOPPED;
  __u8 one = 1;
  if (bpf_map_update_elem(&dc_held, &tgid, &one, BPF_ANY) || dc_signal(task, DC_SIGSTOP)) {
    bpf_map_delete_elem(&dc_held, &tgid);
    dc_count_loss(DC_LOSS_NOT_HELD);
    bpf_ringbuf_discard(r, 0);
    return;
  }
  bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
  /* The holder may have died since the gate was read: its death closed the gate, then continued
   * what dc_held held, perhaps before this entry was in it. Read the gate again once the entry
   * is visible (a locked add is a full barrier on x86): open, the holder will continue this
   * process; closed, nobody will, so it goes on now. */
  dc_full_barrier();
  if (*(volatile __u32*)gate == 0)
    dc_signal(task, DC_SIGCONT);
}

/* The process is gone: its probes can be detached. */
static __always_inline void dc_hold_gone(__u32 tgid)
{
  if (!dc_hold_new)
    return;
  struct dc_hold_record r = {.tgid = tgid, .op = DC_HOLD_GONE};
  bpf_ringbuf_output(&dc_holds, &r, sizeof(r), 0);
}

static __always_inline struct dc_task_event* dc_task_begin(__u32 op)
{
  struct dc_task_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RING_FULL);
    return NULL;
  }
  dc_fill_header(&ev->hdr, DC_REC_TASK, bpf_ktime_get_ns());
  ev->op = op;
  ev->ppid = 0;
  ev->exit_code = 0;
  ev->argv_len = 0;
  ev->reserved = 0;
  bpf_get_current_comm(ev->comm, sizeof(ev->comm));
  return ev;
}

/* An exec record for task: its command line, as user space names processes by. */
static __always_inline void dc_emit_exec(struct task_struct* p)
{
  struct dc_task_event* ev = dc_task_begin(DC_TASK_EXEC);
  if (!ev)
    return;
  ev->ppid = BPF_CORE_READ(p, real_parent, tgid);
  unsigned long start = BPF_CORE_READ(p, mm, arg_start);
  unsigned long end = BPF_CORE_READ(p, mm, arg_end);
  __u64 len = end - start;
  if (len > DC_ARGV_MAX)
    len = DC_ARGV_MAX;
  if (bpf_probe_read_user(ev->argv, len, (void*)start) == 0)
    ev->argv_len = len;
  bpf_ringbuf_submit(ev, dc_submit_flags());
}

#endif
