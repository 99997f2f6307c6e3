#include "sink/page_cache_summary.h"

#include <unistd.h>

#include "core/category.h"
#include "core/short_text.h"
#include "sink/summary.h"

namespace dc {

namespace {
// The kernel's, as the kernel side counts pages read (bpf/syscall.bpf.c, dc_pages_read).
const uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

void add_to(page_cache_counts& into, const page_cache_counts& c)
{
  into.pages_read += c.pages_read;
  into.added += c.added;
  into.dirtied += c.dirtied;
  into.written_back += c.written_back;
  into.evicted += c.evicted;
}
}  // namespace

uint64_t pages_touched(const trace_event& read)
{
  if (read.bytes == 0)
    return 0;
  if (read.counter) {  // a profile counter: the kernel summed the pages of its reads
    for (uint8_t i = 0; i < read.arg_count; ++i)
      if (same_text(read.args[i].key(), "pages"))
        return static_cast<uint64_t>(read.args[i].value);
    return 0;
  }
  for (uint8_t i = 0; i < read.arg_count; ++i)
    if (same_text(read.args[i].key(), "offset") && read.args[i].value >= 0) {
      uint64_t first = static_cast<uint64_t>(read.args[i].value) / page_size;
      uint64_t last = (static_cast<uint64_t>(read.args[i].value) + read.bytes - 1) / page_size;
      return last - first + 1;
    }
  return (read.bytes + page_size - 1) / page_size;
}

namespace {

// An application's read of a file: what the tally counts pages of.
bool app_read(const trace_event& ev)
{
  return ev.fhash && ev.dir == io_dir::read && ev.category == category::posix;
}

}  // namespace

uint64_t pages_read_by(const trace_event& ev)
{
  return app_read(ev) ? pages_touched(ev) : 0;
}

void page_cache_tally::add_read(const trace_event& read)
{
  if (!app_read(read))
    return;
  std::pair<process_key, uint64_t> key{read.instance(), read.fhash};
  if (!last_ || last_key_ != key) {
    last_ = &by_file_[key];
    last_key_ = key;
  }
  last_->pages_read += pages_touched(read);
}

void page_cache_tally::add_kernel_counts(process_key process, uint64_t fhash, const page_cache_counts& kernel)
{
  page_cache_counts counts = kernel;
  counts.pages_read = 0;
  add_to(by_file_[{process, fhash}], counts);
}

void page_cache_tally::fold(process_key from, process_key into)
{
  last_ = nullptr;
  auto it = by_file_.lower_bound({from, 0});
  while (it != by_file_.end() && it->first.first == from) {
    add_to(by_file_[{into, it->first.second}], it->second);
    it = by_file_.erase(it);
  }
}

nlohmann::json page_cache_json(const page_cache_counts& c)
{
  uint64_t hits = c.hits(), misses = c.misses();
  nlohmann::json ratio = ratio_json(hits, hits + misses);
  return {{"hits", hits},
          {"misses", misses},
          {"hit_ratio", ratio},
          {"pages_read", c.pages_read},
          {"pages_added", c.added},
          {"pages_dirtied", c.dirtied},
          {"pages_written_back", c.written_back},
          {"pages_evicted", c.evicted}};
}

// Sums over the (process, file) pairs `pick` selects. Hits and misses are clamped per pair, as
// cachestat clamps per interval, then added.
template <class Pick>
nlohmann::json summed_json(const page_cache_tally::by_process_file& by_file, Pick pick)
{
  page_cache_counts sum;
  uint64_t hits = 0, misses = 0;
  for (const auto& [key, c] : by_file)
    if (pick(key)) {
      add_to(sum, c);
      hits += c.hits();
      misses += c.misses();
    }
  nlohmann::json j = page_cache_json(sum);
  j["hits"] = hits;
  j["misses"] = misses;
  j["hit_ratio"] = ratio_json(hits, hits + misses);
  return j;
}

nlohmann::json page_cache_tally::totals_json() const
{
  return summed_json(by_file_, [](const auto&) { return true; });
}

nlohmann::json page_cache_tally::process_json(process_key process) const
{
  return summed_json(by_file_, [process](const auto& key) { return key.first == process; });
}

nlohmann::json page_cache_tally::files_json(const name_table& names) const
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, c] : by_file_) {
    const std::string* path = names.find(key.second);
    std::string name = path ? *path : std::to_string(key.second);
    if (!j.contains(name))
      j[name] = summed_json(by_file_, [fhash = key.second](const auto& k) { return k.second == fhash; });
  }
  return j;
}

}  // namespace dc
