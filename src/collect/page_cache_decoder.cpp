// The PAGECACHE layer's in-kernel counts: charged to files by name like events are, summed in the
// summary, and written to the trace as one metadata line per process and file: run totals, not
// samples in time (README "The trace file").
#include <sys/stat.h>

#include "collect/decoder.h"
#include "core/category.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"

namespace dc {

void decoder::decode_page_cache(const dc_pagecache_key& key, const dc_pagecache_counts& c)
{
  if (!sinks_.summary)
    return;
  // The map keys files by identity alone; any mode but a socket's or a pipe's names one the
  // trace never opened by that identity (fallback_name).
  uint64_t fhash = file_hash(dc_file_ref{key.ino, key.dev, S_IFREG}, key.tgid, -1);
  page_cache_counts counts{
      .added = c.added, .dirtied = c.dirtied, .written_back = c.written_back, .evicted = c.evicted};
  sinks_.summary->page_cache().add_kernel_counts(process_of(key.tgid), fhash, counts);
}

void decoder::write_page_cache_counters(uint64_t now_us)
{
  if (!sinks_.trace || !sinks_.summary)
    return;
  for (const auto& [key, c] : sinks_.summary->page_cache().by_file()) {
    // Processes folded by command have no pid to write them under: the summary has them.
    if (key.first & folded_key_bit)
      continue;
    trace_event ev;
    ev.name = "page_cache";
    ev.category = category::pagecache;
    ev.pid = ev.tid = pid_of(key.first);
    ev.process = key.first;
    ev.ts_us = now_us;
    ev.fhash = key.second;
    ev.add_arg("hits", static_cast<int64_t>(c.hits()));
    ev.add_arg("misses", static_cast<int64_t>(c.misses()));
    ev.add_arg("pages_read", static_cast<int64_t>(c.pages_read));
    ev.add_arg("pages_added", static_cast<int64_t>(c.added));
    ev.add_arg("pages_dirtied", static_cast<int64_t>(c.dirtied));
    ev.add_arg("pages_written_back", static_cast<int64_t>(c.written_back));
    ev.add_arg("pages_evicted", static_cast<int64_t>(c.evicted));
    sinks_.trace->write_totals(ev, trace_names_now());
  }
}

}  // namespace dc
