/* What every layer's BPF program shares: the traced-process filter, the one ring buffer, exact
 * loss counters, and file/path resolution. The maps are created once by user space and reused
 * by every layer's object (bpf_map__reuse_fd), so all layers feed one ordered stream. */
#ifndef DATACRUMBS_COMMON_BPF_H
#define DATACRUMBS_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"
#include "counters.h"
#include "cast_types.h"

#define DC_WALK_DEPTH 32
#define DC_AT_FDCWD (-100)
#define DC_EEXIST 17 /* errno: a key already in a map (vmlinux.h has no errno macros) */

char LICENSE[] SEC("license") = "GPL";

/* Submissions wake the consumer only once this many bytes wait in the ring (set by user space). */
const volatile __u64 dc_wake_mark = 1 << 20;
/* log2 of the kernel's page size (set by user space from sysconf(_SC_PAGESIZE)). */
const volatile __u32 dc_page_shift = 12;

/* Pages that `bytes` bytes fill, rounded up. */
static __always_inline __u64 dc_pages_of(__u64 bytes)
{
  return (bytes + (1ULL << dc_page_shift) - 1) >> dc_page_shift;
}

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24);
} dc_events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 65536);
  __type(key, __u32);   /* TGID */
  __type(value, __u32); /* enum dc_trace_state */
} dc_traced SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, DC_LOSS_KINDS);
  __type(key, __u32);
  __type(value, __u64);
} dc_lost SEC(".maps");

/* Scratch space for records too large for the BPF stack. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct dc_path_record);
} dc_path_scratch SEC(".maps");

/* A filter in front of dc_traced, asked first on every path all processes take (system calls,
 * buffered reads, faults, forks): one load of a global, where the hash lookup (or the
 * task-storage lookup) of an untraced process cost 45-95 ns a hook (docs/performance.md, session
 * 34). Exact for traced processes: a traced TGID's slot holds it or DC_TRACED_SHARED from before
 * the process is traced (fork, the beacon, user space's arm) until it is not. A shared slot stays
 * shared until the object is reset: those TGIDs only lose the shortcut. */
__u32 dc_traced_slots[DC_TRACED_SLOTS] = {};

static __always_inline int dc_maybe_traced(__u32 tgid)
{
  __u32 s = *(volatile __u32*)&dc_traced_slots[tgid & (DC_TRACED_SLOTS - 1)];
  return s != 0 && (s == tgid || s == DC_TRACED_SHARED);
}

/* Before `tgid` joins dc_traced: its slot names it, or becomes shared. */
static __always_inline void dc_traced_slot_add(__u32 tgid)
{
  __u32* s = &dc_traced_slots[tgid & (DC_TRACED_SLOTS - 1)];
  __u32 was = __sync_val_compare_and_swap(s, 0, tgid);
  if (was != 0 && was != tgid)
    __sync_lock_test_and_set(s, DC_TRACED_SHARED);
}

/* After `tgid` left dc_traced: its slot is free again unless it is shared. */
static __always_inline void dc_traced_slot_remove(__u32 tgid)
{
  __sync_val_compare_and_swap(&dc_traced_slots[tgid & (DC_TRACED_SLOTS - 1)], tgid, 0);
}

static __always_inline int dc_is_traced(__u32 tgid)
{
  if (!dc_maybe_traced(tgid))
    return 0;
  __u32* state = bpf_map_lookup_elem(&dc_traced, &tgid);
  return state && *state == DC_TRACE_ACTIVE;
}

/* An atomic add though the counter is this CPU's: a program that interrupts another on the same
 * CPU (a softirq's network hook during a system call's) may count at the same time, and a plain
 * add would lose one of the two. Only paid when something is lost. */
static __always_inline void dc_count_loss_n(__u32 kind, __u64 count)
{
  __u64* n = bpf_map_lookup_elem(&dc_lost, &kind);
  if (n)
    __sync_fetch_and_add(n, count);
}

static __always_inline void dc_count_loss(__u32 kind)
{
  dc_count_loss_n(kind, 1);
}

