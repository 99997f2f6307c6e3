/* User-space functions (cat from the config: STDIO, MPI, HDF5, ...): one generic program serves
 * every probed function; the attach cookie says which one it is (an index in user space's probe
 * table), so adding a function needs no code and no rebuild. Each call is a frame on its
 * thread's nesting stack (common.bpf.h) from entry to return; the system calls made inside it
 * are nested under it by the syscall layer.
 *
 * Where the kernel has uprobe sessions (Linux 6.13+), one session program sees both the entry
 * and the return of a call through one link per binary and process: half the links of an entry
 * and a return program, each of which costs an attach when a process joins the trace and an RCU
 * grace period when it leaves. Elsewhere the entry and return programs are linked apart. */
#include "common.bpf.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE); /* a kept object's reset clears it with one memset */
  __uint(max_entries, 1 << 16);
  __type(key, __u32);
  __type(value, struct dc_uprobe_spec);
} dc_uprobe_specs SEC(".maps");

/* Replaces a pointer argument by the 8 bytes it points at (0 when they cannot be read). */
static __always_inline void dc_uprobe_deref(__u64* arg)
{
  __u64 value = 0;
  if (bpf_probe_read_user(&value, sizeof(value), (const void*)*arg) != 0)
    value = 0;
  *arg = value;
}

/* Whether a session program is at a call's return (weak: absent before Linux 6.13, where the
 * session program is not loaded). */
extern bool bpf_session_is_return(void) __ksym __weak;

/* A call begins: its frame pushed. 0 when it is not recorded (an untraced thread, too deep). */
static __always_inline int dc_uprobe_begin(struct pt_regs* ctx)
{
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* t = dc_thread_of_traced(task);
  if (!t)
    return 0;
  struct dc_nest* n = &t->nest;
  __u64 sp = ctx->sp;
  __u32 level;
  __s64 parent;
  dc_nest_place(n, sp, task, &level, &parent);
  __u32 d = n->depth;
  if (d >= DC_NEST_MAX) {
    dc_count_loss(DC_LOSS_TOO_DEEP);
    return 0;
  }
  __u32 slot = d;
  barrier_var(slot); /* the mask must survive optimisation: the verifier needs it as the bound */
  slot &= DC_NEST_MAX - 1;
  struct dc_frame* f = &n->frames[slot];
  f->id = dc_next_id(n, task->pid);
  f->parent = parent;
  f->level = level;
  f->sp = sp;
  f->probe = bpf_get_attach_cookie(ctx);
  /* The x86-64 SysV argument registers. */
  f->args[0] = ctx->di;
  f->args[1] = ctx->si;
  f->args[2] = ctx->dx;
  f->args[3] = ctx->cx;
  f->args[4] = ctx->r8;
  f->args[5] = ctx->r9;
  f->str[0] = 0;
  __u32 probe = f->probe;
  struct dc_uprobe_spec* spec = bpf_map_lookup_elem(&dc_uprobe_specs, &probe);
  if (spec && spec->str_arg >= 0 && spec->str_arg < 6 && !dc_profiling())
    bpf_probe_read_user_str(f->str, sizeof(f->str), (const void*)f->args[spec->str_arg & 7]);
  if (spec && spec->deref_arg >= 0 && spec->deref_arg < 6 && !spec->deref_at_return && !dc_profiling())
    dc_uprobe_deref(&f->args[spec->deref_arg & 7]);
  n->depth = d + 1;
  f->ts = bpf_ktime_get_ns();
  return 1;
}

/* Bytes a returned call moved, for profile mode: fread/fwrite return items, not bytes. */
static __always_inline __u64 dc_uprobe_bytes(const struct dc_frame* f, __s64 ret)
{
  __u32 probe = f->probe;
  struct dc_uprobe_spec* spec = bpf_map_lookup_elem(&dc_uprobe_specs, &probe);
  if (!spec || spec->item_size_arg < 0 || spec->item_size_arg >= 6 || ret <= 0)
    return 0;
  return (__u64)ret * f->args[spec->item_size_arg & 7];
}

