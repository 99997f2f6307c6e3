#include "sink/live_view.h"

#include <algorithm>

#include "core/category.h"
#include "core/clock.h"
#include "core/map_entry.h"
#include "sink/page_cache_summary.h"

namespace dc {

namespace {

// The `top_rows` rows with the most bytes (then operations), named by `name`.
template <class Map, class Name>
std::vector<live_row> top(const Map& tallies, Name&& name, size_t n)
{
  std::vector<live_row> rows;
  rows.reserve(tallies.size());
  for (const auto& [key, t] : tallies) rows.push_back({name(key), t.read_bytes, t.write_bytes, t.ops});
  std::ranges::sort(rows, [](const live_row& a, const live_row& b) {
    uint64_t ab = a.read_bytes + a.write_bytes, bb = b.read_bytes + b.write_bytes;
    return ab != bb ? ab > bb : a.ops != b.ops ? a.ops > b.ops : a.name < b.name;
  });
  if (rows.size() > n)
    rows.resize(n);
  return rows;
}

}  // namespace

live_view::live_view(std::function<live_kernel_facts()> facts, std::function<void(const live_frame&)> show)
    : facts_(std::move(facts)), show_(std::move(show))
{
}

void live_view::add_to(tally& t, const trace_event& ev, bool bytes)
{
  t.ops += ev.count;
  if (bytes)  // a copy between two files reads one and writes the other: both ways
    for_each_moved_file(ev, [&](uint64_t, io_dir dir) { add_bytes(t, dir, ev.bytes); });
}

void live_view::add_bytes(tally& t, io_dir dir, uint64_t bytes)
{
  (dir == io_dir::read ? t.read_bytes : t.write_bytes) += bytes;
}

void live_view::add_file(uint64_t fhash, io_dir dir, const trace_event& ev, bool bytes)
{
  tally& t = files_[fhash];
  t.ops += ev.count;
  if (bytes && dir != io_dir::none)
    add_bytes(t, dir, ev.bytes);
}

void live_view::add(const trace_event& ev, const trace_names&)
{
  if (!ev.counter && !ev.folded) {  // the trace's events; a folded one is in its call's
    ++events_;
    ++interval_events_;
  }
  // A process's or a file's bytes are the application's (POSIX): summed over every layer, one
  // read would count once per layer it went through.
  bool app = ev.category == category::posix;
  add_to(processes_[ev.instance()], ev, app);
  // Each file with what moved to or from it: a copy's output (fhash2) is written, not its input.
  if (ev.fhash)
    add_file(ev.fhash, ev.dir, ev, app);
  if (ev.fhash2 && ev.dir2 != io_dir::none)
    add_file(ev.fhash2, ev.dir2, ev, app);
  add_to(map_entry(layers_, ev.category).second, ev, true);
  add_to(map_entry(totals_, ev.category).second, ev, true);
  // The same pages the summary's page-cache section counts as read.
  if (ev.fhash && ev.dir == io_dir::read && ev.category == category::posix)
    pages_read_ += pages_touched(ev);
}

void live_view::tick(std::chrono::steady_clock::time_point now, const trace_names& names)
{
  if (now - last_ >= interval)
    show(now, names, false);
}

void live_view::finish(const trace_names& names)
{
  show(std::chrono::steady_clock::now(), names, true);
}

void live_view::show(std::chrono::steady_clock::time_point now, const trace_names& names, bool ended)
{
  live_frame f;
  f.seq = ++seq_;
  f.time_us = epoch_now_us();
  f.elapsed_s = std::chrono::duration<double>(now - started_).count();
  f.interval_s = std::chrono::duration<double>(now - last_).count();
  f.events = events_;
  f.interval_events = interval_events_;
  f.pages_read = pages_read_;
  f.ended = ended;
  if (facts_) {
    live_kernel_facts k = facts_();
    f.lost = k.lost;
    f.cache_known = k.cache_misses.has_value();
    f.cache_misses = k.cache_misses.value_or(0);
  }
  f.processes = top(
      processes_,
      [&](process_key key) {
        auto p = names.processes.find(key);
        return process_label(key) + " " + (p == names.processes.end() ? std::string("?") : p->second.comm);
      },
      top_rows);
  f.files = top(
      files_,
      [&](uint64_t hash) {
        const std::string* path = names.names.find(hash);
        return path ? *path : std::string("?");
      },
      top_rows);
  auto same = [](const std::string& s) { return s; };
  f.layers = top(layers_, same, layers_.size());
  f.totals = top(totals_, same, totals_.size());
  processes_.clear();
  files_.clear();
  layers_.clear();
  interval_events_ = 0;
  last_ = now;
  if (show_)
    show_(f);
}

}  // namespace dc
