/* Process records (DC_REC_TASK), shared by the process tracker and the daemon's beacon, and
 * the holds that let user space attach a new process's user-space probes before it runs on. */
#ifndef DATACRUMBS_TASK_RECORD_BPF_H
#define DATACRUMBS_TASK_RECORD_BPF_H

#define DC_SIGSTOP 19

/* Set by user space when user-space functions are probed (per traced process). */
const volatile __u8 dc_hold_new = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 16);
} dc_holds SEC(".maps");

/* Entry 0: 1 while user space continues held processes. Closed before it stops doing so, so
 * that no process is stopped once nobody would continue it. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} dc_hold_gate SEC(".maps");

extern int bpf_send_signal_task(struct task_struct* task, int sig, enum pid_type type, __u64 value) __ksym;

/* Stops `task`'s process (or, with task NULL, the current one) and tells user space, which
 * attaches its probes and continues it. The record's room is taken first: a process is never
 * stopped without the record that gets it going again. SIGCONT also discards a SIGSTOP still
 * pending, so the order of the two at the process does not matter. */
static __always_inline void dc_hold(struct task_struct* task, __u32 tgid)
{
  if (!dc_hold_new)
    return;
  __u32 zero = 0;
  __u32* open = bpf_map_lookup_elem(&dc_hold_gate, &zero);
  if (!open || !*open)
    return;
  struct dc_hold_record* r = bpf_ringbuf_reserve(&dc_holds, sizeof(*r), 0);
  if (!r) {
    dc_count_loss(DC_LOSS_NOT_HELD);
    return;
  }
  r->tgid = tgid;
  r->op = DC_HOLD_STOPPED;
  int err = task ? bpf_send_signal_task(task, DC_SIGSTOP, PIDTYPE_TGID, 0) : bpf_send_signal(DC_SIGSTOP);
  if (err) {
    dc_count_loss(DC_LOSS_NOT_HELD);
    bpf_ringbuf_discard(r, 0);
    return;
  }
  bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
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
