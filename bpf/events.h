/* Records shared between the BPF programs and user space.
 * Plain C with fixed-width types only (no vmlinux.h), so both sides compile it. */
#ifndef DATACRUMBS_EVENTS_H
#define DATACRUMBS_EVENTS_H

#ifdef __BPF__
typedef __u8 dc_u8;
typedef __s8 dc_s8;
typedef __u16 dc_u16;
typedef __u32 dc_u32;
typedef __u64 dc_u64;
typedef __s64 dc_s64;
typedef __s32 dc_s32;
#else
#include <stdint.h>
typedef uint8_t dc_u8;
typedef int8_t dc_s8;
typedef uint16_t dc_u16;
typedef uint32_t dc_u32;
typedef uint64_t dc_u64;
typedef int64_t dc_s64;
typedef int32_t dc_s32;

#endif

#define DC_MAX_SYSCALL_NR 512 /* size of the per-syscall spec table */
#define DC_PATH_MAX 1024      /* bytes of a path built from dentries */
#define DC_NAME_MAX 256       /* bytes of one path component or user string */
#define DC_ARGV_MAX 256       /* bytes of a command line kept per exec */
#define DC_COMM_LEN 16
/* The launcher variables an exec keeps (task_record.bpf.h: DC_RANK_VARIABLES), each at most
 * DC_RANK_ENTRY_MAX - 1 bytes with its NUL ("OMPI_COMM_WORLD_RANK=" and ten digits fit), each
 * at most once: DC_RANK_ENV_MAX holds them all. */
#define DC_RANK_VARIABLE_COUNT 11
#define DC_RANK_ENTRY_MAX 40
#define DC_RANK_ENV_MAX 432 /* >= DC_RANK_VARIABLE_COUNT * (DC_RANK_ENTRY_MAX - 1) */

/* File types as the kernel's i_mode encodes them (a dc_file_ref's mode keeps only these bits). */
#define DC_NR_MMAP 9 /* x86-64 */
#define DC_PROT_EXEC 0x4
#define DC_S_IFMT 0170000
#define DC_S_IFREG 0100000
#define DC_S_IFBLK 0060000

/* File data: a regular file's or a block device's bytes, unlike a socket's or a pipe's. Only
 * these count as the application's I/O (amplification, the page cache); the one test of it,
 * in the kernel and in user space. */
static inline int dc_is_file_data(dc_u32 mode)
{
  dc_u32 type = mode & DC_S_IFMT;
  return type == DC_S_IFREG || type == DC_S_IFBLK;
}

/* The traced set's filter (common.bpf.h dc_traced_slots): slot tgid % DC_TRACED_SLOTS holds the
 * one traced TGID that maps there, DC_TRACED_SHARED when more than one did, 0 when none. */
#define DC_TRACED_SLOTS (1 << 14)
#define DC_TRACED_SHARED 0xffffffffU

/* Values of the traced-process map (keyed by TGID). */
enum dc_trace_state {
  DC_TRACE_ARMED = 1,  /* will be traced from its next exec on */
  DC_TRACE_ACTIVE = 2, /* traced now */
};

enum dc_record_kind {
  DC_REC_SYSCALL = 1,   /* struct dc_syscall_event */
  DC_REC_FILE_NAME = 2, /* struct dc_path_record: (dev, ino) is named by a path */
  DC_REC_CALL_PATH = 3, /* struct dc_path_record: path argument of the next syscall of tid */
  DC_REC_TASK = 4,      /* struct dc_task_event */
  DC_REC_BLOCK = 5,     /* struct dc_block_event */
  DC_REC_NET = 6,       /* struct dc_net_event */
  DC_REC_FAULT = 7,     /* struct dc_fault_event */
  DC_REC_FS = 8,        /* struct dc_fs_event */
  DC_REC_UPROBE = 9,    /* struct dc_uprobe_event */
  DC_REC_STAGED = 10,   /* a header, then a run of union dc_staged_record of one thread */
  DC_REC_PROFILE = 11,  /* struct dc_profile_record (counters.h): a thread's coalesced counts */
};

/* User-space probes attach per traced process (links filtered by its pid, so no other process
 * gets their breakpoints). A process that joins the traced set at fork or by registering is
 * stopped (SIGSTOP) until user space has attached its probes and sent SIGCONT; these records,
 * on their own small ring (dc_holds), say so, and when such a process is gone. */
enum dc_hold_op {
  DC_HOLD_STOPPED = 1, /* tgid is stopped: attach its probes, then continue it */
  DC_HOLD_GONE = 2,    /* tgid's last thread exited: its probes can go */
};