/* Submissions per CPU, to decide when to look at the ring's fill level. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} dc_submits SEC(".maps");

#define DC_FILL_CHECK_EVERY 64

/* No wakeup per event: the consumer polls on a timer and is woken only when the ring passes
 * its fill mark. The level is checked once per DC_FILL_CHECK_EVERY submissions on a CPU, so a
 * consumer that lags (ring above the mark) costs one wakeup per 64 events, not one per event
 * (measured: a wakeup per event triples the cost of a traced pread). */
static __always_inline __u64 dc_submit_flags(void)
{
  __u32 zero = 0;
  __u64* n = bpf_map_lookup_elem(&dc_submits, &zero);
  if (n && (++*n % DC_FILL_CHECK_EVERY) != 0)
    return BPF_RB_NO_WAKEUP;
  __u64 waiting = bpf_ringbuf_query(&dc_events, BPF_RB_AVAIL_DATA);
  return waiting >= dc_wake_mark ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void dc_fill_header(struct dc_record_header* h, __u32 kind, __u64 ts)
{
  struct task_struct* task = bpf_get_current_task_btf();
  h->kind = kind;
  h->tgid = task->tgid;
  h->tid = task->pid;
  h->reserved = 0;
  h->ts_ns = ts;
}

/* A pointer's value as a plain number (the verifier allows no arithmetic between pointers of
 * different kinds, and passes a global function no pointer but memory it can size); 0 when it
 * cannot be read. */
static __always_inline __u64 dc_address_of(const void* pointer)
{
  __u64 address = 0;
  bpf_probe_read_kernel(&address, sizeof(address), &pointer);
  return address;
}

/* Turns a kernel pointer read as plain data back into a typed one, so fields are read with
 * direct (fault-safe) loads instead of one helper call each: this is the syscall hot path. */
extern void* bpf_rdonly_cast(const void* obj, __u32 btf_id) __ksym;

/* The kernel's BTF ids of the cast types (cast_types.h), set by user space when it loads the
 * object against a minimal BTF; 0: CO-RE gives the id (relocated against the kernel's BTF). */
const volatile __u32 dc_cast_ids[DC_CAST_COUNT];

#define DC_CAST_ASSOCIATION(suffix, name) struct name* : DC_CAST_##suffix,
/* The kernel BTF id of the type `typed_null` points to (a null pointer of that type). */
#define dc_kernel_type_id(typed_null) \
  (dc_cast_ids[_Generic((typed_null), DC_CAST_TYPE_TABLE(DC_CAST_ASSOCIATION) void* : DC_CAST_COUNT)] \
       ?: bpf_core_type_id_kernel(typeof(*(typed_null))))

/* `p` (any kernel address) as a plain pointer to struct T. */
#define dc_cast(p, T) ((struct T*)bpf_rdonly_cast((void*)(p), dc_kernel_type_id((struct T*)0)))

/* A kernel pointer as a plain typed one, for walking its pointer fields. Loading a pointer field
 * through a trusted pointer (a tp_btf argument, bpf_get_current_task_btf()) makes the verifier
 * search the kernel's BTF by name for the field's trust rules, linearly over its ~127 k types,
 * four times per load on every path it checks: that was most of the time spent loading the
 * programs (dc_sys_exit alone took 59 ms, 12 ms without). The loads are the same fault-safe
 * loads either way; a plain pointer cannot be passed where a helper needs a trusted one. */
#define dc_plain(p) ((typeof(p))bpf_rdonly_cast((p), dc_kernel_type_id((typeof(p))0)))

/* The struct file behind descriptor fd of `current` (the current task, as
 * bpf_get_current_task_btf() gave it: a hook that has it saves a helper call), or NULL. */
static __always_inline struct file* dc_fd_file_of(struct task_struct* current, long fd)
{
  struct task_struct* task = dc_plain(current);
  struct file* f = NULL;
  if (fd < 0)
    return NULL;
  struct files_struct* files = task->files;
  if (!files)
    return NULL;
  struct fdtable* fdt = files->fdt;
  if (!fdt || fd >= fdt->max_fds)
    return NULL;
  /* fdt->fd[fd] with a variable index is not a load the verifier allows on a typed pointer;
   * the slot viewed as a struct kiocb (whose first field is a struct file *) is, and costs one
   * fault-safe load instead of a helper call. */
  struct kiocb* slot = dc_cast((__u64)fdt->fd + fd * sizeof(f), kiocb);
  f = slot->ki_filp;
  if (!f)
    return NULL;
  return dc_cast(f, file);
}

/* The struct file behind descriptor fd of the current task, or NULL. */
static __always_inline struct file* dc_fd_file(long fd)
{
  return dc_fd_file_of(bpf_get_current_task_btf(), fd);
}

/* The file an inode is, as every layer names files: (dev, ino) and the type bits of its mode;
 * all zero for no inode. */
static __always_inline void dc_inode_ref(struct inode* trusted_inode, struct dc_file_ref* ref)
{
  struct inode* inode = dc_plain(trusted_inode);
  ref->ino = inode ? inode->i_ino : 0;
  ref->dev = inode ? inode->i_sb->s_dev : 0;
  ref->mode = inode ? (inode->i_mode & DC_S_IFMT) : 0;
}

static __always_inline void dc_file_ref_of(struct file* f, struct dc_file_ref* ref)
{
  dc_inode_ref(f ? dc_plain(f)->f_inode : NULL, ref);
}

/* Pages in a folio: a large folio (PG_head set) spans 1 << order pages, its order in _flags_1. */
static __always_inline __u64 dc_folio_pages(struct folio* folio)
{
  __u64 flags = 0, flags_1 = 0;
  bpf_probe_read_kernel(&flags, sizeof(flags), &folio->flags);
  if (!(flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_head))))
    return 1;
  bpf_probe_read_kernel(&flags_1, sizeof(flags_1), &folio->_flags_1);
  return 1ULL << (flags_1 & 31);
}

