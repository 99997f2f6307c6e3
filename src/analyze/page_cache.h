// The "page_cache" section: the tracer's per process and file page-cache counts (one PAGECACHE
// "page_cache" counter line per process and file at the end of a run, counted as bcc's
// cachestat counts: misses = pages added minus pages dirtied, hits = pages read minus misses,
// each clamped at zero per process and file), summed per process, per file and for the run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct page_cache {
  // hits, misses, pages_read, pages_added, pages_dirtied, pages_written_back, pages_evicted
  using counts = std::array<uint64_t, 7>;
  using process_key = std::pair<uint64_t, uint64_t>;  // (hhash, pid)
  std::map<std::pair<process_key, uint64_t>, counts> by_file;

  void add(const record& r);
  void merge(const page_cache& other);
  nlohmann::json partial() const;
  static dc::result<page_cache> from_partial(const nlohmann::json& j);
  // {"hits","misses","hit_ratio","written_back","evicted","pages_read",..,"processes":[..],"files":[..]}
  nlohmann::json report(const name_map& names) const;
};

}  // namespace dc::analyze
