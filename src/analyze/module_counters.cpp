#include "analyze/module_counters.h"

#include <algorithm>
#include <climits>
#include <set>

#include "analyze/file_counters.h"
#include "analyze/record_values.h"

namespace dc::analyze {

namespace {

// Layers the kernel writes: never a user-space call, never a parent of one.
bool kernel_layer(std::string_view cat)
{
  return cat == "FS" || cat == "BLOCK" || cat == "NET" || cat == "FAULT" || cat == "PAGECACHE" ||
         cat == "dftracer";
}

bool collective_mpi_data(std::string_view name)
{
  return name.starts_with("MPI_File_") &&
         (name.find("_all") != std::string_view::npos || name.find("ordered") != std::string_view::npos);
}

nlohmann::json unattributed_json(const std::array<uint64_t, module_kinds>& n)
{
  nlohmann::json j = nlohmann::json::object();
  for (size_t m = 0; m < module_kinds; ++m) j[std::string(module_name(static_cast<module_kind>(m)))] = n[m];
  return j;
}

void add_counts(std::array<uint64_t, module_kinds>& into, const std::array<uint64_t, module_kinds>& from)
{
  for (size_t m = 0; m < module_kinds; ++m) into[m] += from[m];
}

// The arguments the replay reads, kept (with static keys) while a call waits.
std::string_view kept_key(std::string_view key)
{
  static constexpr std::string_view keys[] = {"ret",     "stream", "size",     "count",  "offset",
                                              "whence",  "amode",  "fh",       "loc_id", "dset_id",
                                              "file_id", "obj_id", "group_id", "fd"};
  for (std::string_view k : keys)
    if (k == key)
      return k;
  return {};
}

}  // namespace

void module_counters::add(const record& r)
{
  ++line;
  if (!queue.empty() && line - queue.front().line > window)
    drain(line - window);
  if (r.ph != phase::complete)
    return;
  if (r.cat == "POSIX") {  // most lines: done at once unless a user-space call made them
    if (r.p_idx < 0)
      return;
    nested_summary s;
    s.fhash = r.fhash;
    if (int64_t ret = r.arg("ret").value_or(0); ret > 0 && r.fhash != 0) {
      io_dir d = posix_direction(r.name);
      if (d != io_dir::none)
        s.add_bytes(r.fhash, d == io_dir::read ? static_cast<uint64_t>(ret) : 0,
                    d == io_dir::write ? static_cast<uint64_t>(ret) : 0);
    }
    credit(r.hhash, r.pid, r.tid, r.p_idx, s);
    return;
  }
  if (kernel_layer(r.cat))
    return;
  auto m = module_of(r.name);
  if (!m) {  // a traced call of no module (an application's function): a link in the chains
    call_key key{r.hhash, r.pid, r.tid, r.id};
    recent[key] = {std::nullopt, r.p_idx};
    recent_order.emplace_back(line, key);
    if (auto it = pending.find(key); it != pending.end()) {
      nested_summary below = it->second;
      pending.erase(it);
      credit(r.hhash, r.pid, r.tid, r.p_idx, below);
    }
    return;
  }
  queued_call& c = queue.emplace_back();
  c.line = line;
  c.module = *m;
  c.name = *names.emplace(r.name).first;
  c.object = r.text("name");
  c.hhash = r.hhash;
  c.pid = r.pid;
  c.tid = r.tid;
  c.fhash = r.fhash;
  c.ts_us = r.ts_us;
  c.dur_us = r.dur_us;
  c.id = r.id;
  c.p_idx = r.p_idx;
  for (const record_arg& a : r.args)
    if (std::string_view k = kept_key(a.key); !k.empty() && c.nargs < queued_call::max_args)
      c.args[c.nargs++] = {k, a.value};
}

void module_counters::credit(uint64_t hhash, uint64_t pid, uint64_t tid, int64_t parent,
                             const nested_summary& s)
{
  for (int depth = 0; parent >= 0 && depth < 64; ++depth) {
    auto it = recent.find({hhash, pid, tid, parent});
    if (it == recent.end()) {
      pending[{hhash, pid, tid, parent}].add(s);
      return;
    }
    if (it->second.key)
      replay_of(hhash, pid).credit(*it->second.key, s);
    parent = it->second.p_idx;
  }
}

void module_counters::replay(const queued_call& c)
{
  call_key key{c.hhash, c.pid, c.tid, c.id};
  nested_summary below;
  if (auto it = pending.find(key); it != pending.end()) {
    below = it->second;
    pending.erase(it);
  }
  record r;
  r.ph = phase::complete;
  r.name = c.name;
  r.pid = c.pid;
  r.tid = c.tid;
  r.hhash = c.hhash;
  r.fhash = c.fhash;
  r.ts_us = c.ts_us;
  r.dur_us = c.dur_us;
  r.id = c.id;
  r.p_idx = c.p_idx;
  r.args = std::span<const record_arg>(c.args.data(), c.nargs);
  record_text name{"name", c.object};
  r.texts = std::span<const record_text>(&name, 1);
  module_replay& p = replay_of(c.hhash, c.pid);
  std::optional<module_file_key> charged = p.apply(c.module, r, below);
  if (charged)
    p.credit(*charged, below);
  recent[key] = {charged, c.p_idx};
  recent_order.emplace_back(c.line, key);
  if (c.name == "MPI_File_open")
    below.mpi_open = true;
  if (collective_mpi_data(c.name))
    below.mpi_collective = true;
  credit(c.hhash, c.pid, c.tid, c.p_idx, below);
}

void module_counters::drain(uint64_t up_to_line)
{
  while (!queue.empty() && queue.front().line <= up_to_line) {
    replay(queue.front());
    queue.pop_front();
  }
  while (!recent_order.empty() && recent_order.front().first + window < up_to_line) {
    recent.erase(recent_order.front().second);
    recent_order.pop_front();
  }
}

void module_counters::end_file()
{
  drain(UINT64_MAX);
  pending.clear();
  recent.clear();
  recent_order.clear();
}

void module_counters::merge(const module_counters& o)
{
  for (const auto& [key, replay] : o.live) {
    if (!live.contains(key) && !replayed.contains(key)) {
      live.emplace(key, replay);
      continue;
    }
    replay.add_records_to(replayed[key]);
    add_counts(unattributed[key], replay.unattributed());
  }
  for (const auto& [key, files] : o.replayed)
    for (const auto& [fkey, rec] : files) replayed[key][fkey].merge(rec);
  for (const auto& [key, n] : o.unattributed) add_counts(unattributed[key], n);
}

std::map<process_key, std::map<module_file_key, darshan_record>> module_counters::settled() const
{
  auto out = replayed;
  for (const auto& [key, replay] : live) replay.add_records_to(out[key]);
  return out;
}

nlohmann::json module_counters::partial() const
{
  nlohmann::json recs = nlohmann::json::array(), lost = nlohmann::json::array();
  for (const auto& [key, files] : settled())
    for (const auto& [fkey, rec] : files) {
      nlohmann::json j = rec.partial();
      j["hhash"] = key.first;
      j["pid"] = key.second;
      j["module"] = module_name(std::get<0>(fkey));
      j["fhash"] = std::get<1>(fkey);
      j["object"] = std::get<2>(fkey);
      recs.push_back(std::move(j));
    }
  std::map<process_key, std::array<uint64_t, module_kinds>> counts = unattributed;
  for (const auto& [key, replay] : live) add_counts(counts[key], replay.unattributed());
  for (const auto& [key, n] : counts)
    lost.push_back({{"hhash", key.first}, {"pid", key.second}, {"calls", n}});
  return {{"records", std::move(recs)}, {"unattributed", std::move(lost)}};
}

dc::result<module_counters> module_counters::from_partial(const nlohmann::json& j)
{
  module_counters out;
  try {
    for (const auto& r : j.at("records")) {
      auto rec = darshan_record::from_partial(r);
      if (!rec)
        return std::unexpected(rec.error());
      std::string module = r.at("module").get<std::string>();
      std::optional<module_kind> m;
      for (size_t i = 0; i < module_kinds; ++i)
        if (module_name(static_cast<module_kind>(i)) == module)
          m = static_cast<module_kind>(i);
      if (!m)
        return dc::fail("partial: unknown module \"" + module + "\"");
      process_key key{r.at("hhash").get<uint64_t>(), r.at("pid").get<uint64_t>()};
      out.replayed[key][{*m, r.at("fhash").get<uint64_t>(), r.at("object").get<std::string>()}].merge(*rec);
    }
    for (const auto& u : j.at("unattributed"))
      add_counts(out.unattributed[{u.at("hhash").get<uint64_t>(), u.at("pid").get<uint64_t>()}],
                 u.at("calls").get<std::array<uint64_t, module_kinds>>());
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("partial: module counters: ") + e.what());
  }
  return out;
}