/* The file behind a page-cache mapping, as dc_file_ref_of names it. */
static __always_inline void dc_mapping_file(struct address_space* mapping, struct dc_file_ref* ref)
{
  dc_inode_ref(mapping ? dc_plain(mapping)->host : NULL, ref);
}

struct dc_walk {
  struct dentry* dentry;
  struct vfsmount* vfsmnt;
  struct mount* mnt;
  char* buf;
  __u32 off;
  __u8 truncated;
};

/* One step of a path walk: the name of one dentry, or a hop from a mount root to its mount
 * point. Runs under bpf_loop so the verifier checks it once, not once per iteration. */
static long dc_walk_step(__u32 index, void* ctx)
{
  struct dc_walk* w = ctx;
  /* Copies first: CO-RE relocations apply to kernel types, not to this context struct. */
  struct dentry* dentry = w->dentry;
  struct vfsmount* vfsmnt = w->vfsmnt;
  struct mount* mnt = w->mnt;
  struct dentry* root = BPF_CORE_READ(vfsmnt, mnt_root);
  struct dentry* parent = BPF_CORE_READ(dentry, d_parent);
  if (dentry == root || dentry == parent) {
    struct mount* up = BPF_CORE_READ(mnt, mnt_parent);
    if (!up || up == mnt)
      return 1; /* the root of the namespace */
    w->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
    w->mnt = up;
    w->vfsmnt = (void*)up + bpf_core_field_offset(struct mount, mnt);
    return 0;
  }
  if (w->off >= DC_PATH_MAX) {
    w->truncated = 1;
    return 1;
  }
  const unsigned char* name = BPF_CORE_READ(dentry, d_name.name);
  char* buf = w->buf;
  if (!buf)
    return 1;
  long n = bpf_probe_read_kernel_str(buf + (w->off & (DC_PATH_MAX - 1)), DC_NAME_MAX, name);
  if (n <= 0)
    return 1;
  w->off += n;
  w->dentry = parent;
  if (index == DC_WALK_DEPTH - 1)
    w->truncated = 1;
  return 0;
}

/* Appends the names from dentry up to the root of the mount namespace, leaf first, each
 * NUL-terminated, to rec->data at off. Crosses mount points. Returns the new offset. */
