/* The system-call layer (cat POSIX): one enter/exit pair on the raw syscall tracepoints covers
 * every I/O system call; which calls are traced, and which arguments are files or paths, comes
 * from the spec table user space fills. Raw arguments go to user space undecoded. */
#include "common.bpf.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, DC_MAX_SYSCALL_NR);
  __type(key, __u32);
  __type(value, struct dc_syscall_spec);
} dc_syscall_specs SEC(".maps");

#define DC_STAGE_MAX_AGE_NS (200 * 1000 * 1000ULL)

/* Argument `i` of a call, 0 for none. One bounded load: a switch made the verifier walk the rest
 * of the program once per case at every use. */
static __always_inline __u64 dc_arg(const __u64* args, int i)
{
  return i >= 0 && i < 6 ? args[i] : 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(dc_syscall_enter, struct pt_regs* regs, long id)
{
  if (id < 0 || id >= DC_MAX_SYSCALL_NR)
    return 0;
  __u32 nr = id;
  struct dc_syscall_spec* spec = bpf_map_lookup_elem(&dc_syscall_specs, &nr);
  if (!spec || !spec->traced)
    return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* e = dc_thread_of_traced(task);
  if (!e)
    return 0;
  e->nr = nr;
  e->fs_open = 0;        /* an FS operation left open by a call whose exit was not seen */
  if (!dc_profiling()) { /* counters have no place in a call tree */
    dc_nest_place(&e->nest, regs->sp, task, &e->level, &e->parent);
    e->id = dc_next_id(&e->nest, task->pid);
  }
  e->args[0] = regs->di;
  e->args[1] = regs->si;
  e->args[2] = regs->dx;
  e->args[3] = regs->r10;
  e->args[4] = regs->r8;
  e->args[5] = regs->r9;
  /* Always written: a stale ref from an earlier call must not leak into this one. */
  dc_file_ref_of(spec->fd_at_entry ? dc_fd_file_of(task, (int)dc_arg(e->args, spec->fd_a)) : NULL,
                 &e->file_a);
  e->active = 1;
  e->ts = bpf_ktime_get_ns();
  return 0;
}

/* The path at user address `user` (a call's path argument in `slot`) as the raw user string,
 * plus the directory `dirfd` it is relative to. A global function (common.bpf.h DC_GLOBAL). */
DC_GLOBAL int dc_emit_call_path(__u64 user, __s64 dirfd, __u32 slot, __u64 ts)
{
  struct dc_path_record* r = dc_path_begin(DC_REC_CALL_PATH, ts);
  if (!r)
    return 0;
  r->slot = slot;
  long n = bpf_probe_read_user_str(r->data, DC_NAME_MAX, (const char*)user);
  if (n <= 0) {
    r->data[0] = 0;
    n = 1;
  }
  r->raw_len = n;
  __u32 len = n;
  if (r->data[0] != '/') {
    struct dentry* d;
    struct vfsmount* m;
    if (dirfd == DC_AT_FDCWD) {
      struct task_struct* task = bpf_get_current_task_btf();
      d = BPF_CORE_READ(task, fs, pwd.dentry);
      m = BPF_CORE_READ(task, fs, pwd.mnt);
    } else {
      struct file* f = dc_fd_file(dirfd);
      d = f ? BPF_CORE_READ(f, f_path.dentry) : NULL;
      m = f ? BPF_CORE_READ(f, f_path.mnt) : NULL;
    }
    if (d && m)
      len = dc_walk_path(d, m, r, len);
  }
  dc_path_submit(r, len);
  return 0;
}

/* A call's path argument `path_arg`, relative to its argument `dirfd_arg` (or the working
 * directory), as the record for `slot`. */
static __always_inline void dc_emit_path_arg(const struct dc_thread* e, int path_arg, int dirfd_arg,
                                             __u8 slot)
{
  __s64 dirfd = dirfd_arg >= 0 ? (int)dc_arg(e->args, dirfd_arg) : DC_AT_FDCWD;
  dc_emit_call_path(dc_arg(e->args, path_arg), dirfd, slot, e->ts);
}

/* Pages of a file a read of `ret` bytes touched, as the page-cache summary counts them: its
 * byte range when the call has an offset, else whole pages (pages_touched in user space). */
static __always_inline __u64 dc_pages_read(const struct dc_thread* e, const struct dc_syscall_spec* spec,
                                           __u32 mode, long ret)
{
  if (!dc_is_file_data(mode))
    return 0;
  if (spec->offset_arg < 0 || spec->offset_arg >= 6)
    return dc_pages_of(ret);
  __s64 off = (__s64)dc_arg(e->args, spec->offset_arg);
  if (off < 0)
    return dc_pages_of(ret);
  return (((__u64)off + ret - 1) >> dc_page_shift) - ((__u64)off >> dc_page_shift) + 1;
}

/* Whether the thread's open FS operation is its call's own buffered read or write: of the call's
 * only file. Trace and profile mode fold such an operation into the call (below). */
static __always_inline int dc_fs_is_the_calls(const struct dc_thread* e, const struct dc_syscall_spec* spec,
                                              const struct dc_file_ref* file_a)
{
  const struct dc_fs_event* fs = &e->fs;
  return (fs->op == DC_FS_BUFFERED_READ || fs->op == DC_FS_BUFFERED_WRITE) && spec->fd_b == DC_ARG_NONE &&
         fs->file.ino == file_a->ino && fs->file.dev == file_a->dev;
}

/* Whether it counts with its call in profile mode (the key's folded_fs): the counter then takes
 * the call's time, bytes and file for it, so it must have begun with the call, of a call that
 * moves data (its bytes: the call's result), on a file of the call's type. */
static __always_inline int dc_fs_folds_in_profile(const struct dc_thread* e,
                                                  const struct dc_syscall_spec* spec,
                                                  const struct dc_file_ref* file_a)
{
  return dc_fs_is_the_calls(e, spec, file_a) && spec->moves && e->fs.hdr.ts_ns == e->ts &&
         e->fs.file.mode == file_a->mode;
}

/* Whether it folds into its call's record (struct dc_folded_fs): a read's page span must fit. */
static __always_inline int dc_fold_fs(const struct dc_thread* e, const struct dc_syscall_spec* spec,
                                      const struct dc_file_ref* file_a, struct dc_folded_fs* out)
{
  const struct dc_fs_event* fs = &e->fs;
  if (!dc_fs_is_the_calls(e, spec, file_a))
    return 0;
  if (fs->op == DC_FS_BUFFERED_WRITE) {
    out->first = fs->offset;
  } else if (fs->last_page >= fs->first_page && fs->last_page - fs->first_page <= 0xffffffffULL) {
    out->first = fs->first_page;
    out->page_span = fs->last_page - fs->first_page;
  } else {
    return 0;
  }
  out->op = fs->op;
  return 1;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(dc_syscall_exit, struct pt_regs* regs, long ret)
{
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* e = dc_thread_of(task);
  if (!e || !e->active)
    return 0;
  e->active = 0;
  __u32 nr = e->nr;
  if (regs->orig_ax != nr)
    return 0;
  struct dc_syscall_spec* spec = bpf_map_lookup_elem(&dc_syscall_specs, &nr);
  if (!spec)
    return 0;
  __u64 now = bpf_ktime_get_ns();
  if (nr == DC_NR_MMAP && ret >= 0 && (e->args[2] & DC_PROT_EXEC))
    dc_hold_code_map((int)e->args[4]);

  struct dc_file_ref file_a = e->file_a, file_b = {};
  if (spec->fd_a == DC_ARG_RET) {
    if (ret >= 0) {
      struct file* f = dc_fd_file_of(task, ret);
      dc_file_ref_of(f, &file_a);
      dc_emit_file_name(dc_address_of(f), e->ts);
    }
  } else if (spec->fd_a != DC_ARG_NONE && !spec->fd_at_entry) {
    dc_file_ref_of(dc_fd_file_of(task, (int)dc_arg(e->args, spec->fd_a)), &file_a);
  }
  if (spec->fd_b != DC_ARG_NONE)
    dc_file_ref_of(dc_fd_file_of(task, (int)dc_arg(e->args, spec->fd_b)), &file_b);
  if (dc_profiling()) {
    struct dc_profile_key key;
    dc_profile_key_of(&key, task->tgid, DC_PROF_POSIX, nr, &file_a,
                      spec->moves == DC_MOVES_COPY ? &file_b : NULL, dc_profile_epoch_mine(e, now));
    /* A buffered read or write of the call's file is counted with the call (struct
     * dc_profile_key): its time and bytes are the call's, so one slot serves both. */
    if (e->fs_open) {
      if (dc_fs_folds_in_profile(e, spec, &file_a)) {
        key.folded_fs = e->fs.op;
      } else {
        dc_fs_pending_close(e, ret, now);
        dc_fs_send(&e->fs, e);
      }
      e->fs_open = 0;
    }
    __u64 bytes = spec->moves && ret > 0 ? ret : 0;
    /* A copy reads its input (fd_a) as a read would. */
    int reads = spec->moves == DC_MOVES_READ || spec->moves == DC_MOVES_COPY;
    __u64 pages = reads && ret > 0 ? dc_pages_read(e, spec, file_a.mode, ret) : 0;
    dc_profile_count_mine(e, &key, now - e->ts, bytes, pages);
    return 0;
  }
  /* A successful open is named by its file; anything else by the path it was given. */
  int has_path =
      spec->path_b != DC_ARG_NONE || (spec->path_a != DC_ARG_NONE && !(spec->fd_a == DC_ARG_RET && ret >= 0));
  /* A path record belongs to the next record of its thread: what waits goes first. */
  if (has_path)
    dc_stage_flush(e);
  if (spec->path_a != DC_ARG_NONE && !(spec->fd_a == DC_ARG_RET && ret >= 0))
    dc_emit_path_arg(e, spec->path_a, spec->dirfd_a, 0);
  if (spec->path_b != DC_ARG_NONE)
    dc_emit_path_arg(e, spec->path_b, spec->dirfd_b, 1);

  /* The FS operation that ended with this call goes in the call's record when it can (a
   * buffered read or write of the call's one file), else it is staged first, then the call. */
  struct dc_folded_fs folded = {};
  __u32 fs_op = 0; /* 1: the FS operation takes a slot of its own */
  if (e->fs_open) {
    if (dc_fold_fs(e, spec, &file_a, &folded))
      e->fs_open = 0;
    else
      fs_op = 1;
  }
  if (fs_op) {
    dc_fs_pending_close(e, ret, now);
    dc_stage_fs(e, &e->fs, now);
    e->fs_open = 0;
  }
  if (e->staged >= DC_STAGE_EVENTS)
    dc_stage_flush(e);
  __u32 slot = e->staged;
  if (slot >= DC_STAGE_EVENTS)
    return 0;
  if (slot == 0)
    e->first_staged_ts = now;
  struct dc_syscall_event* ev = &e->stage[slot].syscall;
  dc_fill_header(&ev->hdr, DC_REC_SYSCALL, e->ts);
  ev->dur_ns = now - e->ts;
  ev->ret = ret;
  __builtin_memcpy(ev->args, e->args, sizeof(ev->args));
  ev->file_a = file_a;
  if (folded.op)
    ev->fs = folded;
  else
    ev->file_b = file_b;
  ev->nr = nr;
  ev->level = e->level;
  ev->id = e->id;
  ev->parent = e->parent;
  e->staged = slot + 1;
  if (has_path || slot + 1 == DC_STAGE_EVENTS || now - e->first_staged_ts > DC_STAGE_MAX_AGE_NS)
    dc_stage_flush(e);
  return 0;
}

static __always_inline void dc_stage_flush_of(struct task_struct* task, struct dc_thread* e)
{
  dc_stage_flush(e);
}

/* A thread's staged records go at its exit, and at the end of a run (dc_flush_stages) for
 * threads still alive. */
DC_FLUSH_AT_EXIT_AND_END(dc_syscall_at_exit, dc_syscall_flush, dc_threads, dc_stage_flush_of)
