/* The page-cache layer (cat PAGECACHE), counted as bcc's cachestat counts, from tracepoints:
 * pages a traced process brought into the cache (its reads and the readahead they triggered)
 * and pages it dirtied, per process and file, aggregated in the kernel. Misses are pages added
 * minus pages dirtied (a buffered write adds pages that were never read); user space turns the
 * pages the process read into hits. Writeback and eviction are done by whoever the kernel
 * picks (a flusher, kswapd, drop_caches, an fsync): they are charged to the traced process
 * that last brought the file's pages in or dirtied them, as block writeback is. */
#include "common.bpf.h"

struct dc_pagecache_file {
  __u32 dev;
  __u32 reserved;
  __u64 ino;
};

/* file -> the traced process that last added or dirtied its pages */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 65536);
  __type(key, struct dc_pagecache_file);
  __type(value, __u32);
} dc_pagecache_owner SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC); /* created at once; elements as they come */
  __uint(max_entries, 65536);
  __type(key, struct dc_pagecache_key);
  __type(value, struct dc_pagecache_counts);
} dc_pagecache_files SEC(".maps");

static __always_inline struct dc_pagecache_counts* dc_counts_of(__u32 tgid, __u32 dev, __u64 ino)
{
  struct dc_pagecache_key key = {.tgid = tgid, .dev = dev, .ino = ino};
  struct dc_pagecache_counts* c = bpf_map_lookup_elem(&dc_pagecache_files, &key);
  if (c)
    return c;
  struct dc_pagecache_counts zero = {};
  bpf_map_update_elem(&dc_pagecache_files, &key, &zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(&dc_pagecache_files, &key);
}

/* The counts of the current process for a file, if it is traced; it becomes the file's owner. */
static __always_inline struct dc_pagecache_counts* dc_counts_for(__u32 dev, __u64 ino)
{
  __u32 tgid = bpf_get_current_pid_tgid() >> 32;
  if (!dc_is_traced(tgid))
    return NULL;
  struct dc_pagecache_file file = {.dev = dev, .ino = ino};
  __u32* owner = bpf_map_lookup_elem(&dc_pagecache_owner, &file);
  if (!owner || *owner != tgid)
    bpf_map_update_elem(&dc_pagecache_owner, &file, &tgid, BPF_ANY);
  return dc_counts_of(tgid, dev, ino);
}

/* The counts of the file's owner, whoever the current task is. */
static __always_inline struct dc_pagecache_counts* dc_counts_of_owner(__u32 dev, __u64 ino)
{
  struct dc_pagecache_file file = {.dev = dev, .ino = ino};
  __u32* owner = bpf_map_lookup_elem(&dc_pagecache_owner, &file);
  return owner ? dc_counts_of(*owner, dev, ino) : NULL;
}

/* Every hook is a raw (tp_btf) tracepoint, none a classic one: detaching a classic tracepoint's
 * perf event waits for RCU grace periods (~70 ms each here), which made the end of every run
 * 0.3 s longer. */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(dc_pagecache_add, struct folio* folio)
{
  struct dc_file_ref f;
  dc_mapping_file(dc_plain(folio)->mapping, &f);
  struct dc_pagecache_counts* c = dc_counts_for(f.dev, f.ino);
  if (c)
    __sync_fetch_and_add(&c->added, dc_folio_pages(folio));
  return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(dc_pagecache_dirty, struct folio* folio, struct address_space* mapping)
{
  if (!mapping)
    return 0;
  struct dc_file_ref file;
  dc_mapping_file(mapping, &file);
  struct dc_pagecache_counts* c = dc_counts_for(file.dev, file.ino);
  if (!c)
    return 0;
  __sync_fetch_and_add(&c->dirtied, dc_folio_pages(folio));
  return 0;
}

/* ext4 writeback, by the flusher or an fsync: pages written for one inode. */
SEC("tp_btf/ext4_writepages_result")
int BPF_PROG(dc_pagecache_ext4_written, struct inode* inode, struct writeback_control* wbc, int ret,
             int pages_written)
{
  if (pages_written <= 0)
    return 0;
  struct dc_file_ref f;
  dc_inode_ref(inode, &f);
  struct dc_pagecache_counts* c = dc_counts_of_owner(f.dev, f.ino);
  if (c)
    __sync_fetch_and_add(&c->written_back, pages_written);
  return 0;
}

/* iomap writeback (xfs and others): one folio range. */
SEC("tp_btf/iomap_writeback_folio")
int BPF_PROG(dc_pagecache_iomap_written, struct inode* inode, loff_t offset, u64 length)
{
  struct dc_file_ref f;
  dc_inode_ref(inode, &f);
  struct dc_pagecache_counts* c = dc_counts_of_owner(f.dev, f.ino);
  if (c)
    __sync_fetch_and_add(&c->written_back, dc_pages_of(length));
  return 0;
}

/* Called before the folio leaves its mapping: folio->mapping still names the file. */
SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(dc_pagecache_evicted, struct folio* folio)
{
  struct dc_file_ref f;
  dc_mapping_file(dc_plain(folio)->mapping, &f);
  struct dc_pagecache_counts* c = dc_counts_of_owner(f.dev, f.ino);
  if (c)
    __sync_fetch_and_add(&c->evicted, dc_folio_pages(folio));
  return 0;
}