static __always_inline __u32 dc_walk_path(struct dentry* dentry, struct vfsmount* vfsmnt,
                                          struct dc_path_record* rec, __u32 off)
{
  struct dc_walk w = {
      .dentry = dentry,
      .vfsmnt = vfsmnt,
      .mnt = (void*)vfsmnt - bpf_core_field_offset(struct mount, mnt),
      .buf = rec->data,
      .off = off,
      .truncated = 0,
  };
  bpf_loop(DC_WALK_DEPTH, dc_walk_step, &w, 0);
  rec->truncated = w.truncated;
  return w.off;
}

static __always_inline struct dc_path_record* dc_path_begin(__u32 kind, __u64 ts)
{
  __u32 zero = 0;
  struct dc_path_record* r = bpf_map_lookup_elem(&dc_path_scratch, &zero);
  if (!r)
    return NULL;
  dc_fill_header(&r->hdr, kind, ts);
  r->file.ino = 0;
  r->file.dev = 0;
  r->file.mode = 0;
  r->len = 0;
  r->raw_len = 0;
  r->slot = 0;
  r->truncated = 0;
  return r;
}

static __always_inline void dc_path_submit(struct dc_path_record* r, __u32 len)
{
  __u64 size = __builtin_offsetof(struct dc_path_record, data) + len;
  if (size > sizeof(*r))
    size = sizeof(*r);
  r->len = len;
  if (bpf_ringbuf_output(&dc_events, r, size, dc_submit_flags()))
    dc_count_loss(DC_LOSS_RECORD_RING_FULL);
}

/* Path records are built by global functions: the verifier checks a global function once, on
 * its own, where an inlined one is checked again for every state of every caller that reaches
 * it (half of the 32,000 instructions verified for dc_syscall_exit were its two call paths and
 * its file name). A global function takes scalars (a kernel pointer as its address) or a pointer
 * to memory it may read and write (a thread's state: dc_stage_flush), which it checks for NULL. */
#define DC_GLOBAL __attribute__((noinline))

/* Emits the absolute path of the open file at address `file` as a DC_REC_FILE_NAME record. */
DC_GLOBAL int dc_emit_file_name(__u64 file, __u64 ts)
{
  struct file* f = dc_cast(file, file);
  struct dc_path_record* r = dc_path_begin(DC_REC_FILE_NAME, ts);
  if (!r || !f)
    return 0;
  dc_file_ref_of(f, &r->file);
  struct dentry* d = BPF_CORE_READ(f, f_path.dentry);
  struct vfsmount* m = BPF_CORE_READ(f, f_path.mnt);
  __u32 len = dc_walk_path(d, m, r, 0);
  dc_path_submit(r, len);
  return 0;
}

/* What a layer holds back per thread (staged records, an open fault) goes out when the thread
 * exits and, for threads alive at the end of a run, from a task iterator user space runs once the
 * programs are detached (layer::flush_stages). One definition of that pair of programs:
 * `storage` is the layer's task-storage map, flush(task, state) sends a thread's state. */
#define DC_FLUSH_AT_EXIT_AND_END(exit_prog, iter_prog, storage, flush)   \
  SEC("tp_btf/sched_process_exit")                                       \
  int BPF_PROG(exit_prog, struct task_struct* task)                      \
  {                                                                      \
    void* state = bpf_task_storage_get(&storage, task, 0, 0);            \
    if (state)                                                           \
      flush(task, state);                                                \
    return 0;                                                            \
  }                                                                      \
                                                                         \
  SEC("iter/task")                                                       \
  int iter_prog(struct bpf_iter__task* ctx)                              \
  {                                                                      \
    struct task_struct* task = ctx->task;                                \
    void* state = task ? bpf_task_storage_get(&storage, task, 0, 0) : 0; \
    if (state)                                                           \
      flush(task, state);                                                \
    return 0;                                                            \
  }

#include "thread_state.bpf.h"
#include "profile.bpf.h"
#include "fs_pending.bpf.h"

#endif
