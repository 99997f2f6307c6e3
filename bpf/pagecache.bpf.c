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
  __uint(max_entries, 65536);
  __type(key, struct dc_pagecache_file);
  __type(value, __u32);
} dc_pagecache_owner SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct dc_pagecache_key);
  __type(value, struct dc_pagecache_counts);
} dc_pagecache SEC(".maps");

static __always_inline struct dc_pagecache_counts* dc_counts_of(__u32 tgid, __u32 dev, __u64 ino)
{
  struct dc_pagecache_key key = {.tgid = tgid, .dev = dev, .ino = ino};
  struct dc_pagecache_counts* c = bpf_map_lookup_elem(&dc_pagecache, &key);
  if (c)
    return c;
  struct dc_pagecache_counts zero = {};
  bpf_map_update_elem(&dc_pagecache, &key, &zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(&dc_pagecache, &key);
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

/* The classic tracepoint: it carries the folio's order, computed by the kernel. */
SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int dc_pagecache_add(struct trace_event_raw_mm_filemap_op_page_cache* ctx)
{
  struct dc_pagecache_counts* c = dc_counts_for(ctx->s_dev, ctx->i_ino);
  if (c)
    __sync_fetch_and_add(&c->added, 1ULL << (ctx->order & 31));
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
SEC("tracepoint/ext4/ext4_writepages_result")
int dc_pagecache_ext4_written(struct trace_event_raw_ext4_writepages_result* ctx)
{
  if (ctx->pages_written <= 0)
    return 0;
  struct dc_pagecache_counts* c = dc_counts_of_owner(ctx->dev, ctx->ino);
  if (c)
    __sync_fetch_and_add(&c->written_back, ctx->pages_written);
  return 0;
}

/* iomap writeback (xfs and others): one folio range. */
SEC("tracepoint/iomap/iomap_writeback_folio")
int dc_pagecache_iomap_written(struct trace_event_raw_iomap_range_class* ctx)
{
  struct dc_pagecache_counts* c = dc_counts_of_owner(ctx->dev, ctx->ino);
  if (c)
    __sync_fetch_and_add(&c->written_back, dc_pages_of(ctx->length));
  return 0;
}

SEC("tracepoint/filemap/mm_filemap_delete_from_page_cache")
int dc_pagecache_evicted(struct trace_event_raw_mm_filemap_op_page_cache* ctx)
{
  struct dc_pagecache_counts* c = dc_counts_of_owner(ctx->s_dev, ctx->i_ino);
  if (c)
    __sync_fetch_and_add(&c->evicted, 1ULL << (ctx->order & 31));
  return 0;
}
