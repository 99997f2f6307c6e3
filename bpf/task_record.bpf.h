/* Process records (DC_REC_TASK), shared by the process tracker and the daemon's beacon. */
#ifndef DATACRUMBS_TASK_RECORD_BPF_H
#define DATACRUMBS_TASK_RECORD_BPF_H

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
