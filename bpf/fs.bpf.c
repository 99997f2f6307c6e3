/* The filesystem layer (cat FS): operations as the filesystem sees them, from its tracepoints.
 * - direct I/O, ext4 and xfs alike: iomap_dio_rw_begin .. iomap_dio_complete, matched by the
 *   kiocb (an asynchronous completion runs elsewhere);
 * - ext4 fsync/fdatasync, fallocate, truncate, unlink: their _enter/_exit pairs;
 * - buffered reads and writes, and xfs's operations, which end with their system call
 *   (fs_pending.bpf.h);
 * - jbd2 journal commits, charged to the traced thread whose fsync on that device was waiting
 *   when the commit started, else to the first traced thread that started a handle in the
 *   committed transaction (its changes are what the commit writes). */
#include "common.bpf.h"

/* System-call numbers this layer tells apart, set by user space from its syscall table (the
 * only list of syscall numbers, src/core/syscall_table.cpp) before load. */
const volatile __u32 dc_nr_fdatasync = ~0u;
const volatile __u32 dc_nr_fallocate = ~0u; /* (fd, mode, offset, len) */

struct dc_fs_key {
  __u64 id; /* the thread (tid) or the kiocb */
  __u32 op;
  __u32 reserved;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH); /* an exit never seen cannot leak an entry for good */
  __uint(max_entries, 16384);
  __type(key, struct dc_fs_key);
  __type(value, struct dc_fs_event);
} dc_fs_open SEC(".maps");

/* Device -> the traced thread in fsync on it now (its record header). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct dc_record_header);
} dc_fs_fsync_waiter SEC(".maps");

/* (device, transaction) -> the first traced thread that started a handle in it. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 4096);
  __type(key, __u64);
  __type(value, struct dc_record_header);
} dc_fs_transaction_owner SEC(".maps");

/* (device, transaction) -> the open journal-commit record. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 1024);
  __type(key, __u64);
  __type(value, struct dc_fs_event);
} dc_fs_commits SEC(".maps");

static __always_inline __u64 dc_tid(void)
{
  return (__u32)bpf_get_current_pid_tgid();
}

/* Opens an operation of the current thread, if it is traced. */
static __always_inline struct dc_fs_event* dc_fs_begin(__u64 id, __u32 op, struct inode* inode)
{
  if (!dc_is_traced(bpf_get_current_pid_tgid() >> 32))
    return NULL;
  struct dc_fs_key key = {.id = id, .op = op};
  struct dc_fs_event ev = {};
  dc_fill_header(&ev.hdr, DC_REC_FS, bpf_ktime_get_ns());
  dc_nest_under_syscall(bpf_get_current_task_btf(), &ev.nest);
  ev.op = op;
  dc_inode_ref(inode, &ev.file);
  bpf_map_update_elem(&dc_fs_open, &key, &ev, BPF_ANY);
  return bpf_map_lookup_elem(&dc_fs_open, &key);
}

/* Closes an operation: its duration and result, then the record. */
static __always_inline void dc_fs_end(__u64 id, __u32 op, __s64 ret)
{
  struct dc_fs_key key = {.id = id, .op = op};
  struct dc_fs_event* ev = bpf_map_lookup_elem(&dc_fs_open, &key);
  if (!ev)
    return;
  ev->dur_ns = bpf_ktime_get_ns() - ev->hdr.ts_ns;
  ev->ret = ret;
  dc_fs_send(ev, NULL);
  bpf_map_delete_elem(&dc_fs_open, &key);
}

SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(dc_fs_dio_begin, struct kiocb* iocb, struct iov_iter* iter, unsigned int flags, size_t done)
{
  __u32 op = iter->data_source ? DC_FS_DIRECT_WRITE : DC_FS_DIRECT_READ;
  struct file* f = dc_plain(iocb)->ki_filp;
  struct inode* inode = f ? dc_plain(f)->f_inode : NULL;
  /* A synchronous one (no completion callback) begins and ends in this thread, inside its system
   * call: it is kept in the thread's state, not in dc_fs_open, whose LRU update, lookups and
   * delete made this pair of programs ~1.8 us a direct read (docs/performance.md). */
  struct dc_fs_event* ev = NULL;
  if (!dc_plain(iocb)->ki_complete)
    ev = dc_fs_pending_begin(op, inode, 0, (__u64)iocb);
  if (!ev)
    ev = dc_fs_begin((__u64)iocb, op, inode);
  if (!ev)
    return 0;
  ev->offset = iocb->ki_pos;
  ev->bytes = iter->count;
  return 0;
}