struct dc_hold_record {
  dc_u32 tgid;
  dc_u32 op; /* enum dc_hold_op */
};

#include "loss_kinds.h"

struct dc_record_header {
  dc_u32 kind;
  dc_u32 tgid;
  dc_u32 tid;
  dc_u32 reserved;
  dc_u64 ts_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
};

/* A file as the kernel sees it. mode holds the S_IFMT bits; mode == 0 means "no file". */
struct dc_file_ref {
  dc_u64 ino;
  dc_u32 dev;
  dc_u32 mode;
};

/* Where an event sits in its thread's call tree (DFTracer level and p_idx). level 0: nowhere
 * (the event happened outside any traced call of the thread, or for no thread at all). */
struct dc_nesting {
  dc_u64 id;
  dc_s64 parent;
  dc_u32 level;
  dc_u32 flags; /* DC_NEST_* */
};

/* dc_nesting.flags: the parent (a user-space call) had returned, so its record went to the ring
 * before this one (a fault is sent when the thread's next fault begins). User space writes a
 * parent before its children, and holds a child only while its parent is still to come. */
#define DC_NEST_PARENT_SENT 1u

/* Where the file of a syscall comes from (dc_syscall_spec.fd_a / fd_b). */
#define DC_ARG_NONE (-1)
#define DC_ARG_RET 6 /* the return value is a new file descriptor */

/* How the kernel side treats one syscall number; filled by user space from its table. */
struct dc_syscall_spec {
  dc_u8 traced;
  dc_s8 fd_a;        /* argument index of the file descriptor, DC_ARG_RET, or DC_ARG_NONE */
  dc_s8 fd_b;        /* second file descriptor: where DC_MOVES_COPY calls write (fd_a: read) */
  dc_u8 fd_at_entry; /* resolve fd_a at entry: the call removes it (close) */
  dc_s8 path_a;      /* argument index of a user path string, or DC_ARG_NONE */
  dc_s8 path_b;      /* second path (rename, link) */
  dc_s8 dirfd_a;     /* argument index of the directory fd path_a is relative to */
  dc_s8 dirfd_b;
  /* Profile mode: DC_MOVES_* (a positive return value is bytes moved that way), and the
   * argument index of the file offset, or DC_ARG_NONE (pages a read touched need it). */
  dc_u8 moves;
  dc_s8 offset_arg;
};

#define DC_MOVES_NONE 0
#define DC_MOVES_READ 1
#define DC_MOVES_WRITE 2
/* Data moves between two files (copy_file_range, sendfile, splice, tee): read from fd_a,
 * written to fd_b; a positive return value is bytes moved both ways. */
#define DC_MOVES_COPY 3

/* A buffered read or write that ended with a call on one file, carried in the call's record
 * (one event per call, not a second one for the filesystem's part). */
struct dc_folded_fs {
  dc_u64 first;     /* read: the first page asked of the cache; write: the byte offset */
  dc_u32 page_span; /* read: last page asked - first */
  dc_u32 op;        /* DC_FS_BUFFERED_READ or _WRITE; 0: none (overlaps file_b.mode) */
};

struct dc_syscall_event {
  struct dc_record_header hdr; /* ts_ns = entry time */
  dc_u64 dur_ns;
  dc_s64 ret;
  dc_u64 args[6];
  struct dc_file_ref file_a;
  union {
    struct dc_file_ref file_b; /* a call with a second descriptor (spec fd_b) */
    struct dc_folded_fs fs;    /* any other call */
  };
  dc_u32 nr;
  dc_u32 level;  /* nesting depth, 1 = outermost (DFTracer level) */
  dc_u64 id;     /* this call's event id (see dc_event_id) */
  dc_s64 parent; /* id of the enclosing event of the thread, -1 for none (DFTracer p_idx) */
};

/* Records wait in a per-thread stage of this many and reach the ring together as one
 * DC_REC_STAGED record (see union dc_staged_record). */
#define DC_STAGE_EVENTS 16

/* A path as a list of NUL-terminated components, leaf first, root last, in data[0..len). For
 * DC_REC_CALL_PATH, `slot` tells which argument (0 = path_a, 1 = path_b) and data holds the raw
 * user string followed, when that string is relative, by the components of its base directory. */
struct dc_path_record {
  struct dc_record_header hdr;
  struct dc_file_ref file; /* DC_REC_FILE_NAME: the file named */
  dc_u16 len;              /* bytes used in data */
  dc_u16 raw_len;          /* DC_REC_CALL_PATH: bytes of the raw user string incl. its NUL */
  dc_u8 slot;
  dc_u8 truncated; /* the walk stopped before the root: path is partial */
  dc_u8 reserved[2];
  char data[DC_PATH_MAX + DC_NAME_MAX];
};

