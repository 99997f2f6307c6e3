// Page-cache hits and misses per process and file, counted as bcc's cachestat counts: a page
// brought into the cache for the process (by its read or the readahead it triggered) is a miss,
// and hits are the pages it read minus the misses. Pages read come from its read calls; pages
// added and dirtied from the PAGECACHE layer's in-kernel counts.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/event.h"
#include "core/names.h"

namespace dc {

struct page_cache_counts {
  uint64_t pages_read = 0;
  uint64_t added = 0;
  uint64_t dirtied = 0;
  uint64_t written_back = 0;  // pages written to the device (by anyone, for this process's file)
  uint64_t evicted = 0;       // pages removed from the cache
  uint64_t misses() const { return added > dirtied ? added - dirtied : 0; }
  uint64_t hits() const { return pages_read > misses() ? pages_read - misses() : 0; }
};

// Pages a read touched: its byte range when the call has an offset, else whole pages from the
// start of one (a sequential read of aligned buffers, what the position usually is). A profile
// counter carries the sum the kernel made the same way, as its "pages" arg.
uint64_t pages_touched(const trace_event& read);

// The pages an event read as the tally counts them: an application read (POSIX) of a file, else 0.
uint64_t pages_read_by(const trace_event& ev);

class page_cache_tally {
 public:
  page_cache_tally() = default;
  page_cache_tally(const page_cache_tally&) = delete;  // last_ points into its own map
  page_cache_tally& operator=(const page_cache_tally&) = delete;
  void add_read(const trace_event& read);
  // The PAGECACHE layer's in-kernel counts (pages_read is not among them).
  void add_kernel_counts(process_key process, uint64_t fhash, const page_cache_counts& kernel);
  // Adds process `from`'s counts to process `into`'s, file by file (a fold), and forgets `from`.
  // Hits and misses are then split per command and file, not per process.
  void fold(process_key from, process_key into);
  bool empty() const { return by_file_.empty(); }
  using by_process_file = std::map<std::pair<process_key, uint64_t>, page_cache_counts>;
  const by_process_file& by_file() const { return by_file_; }

  nlohmann::json totals_json() const;                      // the whole run
  nlohmann::json process_json(process_key process) const;  // one process
  nlohmann::json files_json(const name_table& names) const;

 private:
  by_process_file by_file_;  // (process, fhash)
  // The entry of the last read added: a storm's reads are of one file, and a map lookup per read
  // was a tenth of the summary's work. A fold, which erases entries, forgets it.
  std::pair<process_key, uint64_t> last_key_{};
  page_cache_counts* last_ = nullptr;
};

nlohmann::json page_cache_json(const page_cache_counts& c);

}  // namespace dc