/* A call returns: its frame popped and sent (or counted, in profile mode). */
static __always_inline int dc_uprobe_end(struct pt_regs* ctx)
{
  __u64 now = bpf_ktime_get_ns();
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* t = bpf_task_storage_get(&dc_threads, task, 0, 0);
  if (!t)
    return 0;
  struct dc_nest* n = &t->nest;
  /* `ret` popped the return address: the function was entered 8 bytes below. Frames entered
   * deeper never returned; the slot test of dc_nest_unwind does not apply here, since the
   * trampoline itself has just written over the slot. */
  __u64 entry_sp = ctx->sp - 8;
  for (int i = 0; i < DC_NEST_MAX; i++) {
    __u32 top = n->depth;
    if (top == 0 || top > DC_NEST_MAX || n->frames[(top - 1) & (DC_NEST_MAX - 1)].sp >= entry_sp)
      break;
    n->depth = top - 1;
  }
  __u32 d = n->depth;
  if (d == 0 || d > DC_NEST_MAX)
    return 0;
  struct dc_frame* f = &n->frames[(d - 1) & (DC_NEST_MAX - 1)];
  if (f->sp != entry_sp)
    return 0; /* not a call we saw begin (attached while it ran, or too deep) */
  n->depth = d - 1;
  if (dc_profiling()) {
    dc_profile_add_mine(t, task->tgid, DC_PROF_UPROBE, f->probe, NULL, now, now - f->ts,
                        dc_uprobe_bytes(f, ctx->ax), 0);
    return 0;
  }
  /* The system calls it made go first: a call's children reach user space before it. */
  dc_stage_flush(t);
  struct dc_uprobe_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RING_FULL);
    return 0;
  }
  dc_fill_header(&ev->hdr, DC_REC_UPROBE, f->ts);
  ev->dur_ns = now - f->ts;
  ev->id = f->id;
  ev->parent = f->parent;
  __builtin_memcpy(ev->args, f->args, sizeof(ev->args));
  __u32 probe = f->probe;
  struct dc_uprobe_spec* spec = bpf_map_lookup_elem(&dc_uprobe_specs, &probe);
  if (spec && spec->deref_arg >= 0 && spec->deref_arg < 6 && spec->deref_at_return) {
    __u32 k = (__u32)spec->deref_arg;
    if (k < 6)
      dc_uprobe_deref(&ev->args[k]);
  }
  ev->ret = ctx->ax;
  ev->probe = f->probe;
  ev->level = f->level;
  __builtin_memcpy(ev->str, f->str, sizeof(ev->str));
  bpf_ringbuf_submit(ev, dc_submit_flags());
  return 0;
}

SEC("uprobe")
int dc_uprobe_enter(struct pt_regs* ctx)
{
  dc_uprobe_begin(ctx);
  return 0;
}

SEC("uretprobe")
int dc_uprobe_return(struct pt_regs* ctx)
{
  return dc_uprobe_end(ctx);
}

/* Entry and return in one: at the entry, returning 1 tells the kernel not to run the program at
 * this call's return (a call not recorded needs no return). Attached as BPF_TRACE_UPROBE_SESSION
 * (the loader sets it; the section name is what Debian's libbpf 1.1 knows). */
SEC("uprobe")
int dc_uprobe_session(struct pt_regs* ctx)
{
  if (bpf_session_is_return())
    return dc_uprobe_end(ctx);
  return dc_uprobe_begin(ctx) ? 0 : 1;
}

/* A USDT probe site (a marker the program compiled in, e.g. PostgreSQL's transaction__start):
 * an instant event, placed in its thread's call tree like a call that returns at once. */
SEC("uprobe")
int dc_uprobe_usdt(struct pt_regs* ctx)
{
  __u64 now = bpf_ktime_get_ns();
  struct task_struct* task = bpf_get_current_task_btf();
  struct dc_thread* t = dc_thread_of_traced(task);
  if (!t)
    return 0;
  __u32 probe = bpf_get_attach_cookie(ctx);
  if (dc_profiling()) {
    dc_profile_add_mine(t, task->tgid, DC_PROF_UPROBE, probe, NULL, now, 0, 0, 0);
    return 0;
  }
  struct dc_uprobe_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RING_FULL);
    return 0;
  }
  __u32 level;
  __s64 parent;
  dc_nest_place(&t->nest, ctx->sp, task, &level, &parent);
  dc_fill_header(&ev->hdr, DC_REC_UPROBE, now);
  ev->dur_ns = 0;
  ev->id = dc_next_id(&t->nest, task->pid);
  ev->parent = parent;
  __builtin_memset(ev->args, 0, sizeof(ev->args));
  ev->ret = 0;
  ev->probe = probe;
  ev->level = level;
  ev->str[0] = 0;
  bpf_ringbuf_submit(ev, dc_submit_flags());
  return 0;
}