enum dc_task_op {
  DC_TASK_EXEC = 1,   /* argv holds the new command line */
  DC_TASK_FORK = 2,   /* a new process: ppid is its parent */
  DC_TASK_THREAD = 3, /* a new thread of tgid */
  DC_TASK_EXIT = 4,   /* the whole process exited; exit_code as in wait(2) */
};

struct dc_task_event {
  struct dc_record_header hdr;
  dc_u32 op;
  dc_u32 ppid;
  dc_u32 exit_code;
  dc_u16 argv_len; /* bytes used in argv (NUL-separated arguments) */
  dc_u16 env_len;  /* bytes used in env */
  char comm[DC_COMM_LEN];
  char argv[DC_ARGV_MAX];
  /* DC_TASK_EXEC: the launcher variables of the environment it execs with ("K=V\0K=V\0"),
   * copied at the exec (or registration) itself, so a rank gone by the time user space reads
   * this record keeps its label. */
  char env[DC_RANK_ENV_MAX];
};

/* Block request operations (the kernel's REQ_OP_* values). */
enum dc_block_op {
  DC_BLOCK_READ = 0,
  DC_BLOCK_WRITE = 1,
  DC_BLOCK_FLUSH = 2,
  DC_BLOCK_DISCARD = 3,
};

/* How a block request was charged to a process. */
enum dc_block_cause {
  DC_BLOCK_SUBMITTED = 1, /* a traced thread submitted it (direct I/O, fsync, reads) */
  DC_BLOCK_WRITEBACK = 2, /* a kernel worker wrote pages a traced process dirtied */
};

/* One completed block request, charged to a traced process (hdr.tgid/tid) and, when its pages
 * belong to a file, to that file. hdr.ts_ns is the issue time. */
/* Whether a request's end was seen. The kernel sometimes runs no program for a completion
 * (docs/reliability.md): such a request is written when its address starts another request,
 * with what its issue said and no service time. */
enum dc_block_end {
  DC_BLOCK_END_SEEN = 0,
  DC_BLOCK_END_UNSEEN = 1,
};

struct dc_block_event {
  struct dc_record_header hdr;
  dc_u64 service_ns; /* issue -> complete */
  dc_u64 queue_ns;   /* insert -> issue; 0 when issued without queueing */
  dc_u64 sector;
  struct dc_file_ref file;
  dc_u32 bytes;
  dc_u32 dev; /* kernel encoding (major << 20 | minor) */
  dc_u32 op;  /* enum dc_block_op, or another REQ_OP_* value */
  dc_u32 cause;
  dc_s32 error;
  dc_u32 end;             /* enum dc_block_end */
  struct dc_nesting nest; /* under the system call that submitted it, if one did */
};

enum dc_net_op {
  DC_NET_SEND = 1,       /* bytes sent through a socket (any call: write, send*, ...) */
  DC_NET_RECV = 2,       /* bytes received */
  DC_NET_STATE = 3,      /* TCP state change: old_state -> new_state */
  DC_NET_RETRANSMIT = 4, /* a TCP segment retransmitted */
  DC_NET_DROP = 5,       /* a packet of the socket dropped; reason = enum skb_drop_reason */
};

/* A socket-level event of a traced process. Addresses are in network byte order, IPv4 in the
 * first 4 bytes; ports in host order. */
struct dc_net_event {
  struct dc_record_header hdr;
  dc_s64 bytes; /* send/recv: the result (negative errno on failure) */
  dc_u8 laddr[16];
  dc_u8 raddr[16];
  dc_u32 op;
  dc_u16 family;
  dc_u16 protocol;
  dc_u16 lport;
  dc_u16 rport;
  dc_u32 old_state;
  dc_u32 new_state;
  dc_u32 reason;
  struct dc_nesting nest; /* under the system call it happened in (process context), else none */
};

/* A fault's operation, as profile mode counts it: the kernel's major/minor accounting of it. */
enum dc_fault_op {
  DC_FAULT_MINOR = 0,
  DC_FAULT_MAJOR = 1,
};

/* One page fault of a traced thread on a file-backed mapping. hdr.ts_ns is when the fault
 * began. `major` and `minor` are the kernel's own accounting of the fault (the thread's
 * maj_flt/min_flt deltas across it), so major == 1 means the kernel counted a major fault. */
