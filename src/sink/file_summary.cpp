#include "sink/file_summary.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/category.h"
#include "core/map_entry.h"
#include "core/short_text.h"
#include "sink/summary.h"

namespace dc {

namespace {

std::string path_of(uint64_t fhash, const name_table& names)
{
  const std::string* path = names.find(fhash);
  return path ? *path : std::to_string(fhash);
}

nlohmann::json flows_json(const std::map<std::string, layer_flow, std::less<>>& flows)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [layer, f] : flows)
    j[layer] = {{"read_bytes", f.read_bytes},
                {"write_bytes", f.write_bytes},
                {"reads", f.read_ops},
                {"writes", f.write_ops}};
  auto bytes = [&](std::string_view layer, bool read) {
    auto it = flows.find(layer);
    return it == flows.end() ? 0 : read ? it->second.read_bytes : it->second.write_bytes;
  };
  j["amplification"] = {{"read", ratio_json(bytes(category::block, true), bytes(category::posix, true))},
                        {"write", ratio_json(bytes(category::block, false), bytes(category::posix, false))}};
  return j;
}

}  // namespace

void add_flows(layer_flows& into, const layer_flows& from)
{
  for (const auto& [layer, f] : from) {
    layer_flow& t = map_entry(into, layer).second;
    t.read_bytes += f.read_bytes;
    t.write_bytes += f.write_bytes;
    t.read_ops += f.read_ops;
    t.write_ops += f.write_ops;
  }
}

void add_flow(layer_flow& f, io_dir dir, const trace_event& ev)
{
  if (dir == io_dir::none)
    return;
  (dir == io_dir::read ? f.read_bytes : f.write_bytes) += ev.bytes;
  (dir == io_dir::read ? f.read_ops : f.write_ops) += ev.count;
}

void file_tally::add(const trace_event& ev)
{
  for_each_moved_file(ev, [&](uint64_t fhash, io_dir dir) {
    if (fhash == 0)
      return;
    add_flow(flow_of(ev.instance(), fhash, ev.category), dir, ev);
  });
}

layer_flow& file_tally::flow_of(process_key process, uint64_t fhash, std::string_view layer)
{
  for (size_t i : {last_, 1 - last_}) {
    recent_flow& r = recent_[i];
    if (r.flow && r.process == process && r.fhash == fhash && same_text(r.layer, layer)) {
      last_ = i;
      return *r.flow;
    }
  }
  last_ = 1 - last_;
  recent_flow& r = recent_[last_];
  r.process = process;
  r.fhash = fhash;
  r.layer = layer;
  r.flow = &map_entry(by_file_[{process, fhash}], layer).second;
  return *r.flow;
}

nlohmann::json file_tally::json(const name_table& names) const
{
  std::map<uint64_t, flows> whole_run;
  for (const auto& [key, f] : by_file_) add_flows(whole_run[key.second], f);
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [fhash, f] : whole_run) j[path_of(fhash, names)] = flows_json(f);
  return j;
}

nlohmann::json file_tally::process_json(process_key process, const name_table& names) const
{
  nlohmann::json j = nlohmann::json::object();
  for (auto it = by_file_.lower_bound({process, 0}); it != by_file_.end() && it->first.first == process; ++it)
    j[path_of(it->first.second, names)] = flows_json(it->second);
  return j;
}

void file_tally::fold(process_key from, process_key into)
{
  recent_ = {};
  auto it = by_file_.lower_bound({from, 0});
  while (it != by_file_.end() && it->first.first == from) {
    add_flows(by_file_[{into, it->first.second}], it->second);
    it = by_file_.erase(it);
  }
}

std::string file_tally::top_text(const name_table& names, size_t n) const
{
  std::map<uint64_t, flows> whole_run;
  for (const auto& [key, f] : by_file_) add_flows(whole_run[key.second], f);
  auto total = [](const flows& f) {
    uint64_t most = 0;
    for (const auto& [layer, l] : f) most = std::max(most, l.read_bytes + l.write_bytes);
    return most;
  };
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (bytes, fhash)
  for (const auto& [fhash, f] : whole_run) order.emplace_back(total(f), fhash);
  std::sort(order.rbegin(), order.rend());
  std::string out;
  char line[512];
  for (size_t i = 0; i < std::min(n, order.size()); ++i) {
    const flows& f = whole_run[order[i].second];
    auto get = [&](std::string_view layer) {
      auto it = f.find(layer);
      return it == f.end() ? layer_flow{} : it->second;
    };
    layer_flow app = get(category::posix), dev = get(category::block);
    std::snprintf(line, sizeof(line), "file %s: app read %llu wrote %llu, device read %llu wrote %llu\n",
                  path_of(order[i].second, names).c_str(), static_cast<unsigned long long>(app.read_bytes),
                  static_cast<unsigned long long>(app.write_bytes),
                  static_cast<unsigned long long>(dev.read_bytes),
                  static_cast<unsigned long long>(dev.write_bytes));
    out += line;
  }
  return out;
}

}  // namespace dc