nlohmann::json module_counters::report(const name_map& names, const run_section& run, int64_t start_us) const
{
  std::map<module_file_key, darshan_record> by_file;
  std::map<module_file_key, std::set<process_key>> processes;
  for (auto& [key, files] : settled()) {
    auto p = run.processes.find(key);
    bool job = p != run.processes.end() && p->second.size > 1;
    for (auto& [fkey, rec] : files) {
      darshan_record r = rec;
      if (std::get<0>(fkey) == module_kind::mpiio) {  // the communicator is not in the trace
        r.c[job ? c_coll_opens : c_indep_opens] += r.c[c_opens];
        r.c[c_opens] = 0;
      }
      by_file[fkey].merge(r);
      processes[fkey].insert(key);
    }
  }
  struct entry {
    module_kind module;
    int64_t bytes;
    std::string name;
    const module_file_key* key;
  };
  std::vector<entry> order;
  for (const auto& [fkey, rec] : by_file) {
    auto it = names.files.find(std::get<1>(fkey));
    std::string name = it == names.files.end() ? std::to_string(std::get<1>(fkey)) : it->second;
    if (is_pseudo_file(name))
      continue;
    int64_t bytes = rec.c[c_bytes_read] + rec.c[c_bytes_written] + rec.c[c_posix_bytes_read] +
                    rec.c[c_posix_bytes_written];
    order.push_back({std::get<0>(fkey), bytes, std::move(name), &fkey});
  }
  std::sort(order.begin(), order.end(), [](const entry& a, const entry& b) {
    return std::tie(a.module, b.bytes, a.name, std::get<2>(*a.key)) <
           std::tie(b.module, a.bytes, b.name, std::get<2>(*b.key));
  });
  nlohmann::json files = nlohmann::json::array();
  for (const entry& e : order) {
    const darshan_record& r = by_file[*e.key];
    nlohmann::json j = r.counters_json(module_name(e.module), start_us);
    j["file"] = e.name;
    j["module"] = module_name(e.module);
    if (e.module == module_kind::h5d)
      j["dataset"] = std::get<2>(*e.key);
    j["processes"] = processes[*e.key].size();
    j["posix_bytes_read"] = r.c[c_posix_bytes_read];
    j["posix_bytes_written"] = r.c[c_posix_bytes_written];
    if (e.module == module_kind::mpiio) {
      j["elements_read"] = r.c[c_elements_read];
      j["elements_written"] = r.c[c_elements_written];
    }
    if (e.module == module_kind::stdio)
      j["unknown_offset_ops"] = r.unknown_offset_ops;
    files.push_back(std::move(j));
  }
  std::array<uint64_t, module_kinds> lost{};
  for (const auto& [key, n] : unattributed) add_counts(lost, n);
  for (const auto& [key, replay] : live) add_counts(lost, replay.unattributed());
  return {{"files", std::move(files)}, {"unattributed", unattributed_json(lost)}};
}

}  // namespace dc::analyze