struct dc_fault_event {
  struct dc_record_header hdr;
  dc_u64 address;
  dc_u64 index;        /* file page the ->fault handler was asked for (if reached) */
  dc_u64 around_first; /* fault-around: file pages [around_first, around_last] were mapped */
  dc_u64 around_last;  /* from the page cache, if fault-around ran (else both 0) */
  struct dc_file_ref file;
  dc_u32 pages_read; /* pages this thread brought into the page cache during the fault */
  dc_u32 major;
  dc_u32 minor;
  dc_u32 error_code; /* x86 page-fault error code: bit 1 = write, bit 2 = user mode */
  dc_u32 flags;      /* DC_FAULT_* */
  /* pages the fault put in the page tables (the process's file RSS rise during it): with large
   * folios a whole folio, which may reach beyond index and the fault-around range */
  dc_u32 pages_mapped;
  struct dc_nesting nest; /* under the user-space call or system call it happened in */
};

enum dc_fs_op {
  DC_FS_FSYNC = 1,
  DC_FS_FDATASYNC = 2,
  DC_FS_DIRECT_READ = 3,
  DC_FS_DIRECT_WRITE = 4,
  DC_FS_FALLOCATE = 5,
  DC_FS_TRUNCATE = 6,
  DC_FS_UNLINK = 7,
  DC_FS_JOURNAL_COMMIT = 8, /* a jbd2 transaction committed while a traced fsync waited on it */
  DC_FS_BUFFERED_READ = 9,  /* a read through the page cache (filemap_read) */
  DC_FS_BUFFERED_WRITE = 10,
};

/* One filesystem operation of a traced thread, from the filesystem's own tracepoints. */
struct dc_fs_event {
  struct dc_record_header hdr; /* ts_ns = start */
  dc_u64 dur_ns;
  dc_u64 offset; /* where it began; a buffered read names pages instead (first_page) */
  dc_u64 bytes;  /* asked for (direct I/O, fallocate); the result is in ret */
  dc_s64 ret;
  struct dc_file_ref file;
  dc_u32 op;             /* enum dc_fs_op */
  dc_u32 journal_tid;    /* DC_FS_JOURNAL_COMMIT: the transaction */
  dc_u32 journal_blocks; /* DC_FS_JOURNAL_COMMIT: blocks written to the journal */
  dc_u32 reserved;
  dc_u64 first_page; /* DC_FS_BUFFERED_READ: the page range the read asked the cache for */
  dc_u64 last_page;
  struct dc_nesting nest; /* under the system call that asked for it */
};

/* A DC_REC_STAGED ring record is a dc_record_header followed by one or more of these: one
 * thread's system calls (DC_REC_SYSCALL) and the FS operations that ended with them
 * (DC_REC_FS), in the order they ended. */
union dc_staged_record {
  struct dc_record_header hdr;
  struct dc_syscall_event syscall;
  struct dc_fs_event fs;
};

#define DC_FAULT_FILEMAP 1u /* the filesystem's ->fault handler ran (filemap_fault) */
#define DC_FAULT_AROUND 2u  /* fault-around mapped pages already in the cache */
#define DC_FAULT_KERNEL 4u  /* taken in kernel mode on a user address (e.g. copy_to_user) */
/* pages_mapped is not known: the process's first file RSS change seen was during this fault */
#define DC_FAULT_MAPPED_UNKNOWN 8u

/* Nesting across layers: each thread keeps a stack of its open user-space calls. Event ids are
 * (tid << 30 | a per-thread sequence number): unique in a trace without a shared counter, and
 * below 2^53, so exact in every JSON reader. */
#define DC_NEST_MAX 16
#define DC_ID_SEQ_BITS 30
#define DC_UPROBE_STR 128

/* What a probed function's entry captures besides its registers. */
struct dc_uprobe_spec {
  dc_s8 str_arg;         /* argument read as a user string (a file or dataset name), or -1 */
  dc_s8 item_size_arg;   /* fread/fwrite: bytes = ret * this argument (profile mode), or -1 */
  dc_s8 deref_arg;       /* argument that points at the 8 bytes wanted in its place, or -1 */
  dc_u8 deref_at_return; /* 1: read them at return (an out parameter), 0: at entry */
  dc_u8 reserved[4];
};

/* One returned call of a probed user-space function. hdr.ts_ns is its entry. */
struct dc_uprobe_event {
  struct dc_record_header hdr;
  dc_u64 dur_ns;
  dc_u64 id;
  dc_s64 parent;
  dc_u64 args[6];
  dc_s64 ret;
  dc_u32 probe; /* the attach cookie: index in user space's probe table */
  dc_u32 level;
  char str[DC_UPROBE_STR]; /* spec.str_arg's string, NUL-terminated, or "" */
};

#endif