SEC("tp_btf/iomap_dio_complete")
int BPF_PROG(dc_fs_dio_complete, struct kiocb* iocb, int error, ssize_t ret)
{
  __s64 result = error ? error : ret;
  struct dc_thread* t = dc_thread_of(bpf_get_current_task_btf());
  if (t && t->fs_open && t->fs_iocb == (__u64)iocb) {
    dc_fs_pending_end(t, result);
    return 0;
  }
  /* Either direction: only one of the two keys exists for this kiocb. */
  dc_fs_end((__u64)iocb, DC_FS_DIRECT_WRITE, result);
  dc_fs_end((__u64)iocb, DC_FS_DIRECT_READ, result);
  return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(dc_fs_fsync_enter, struct file* file, int datasync)
{
  struct inode* inode = dc_plain(file)->f_inode;
  struct dc_fs_event* ev = dc_fs_begin(dc_tid(), DC_FS_FSYNC, inode);
  if (!ev)
    return 0;
  ev->op = datasync ? DC_FS_FDATASYNC : DC_FS_FSYNC; /* the key stays DC_FS_FSYNC */
  __u32 dev = ev->file.dev;
  bpf_map_update_elem(&dc_fs_fsync_waiter, &dev, &ev->hdr, BPF_ANY);
  return 0;
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(dc_fs_fsync_exit, struct inode* inode, int ret)
{
  __u32 dev = dc_plain(inode)->i_sb->s_dev;
  struct dc_record_header* waiter = bpf_map_lookup_elem(&dc_fs_fsync_waiter, &dev);
  if (waiter && waiter->tid == dc_tid())
    bpf_map_delete_elem(&dc_fs_fsync_waiter, &dev);
  dc_fs_end(dc_tid(), DC_FS_FSYNC, ret);
  return 0;
}

SEC("tp_btf/ext4_fallocate_enter")
int BPF_PROG(dc_fs_fallocate_enter, struct inode* inode, loff_t offset, loff_t len, int mode)
{
  struct dc_fs_event* ev = dc_fs_begin(dc_tid(), DC_FS_FALLOCATE, inode);
  if (ev) {
    ev->offset = offset;
    ev->bytes = len;
  }
  return 0;
}

SEC("tp_btf/ext4_fallocate_exit")
int BPF_PROG(dc_fs_fallocate_exit, struct inode* inode, loff_t offset, unsigned int max_blocks, int ret)
{
  dc_fs_end(dc_tid(), DC_FS_FALLOCATE, ret);
  return 0;
}

SEC("tp_btf/ext4_truncate_enter")
int BPF_PROG(dc_fs_truncate_enter, struct inode* inode)
{
  struct dc_fs_event* ev = dc_fs_begin(dc_tid(), DC_FS_TRUNCATE, inode);
  if (ev)
    ev->offset = inode->i_size; /* the new size */
  return 0;
}

SEC("tp_btf/ext4_truncate_exit")
int BPF_PROG(dc_fs_truncate_exit, struct inode* inode)
{
  dc_fs_end(dc_tid(), DC_FS_TRUNCATE, 0);
  return 0;
}

SEC("tp_btf/ext4_unlink_enter")
int BPF_PROG(dc_fs_unlink_enter, struct inode* parent, struct dentry* dentry)
{
  dc_fs_begin(dc_tid(), DC_FS_UNLINK, dc_plain(dentry)->d_inode);
  return 0;
}

SEC("tp_btf/ext4_unlink_exit")
int BPF_PROG(dc_fs_unlink_exit, struct dentry* dentry, int ret)
{
  dc_fs_end(dc_tid(), DC_FS_UNLINK, ret);
  return 0;
}

/* journal_t is a typedef: dc_plain needs the struct itself. */
static __always_inline __u32 dc_journal_dev(journal_t* journal)
{
  struct journal_s* j = dc_cast(journal, journal_s);
  return j->j_fs_dev->bd_dev;
}

static __always_inline __u64 dc_commit_key(journal_t* journal, transaction_t* transaction)
{
  __u32 dev = dc_journal_dev(journal);
  return ((__u64)dev << 32) | (__u32)transaction->t_tid;
}

SEC("tp_btf/jbd2_handle_start")
int BPF_PROG(dc_fs_handle_start, dev_t dev, tid_t tid, unsigned int type, unsigned int line_no,
             int requested_blocks)
{
  if (!dc_is_traced(bpf_get_current_pid_tgid() >> 32))
    return 0;
  __u64 key = ((__u64)dev << 32) | (__u32)tid;
  if (bpf_map_lookup_elem(&dc_fs_transaction_owner, &key))
    return 0;
  struct dc_record_header owner;
  dc_fill_header(&owner, DC_REC_FS, 0);
  bpf_map_update_elem(&dc_fs_transaction_owner, &key, &owner, BPF_NOEXIST);
  return 0;
}

SEC("tp_btf/jbd2_start_commit")
int BPF_PROG(dc_fs_commit_start, journal_t* journal, transaction_t* transaction)
{
  __u32 dev = dc_journal_dev(journal);
  struct dc_record_header* waiter = bpf_map_lookup_elem(&dc_fs_fsync_waiter, &dev);
  __u64 key = dc_commit_key(journal, transaction);
  if (!waiter)
    waiter = bpf_map_lookup_elem(&dc_fs_transaction_owner, &key);
  if (!waiter)
    return 0;
  struct dc_fs_event ev = {};
  ev.hdr = *waiter;
  ev.hdr.ts_ns = bpf_ktime_get_ns();
  ev.op = DC_FS_JOURNAL_COMMIT;
  ev.file.dev = dev;
  ev.journal_tid = transaction->t_tid;
  bpf_map_update_elem(&dc_fs_commits, &key, &ev, BPF_ANY);
  bpf_map_delete_elem(&dc_fs_transaction_owner, &key);
  return 0;
}

SEC("tp_btf/jbd2_run_stats")
int BPF_PROG(dc_fs_commit_stats, dev_t dev, tid_t tid, struct transaction_run_stats_s* stats)
{
  __u64 key = ((__u64)dev << 32) | (__u32)tid;
  struct dc_fs_event* ev = bpf_map_lookup_elem(&dc_fs_commits, &key);
  if (ev)
    ev->journal_blocks = stats->rs_blocks_logged;
  return 0;
}

SEC("tp_btf/jbd2_end_commit")
int BPF_PROG(dc_fs_commit_end, journal_t* journal, transaction_t* transaction)
{
  __u64 key = dc_commit_key(journal, transaction);
  struct dc_fs_event* ev = bpf_map_lookup_elem(&dc_fs_commits, &key);
  if (!ev)
    return 0;
  ev->dur_ns = bpf_ktime_get_ns() - ev->hdr.ts_ns;
  dc_fs_send(ev, NULL);
  bpf_map_delete_elem(&dc_fs_commits, &key);
  return 0;
}

/* Buffered I/O, any filesystem reading through the page cache (filemap_read): the first pass
 * of a read names the page range it asks for; the read ends with its system call. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(dc_fs_buffered_read, struct address_space* mapping, unsigned long index,
             unsigned long last_index)
{
  struct dc_fs_event* ev =
      dc_fs_pending_begin(DC_FS_BUFFERED_READ, mapping ? dc_plain(mapping)->host : NULL, 1, 0);
  if (ev) {
    ev->first_page = index;
    ev->last_page = last_index;
  }
  return 0;
}

/* ext4's buffered writes, one folio at a time: the first one opens the write. */
static __always_inline void dc_fs_ext4_write(struct inode* inode, loff_t pos)
{
  struct dc_fs_event* ev = dc_fs_pending_begin(DC_FS_BUFFERED_WRITE, inode, 1, 0);
  if (ev)
    ev->offset = pos;
}

SEC("tp_btf/ext4_da_write_begin")
int BPF_PROG(dc_fs_ext4_da_write, struct inode* inode, loff_t pos, unsigned int len)
{
  dc_fs_ext4_write(inode, pos);
  return 0;
}

SEC("tp_btf/ext4_write_begin")
int BPF_PROG(dc_fs_ext4_write_begin, struct inode* inode, loff_t pos, unsigned int len)
{
  dc_fs_ext4_write(inode, pos);
  return 0;
}

SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(dc_fs_xfs_write, struct kiocb* iocb, struct iov_iter* from)
{
  struct dc_fs_event* ev = dc_fs_pending_begin(DC_FS_BUFFERED_WRITE, dc_plain(iocb)->ki_filp->f_inode, 1, 0);
  if (ev) {
    ev->offset = iocb->ki_pos;
    ev->bytes = from->count;
  }
  return 0;
}

/* xfs marks only the start of these: they end with their system call. */
static __always_inline struct inode* dc_xfs_vfs_inode(struct xfs_inode* ip)
{
  return (struct inode*)((void*)ip + bpf_core_field_offset(struct xfs_inode, i_vnode));
}

SEC("tp_btf/xfs_file_fsync")
int BPF_PROG(dc_fs_xfs_fsync, struct xfs_inode* ip)
{
  struct dc_thread* t = dc_thread_of(bpf_get_current_task_btf());
  __u32 op = t && t->nr == dc_nr_fdatasync ? DC_FS_FDATASYNC : DC_FS_FSYNC;
  dc_fs_pending_begin(op, dc_xfs_vfs_inode(ip), 0, 0);
  return 0;
}

static __always_inline void dc_fs_xfs_fallocate(struct xfs_inode* ip)
{
  struct dc_fs_event* ev = dc_fs_pending_begin(DC_FS_FALLOCATE, dc_xfs_vfs_inode(ip), 0, 0);
  struct dc_thread* t = dc_thread_of(bpf_get_current_task_btf());
  if (ev && t && t->nr == dc_nr_fallocate) {
    ev->offset = t->args[2];
    ev->bytes = t->args[3];
  }
}

SEC("tp_btf/xfs_alloc_file_space")
int BPF_PROG(dc_fs_xfs_alloc, struct xfs_inode* ip)
{
  dc_fs_xfs_fallocate(ip);
  return 0;
}

SEC("tp_btf/xfs_free_file_space")
int BPF_PROG(dc_fs_xfs_free, struct xfs_inode* ip)
{
  dc_fs_xfs_fallocate(ip);
  return 0;
}

SEC("tp_btf/xfs_itruncate_extents_start")
int BPF_PROG(dc_fs_xfs_truncate, struct xfs_inode* ip, xfs_fsize_t new_size)
{
  struct dc_fs_event* ev = dc_fs_pending_begin(DC_FS_TRUNCATE, dc_xfs_vfs_inode(ip), 0, 0);
  if (ev)
    ev->offset = new_size;
  return 0;
}

/* xfs_remove names the directory; xfs_iunlink, the file whose last link it removes. */
SEC("tp_btf/xfs_remove")
int BPF_PROG(dc_fs_xfs_remove, struct xfs_inode* dp, const struct xfs_name* name)
{
  dc_fs_pending_begin(DC_FS_UNLINK, dc_xfs_vfs_inode(dp), 0, 0);
  return 0;
}

SEC("tp_btf/xfs_iunlink")
int BPF_PROG(dc_fs_xfs_iunlink, struct xfs_inode* ip)
{
  struct dc_thread* t = dc_thread_of(bpf_get_current_task_btf());
  if (!t || !t->fs_open || t->fs.op != DC_FS_UNLINK)
    return 0;
  struct inode* inode = dc_xfs_vfs_inode(ip);
  dc_inode_ref(inode, &t->fs.file);
  return 0;
}
