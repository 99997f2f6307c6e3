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
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
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
  /* The gate may have closed since it was read: the holder's death closed it, then continued
   * what dc_held held, perhaps before this entry was in it; or user space closed it to stop
   * holding, and its last read of the ring may come before this record. Read the gate again once
   * the record and the entry are visible (a locked add is a full barrier on x86): open, the
   * holder will continue this process; closed, nobody may, so it goes on now. */
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
  if (bpf_ringbuf_output(&dc_holds, &r, sizeof(r), 0))
    dc_count_loss(DC_LOSS_GONE_UNSAID);
}

static __always_inline struct dc_task_event* dc_task_begin(__u32 op)
{
  struct dc_task_event* ev = bpf_ringbuf_reserve(&dc_events, sizeof(*ev), 0);
  if (!ev) {
    dc_count_loss(DC_LOSS_RECORD_RING_FULL);
    return NULL;
  }
  dc_fill_header(&ev->hdr, DC_REC_TASK, bpf_ktime_get_ns());
  ev->op = op;
  ev->ppid = 0;
  ev->exit_code = 0;
  ev->argv_len = 0;
  ev->env_len = 0;
  bpf_get_current_comm(ev->comm, sizeof(ev->comm));
  return ev;
}

/* The launcher variables an MPI rank is named by (src/collect/mpi_rank.cpp picks among them):
 * DC_RANK_VARIABLE_COUNT of them. */
#define DC_RANK_NAME_MAX 24
static const char dc_rank_names[DC_RANK_VARIABLE_COUNT][DC_RANK_NAME_MAX] = {
    "OMPI_COMM_WORLD_RANK=",
    "OMPI_COMM_WORLD_SIZE=",
    "PMIX_RANK=",
    "PMIX_SIZE=",
    "PMI_RANK=",
    "PMI_SIZE=",
    "SLURM_PROCID=",
    "SLURM_NTASKS=",
    "SLURM_NPROCS=",
    "FLUX_TASK_RANK=",
    "FLUX_JOB_SIZE=",
};
/* Environment entries looked at per exec, at most: the scan stops at envp's NULL long before. */
#define DC_RANK_SCAN_MAX 8192

struct dc_rank_scratch {
  char env[DC_RANK_ENV_MAX + DC_RANK_ENTRY_MAX]; /* room for one more entry's read */
  __u32 len;
  __u32 seen; /* bit i: dc_rank_names[i] kept already (the first one counts, as for getenv) */
  __u64 envp; /* user address of the envp array */
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct dc_rank_scratch);
} dc_rank_scratch SEC(".maps");

/* Which of dc_rank_names `entry` ("NAME=value") sets, or -1. */
static __always_inline int dc_rank_variable(const char* entry)
{
  char first = entry[0];
  if (first != 'O' && first != 'P' && first != 'S' && first != 'F')
    return -1;
  for (int k = 0; k < DC_RANK_VARIABLE_COUNT; ++k) {
    for (int j = 0; j < DC_RANK_NAME_MAX; ++j) {
      char c = dc_rank_names[k][j];
      if (c == 0)
        return k;
      if (c != entry[j])
        break;
    }
  }
  return -1;
}

/* bpf_loop step: environment entry i. Keeps it when it is a launcher variable not seen yet. */
static long dc_rank_scan_entry(__u64 i, void* unused)
{
  __u32 zero = 0;
  struct dc_rank_scratch* s = bpf_map_lookup_elem(&dc_rank_scratch, &zero);
  __u64 entry_at = 0;
  if (!s || bpf_probe_read_user(&entry_at, sizeof(entry_at), (void*)(s->envp + i * 8)) || !entry_at)
    return 1;
  __u32 at = s->len;
  if (at > DC_RANK_ENV_MAX)
    return 1;
  char* entry = s->env + at;
  long n = bpf_probe_read_user_str(entry, DC_RANK_ENTRY_MAX, (void*)entry_at);
  if (n <= 1 || n >= DC_RANK_ENTRY_MAX) /* unreadable, or too long to hold a number: not kept */
    return 0;
  int k = dc_rank_variable(entry);
  if (k < 0 || (s->seen & (1u << k)))
    return 0;
  s->seen |= 1u << k;
  s->len = at + n;
  return 0;
}

/* The launcher variables of the current process's environment, read from its envp array (on the
 * stack above argc and argv: mm->start_stack points at argc), or NULL. At exec the kernel has
 * just written those pages, so the reads do not fault; at registration they are the variables
 * it started with (as /proc/PID/environ has them). */
static __always_inline struct dc_rank_scratch* dc_scan_rank_env(struct task_struct* p)
{
  __u32 zero = 0;
  struct dc_rank_scratch* s = bpf_map_lookup_elem(&dc_rank_scratch, &zero);
  if (!s)
    return NULL;
  unsigned long stack = BPF_CORE_READ(p, mm, start_stack);
  __u64 argc = 0;
  if (bpf_probe_read_user(&argc, sizeof(argc), (void*)stack) || argc > (1u << 24))
    return NULL;
  s->len = 0;
  s->seen = 0;
  s->envp = stack + 8 * (argc + 2); /* past argc, argv[0..argc-1] and argv's NULL */
  bpf_loop(DC_RANK_SCAN_MAX, dc_rank_scan_entry, NULL, 0);
  return s;
}

/* An exec record for task (the current process): its command line, as user space names
 * processes by, and its launcher variables, which name it if it is an MPI rank. */
static __always_inline void dc_emit_exec(struct task_struct* p)
{
  struct dc_rank_scratch* s = dc_scan_rank_env(p);
  struct dc_task_event* ev = dc_task_begin(DC_TASK_EXEC);
  if (!ev)
    return;
  if (s) {
    __u32 len = s->len;
    if (len > DC_RANK_ENV_MAX)
      len = DC_RANK_ENV_MAX;
    if (bpf_probe_read_kernel(ev->env, len, s->env) == 0)
      ev->env_len = len;
  }
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
