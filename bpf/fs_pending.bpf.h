/* Filesystem operations whose tracepoints mark only where they start (buffered reads and
 * writes; xfs fsync, fallocate, truncate, unlink): each ends when the system call that asked
 * for it returns. The FS layer opens one in the thread's state, the syscall layer's exit closes
 * it and stages it with the call's own record (one ring record for both, as for every staged
 * call: a ring record of its own per buffered read cost 0.1x on the pread storm), so these FS
 * events need the syscall layer. Included by common.bpf.h. */
#ifndef DATACRUMBS_FS_PENDING_BPF_H
#define DATACRUMBS_FS_PENDING_BPF_H

/* A finished FS operation: to the ring, or to its counter in profile mode (coalesced in `mine`,
 * the state of the thread whose operation it is, when the caller runs as that thread). */
static __always_inline void dc_fs_send(struct dc_fs_event* ev, struct dc_thread* mine)
{
  if (dc_profiling()) {
    __u32 op = ev->op;
    int moved = op == DC_FS_DIRECT_READ || op == DC_FS_DIRECT_WRITE || op == DC_FS_BUFFERED_READ ||
                op == DC_FS_BUFFERED_WRITE;
    __u64 bytes = moved && ev->ret > 0 ? ev->ret : 0;
    if (mine)
      dc_profile_add_mine(mine, ev->hdr.tgid, DC_PROF_FS, op, &ev->file, ev->hdr.ts_ns + ev->dur_ns,
                          ev->dur_ns, bytes, 0);
    else
      dc_profile_add(ev->hdr.tgid, DC_PROF_FS, op, &ev->file, ev->hdr.ts_ns + ev->dur_ns, ev->dur_ns, bytes,
                     0);
    return;
  }
  if (bpf_ringbuf_output(&dc_events, ev, sizeof(*ev), dc_submit_flags()))
    dc_count_loss(DC_LOSS_RING_FULL);
}

/* Opens `op` on `inode` for the current thread when it is inside a traced system call that has
 * no FS operation open yet (the first one seen is the one the call asked for: a buffered read
 * reports its remaining range again on every pass). NULL otherwise. With `at_call_start` the
 * operation starts when its system call did, without a clock read: for buffered reads and
 * writes, one per call at the highest rates, where the clock read was the larger part of the
 * cost and the filesystem's work is the whole call anyway. `iocb`: the kiocb of a synchronous
 * direct I/O, which ends before its call does (dc_fs_pending_end); 0 for any other. */
static __always_inline struct dc_fs_event* dc_fs_pending_begin(__u32 op, struct inode* inode,
                                                               int at_call_start, __u64 iocb)
{
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* t = dc_thread_of(task);
  if (!t || !t->active || t->fs_open)
    return NULL;
  t->fs_open = 1;
  t->fs_iocb = iocb;
  struct dc_fs_event* ev = &t->fs;
  __u64 ts = at_call_start ? t->ts : bpf_ktime_get_ns();
  if (dc_profiling()) { /* what its counter needs (dc_fs_send); ids and the rest are the trace's */
    ev->hdr.tgid = task->tgid;
    ev->hdr.ts_ns = ts;
    ev->op = op;
    dc_inode_ref(inode, &ev->file);
    return ev;
  }
  dc_fill_header(&ev->hdr, DC_REC_FS, ts);
  ev->dur_ns = 0;
  ev->offset = 0;
  ev->bytes = 0;
  ev->ret = 0;
  ev->journal_tid = 0;
  ev->journal_blocks = 0;
  ev->reserved = 0;
  ev->first_page = 0;
  ev->last_page = 0;
  ev->op = op;
  dc_inode_ref(inode, &ev->file);
  ev->nest.parent = t->id;
  ev->nest.level = t->level + 1;
  ev->nest.id = dc_next_id(&t->nest, task->pid);
  ev->nest.flags = 0;
  return ev;
}

/* The syscall layer's exit: the thread's open FS operation ends with `ret`, the call's result.
 * The caller stages it with the call (trace mode) or counts it (dc_fs_send), then clears
 * fs_open. */
static __always_inline void dc_fs_pending_close(struct dc_thread* t, long ret, __u64 now)
{
  t->fs.dur_ns = now - t->fs.hdr.ts_ns;
  t->fs.ret = ret;
}

/* An operation that ends in its own thread before its system call does (a synchronous direct
 * I/O): counted or staged now, ahead of its call, so that a buffered fallback in the same call
 * (a direct write the filesystem could not finish) finds the slot free. */
static __always_inline void dc_fs_pending_end(struct dc_thread* t, __s64 ret)
{
  __u64 now = bpf_ktime_get_ns();
  dc_fs_pending_close(t, ret, now);
  if (dc_profiling())
    dc_fs_send(&t->fs, t);
  else
    dc_stage_fs(t, &t->fs, now);
  t->fs_open = 0;
  t->fs_iocb = 0;
}

#endif
