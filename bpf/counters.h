/* The keys and counts of what the kernel aggregates in maps instead of sending records: profile
 * mode's counters, the page cache's counts per process and file, and the code files known to
 * need no hold. Shared by the BPF programs and user space, like events.h. */
#ifndef DATACRUMBS_COUNTERS_H
#define DATACRUMBS_COUNTERS_H

#include "events.h"

/* Profile mode: instead of one record per event, the kernel adds each event to a counter per
 * process, layer, operation and file, per interval (epoch = completion time / interval), in the
 * per-CPU hash dc_profile. User space reads and deletes the epochs that have ended. */
enum dc_profile_layer {
  DC_PROF_POSIX = 1,  /* op: syscall number */
  DC_PROF_UPROBE = 2, /* op: probe index */
  DC_PROF_BLOCK = 3,  /* op: REQ_OP_* */
  DC_PROF_FS = 4,     /* op: enum dc_fs_op */
  DC_PROF_NET = 5,    /* op: enum dc_net_op */
  DC_PROF_FAULT = 6,  /* op: enum dc_fault_op */
};

struct dc_profile_key {
  dc_u64 epoch;
  struct dc_file_ref file;  /* mode 0: no file */
  struct dc_file_ref file2; /* DC_MOVES_COPY calls: the file written (file: the file read) */
  dc_u32 tgid;
  dc_u32 layer; /* enum dc_profile_layer */
  dc_u32 op;
  /* POSIX: the FS operation (enum dc_fs_op) each call of this counter ended on its file, a
   * buffered read or write, whose time and bytes are the call's (one counter for both, as trace
   * mode folds it into the call's record); user space splits it into its two counters. 0: none. */
  dc_u32 folded_fs;
};

struct dc_profile_counts {
  dc_u64 count;
  dc_u64 time_ns;
  dc_u64 bytes;
  /* POSIX reads of files: pages the reads touched (the page-cache hit ratio). BLOCK: requests of
   * `count` whose end went unseen (bpf/block.bpf.c), in `bytes` but not in `time_ns`. */
  dc_u64 pages;
};

/* Profile mode: counts a thread coalesced under one key (bpf/profile.bpf.h), sent through the
 * ring when its slot is evicted or flushed; user space sums them per key. hdr.ts_ns is 0. */
struct dc_profile_record {
  struct dc_record_header hdr;
  struct dc_profile_key key;
  struct dc_profile_counts counts;
};

/* A file whose executable mappings need no hold (map dc_code_known, filled by user space): one
 * the uprobe layer links by name, or one it searched and found no probed function in. */
struct dc_code_key {
  dc_u64 ino;
  dc_u32 dev; /* kernel encoding */
  dc_u32 reserved;
};

/* The page-cache layer's counts, aggregated in the kernel (map dc_pagecache_files of
 * bpf/pagecache.bpf.c) and read once at the end of a run: per traced process and file. */
struct dc_pagecache_key {
  dc_u32 tgid;
  dc_u32 dev; /* kernel encoding */
  dc_u64 ino;
};

struct dc_pagecache_counts {
  dc_u64 added;
  dc_u64 dirtied;
  dc_u64 written_back; /* pages written to the device */
  dc_u64 evicted;      /* pages removed from the cache */
};

#endif
