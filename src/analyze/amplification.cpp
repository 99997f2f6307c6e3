#include "analyze/amplification.h"

#include <algorithm>
#include <regex>
#include <unordered_map>
#include <vector>

#include "analyze/record_values.h"
#include "core/category.h"

namespace dc::analyze {

namespace {

io_dir fs_direction(std::string_view name)
{
  if (name == "direct_read" || name == "buffered_read")
    return io_dir::read;
  if (name == "direct_write" || name == "buffered_write")
    return io_dir::write;
  return io_dir::none;
}

void add_io(flow& f, io_dir dir, uint64_t bytes, uint64_t ops, uint64_t time_us, uint64_t untimed = 0)
{
  if (dir == io_dir::read) {
    f.read_bytes += bytes;
    f.reads += ops;
    f.read_time_us += time_us;
    f.reads_untimed += untimed;
  } else {
    f.write_bytes += bytes;
    f.writes += ops;
    f.write_time_us += time_us;
    f.writes_untimed += untimed;
  }
}

nlohmann::json ratio(uint64_t num, uint64_t den)
{
  return den == 0 ? nlohmann::json(nullptr)
                  : nlohmann::json(static_cast<double>(num) / static_cast<double>(den));
}

void merge_flows(layer_flows& into, const layer_flows& from)
{
  for (size_t i = 0; i < layer_count; ++i) into[i].merge(from[i]);
}

constexpr std::string_view layer_names[layer_count] = {category::posix, category::fs, category::block};

// The summary's per-file form: {layer: {read_bytes, write_bytes, reads, writes}, amplification}.
nlohmann::json file_json(const layer_flows& f)
{
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < layer_count; ++i)
    if (f[i].reads + f[i].writes + f[i].read_bytes + f[i].write_bytes > 0)
      j[layer_names[i]] = {{"read_bytes", f[i].read_bytes},
                           {"write_bytes", f[i].write_bytes},
                           {"reads", f[i].reads},
                           {"writes", f[i].writes}};
  j["R_AMP"] = ratio(f[layer_block].read_bytes, f[layer_posix].read_bytes);
  j["W_AMP"] = ratio(f[layer_block].write_bytes, f[layer_posix].write_bytes);
  return j;
}

// Over the calls whose time is known.
double average(uint64_t time_us, uint64_t ops, uint64_t untimed = 0)
{
  ops -= std::min(ops, untimed);
  return ops == 0 ? 0.0 : static_cast<double>(time_us) / static_cast<double>(ops);
}

// The seed's row for a process or a system.
nlohmann::json row_json(const layer_flows& f)
{
  const flow &app = f[layer_posix], &vfs = f[layer_fs], &dev = f[layer_block];
  return {{"SYS_R", app.reads},
          {"SYS_W", app.writes},
          {"VFS_R", vfs.reads},
          {"VFS_W", vfs.writes},
          {"BLK_R", dev.reads},
          {"BLK_W", dev.writes},
          {"R_AMP", ratio(dev.read_bytes, app.read_bytes)},
          {"W_AMP", ratio(dev.write_bytes, app.write_bytes)},
          {"sys_read_bytes", app.read_bytes},
          {"sys_write_bytes", app.write_bytes},
          {"vfs_read_bytes", vfs.read_bytes},
          {"vfs_write_bytes", vfs.write_bytes},
          {"blk_read_bytes", dev.read_bytes},
          {"blk_write_bytes", dev.write_bytes},
          {"avg_latency_us",
           {{"sys_r", average(app.read_time_us, app.reads)},
            {"sys_w", average(app.write_time_us, app.writes)},
            {"vfs_r", average(vfs.read_time_us, vfs.reads)},
            {"vfs_w", average(vfs.write_time_us, vfs.writes)},
            {"blk_r", average(dev.read_time_us, dev.reads, dev.reads_untimed)},
            {"blk_w", average(dev.write_time_us, dev.writes, dev.writes_untimed)}}}};
}

std::string name_of(uint64_t hash, const std::unordered_map<uint64_t, std::string>& table)
{
  auto it = table.find(hash);
  return it == table.end() ? std::to_string(hash) : it->second;
}

nlohmann::json flow_partial(const flow& f)
{
  return {f.read_bytes,   f.write_bytes,   f.reads,         f.writes,
          f.read_time_us, f.write_time_us, f.reads_untimed, f.writes_untimed};
}

}  // namespace

void flow::merge(const flow& o)
{
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  reads += o.reads;
  writes += o.writes;
  read_time_us += o.read_time_us;
  write_time_us += o.write_time_us;
  reads_untimed += o.reads_untimed;
  writes_untimed += o.writes_untimed;
}

bool is_data_file(std::string_view name)
{
  if (name.starts_with("socket:[") || name.starts_with("pipe:[") || name.starts_with("anon_inode:"))
    return false;
  if (!name.starts_with("/dev/"))
    return true;
  static const std::regex data_under_dev(
      "/dev/(shm/.*|mqueue/.*|mapper/"
      ".*|(sd|vd|xvd|hd)[a-z]+[0-9]*|nvme[0-9]+n[0-9]+(p[0-9]+)?|loop[0-9]+(p[0-9]+)?|"
      "dm-[0-9]+|md[0-9]+(p[0-9]+)?|mmcblk[0-9]+(p[0-9]+)?|nbd[0-9]+(p[0-9]+)?|rbd[0-9]+(p[0-9]+)?|zram[0-9]+"
      "|"
      "pmem[0-9]+(p[0-9]+)?|sr[0-9]+)");
  return std::regex_match(name.begin(), name.end(), data_under_dev);
}

void amplification::add(const record& r)
{
  process_key proc{r.hhash, r.pid};
  if (r.ph == phase::metadata) {
    if (r.name == "process_name") {
      commands[proc] = std::string(r.text("name"));
      if (std::string_view label = r.text("system"); !label.empty())
        systems[proc] = std::string(label);
    }
    return;
  }
  bool counter = r.ph == phase::counter;
  if (!counter && r.ph != phase::complete)
    return;
  flow_layer layer;
  io_dir dir;
  uint64_t bytes = 0;
  if (r.cat == category::posix) {
    layer = layer_posix;
    if (r.name != last_posix_name) {
      last_posix_name = r.name;
      last_posix_dir = posix_direction(r.name);
      last_posix_copies = posix_copies(r.name);
    }
    dir = last_posix_dir;
    if (r.fhash == 0)  // the tracer counts only calls on a file it could name
      return;
    bytes = static_cast<uint64_t>(std::max<int64_t>(0, r.arg(counter ? "bytes" : "ret").value_or(0)));
    if (bytes == 0)
      return;
  } else if (r.cat == category::fs) {
    layer = layer_fs;
    dir = fs_direction(r.name);
    bytes = static_cast<uint64_t>(std::max<int64_t>(0, r.arg(counter ? "bytes" : "ret").value_or(0)));
    if (bytes == 0)
      return;
  } else if (r.cat == category::block) {
    layer = layer_block;
    dir = r.name == "read" ? io_dir::read : r.name == "write" ? io_dir::write : io_dir::none;
    bytes = static_cast<uint64_t>(std::max<int64_t>(0, r.arg("bytes").value_or(0)));
    if (counter && bytes == 0)
      return;
  } else {
    return;
  }
  if (dir == io_dir::none)
    return;
  uint64_t ops = counter ? static_cast<uint64_t>(std::max<int64_t>(0, r.arg("count").value_or(0))) : 1;
  uint64_t time_us = counter ? static_cast<uint64_t>(std::max<int64_t>(0, r.arg("time_us").value_or(0)))
                             : static_cast<uint64_t>(std::max<int64_t>(0, r.dur_us));
  // Block requests traced without their end: a span's flag, a counter's number of them.
  uint64_t untimed =
      layer == layer_block ? static_cast<uint64_t>(std::max<int64_t>(0, r.arg("end_unseen").value_or(0))) : 0;
  add_io(flows[{proc, r.fhash}][layer], dir, bytes, ops, time_us, counter ? untimed : untimed != 0);
  // A copy read its fhash (above) and wrote its fhash2, as the tracer's summary charges it.
  if (layer == layer_posix && last_posix_copies)
    if (auto out = r.arg("fhash2"); out && *out != 0)
      add_io(flows[{proc, static_cast<uint64_t>(*out)}][layer], io_dir::write, bytes, ops, time_us);
}

void amplification::merge(const amplification& other)
{
  for (const auto& [key, f] : other.flows) merge_flows(flows[key], f);
  for (const auto& [key, s] : other.systems) systems[key] = s;
  for (const auto& [key, c] : other.commands) commands[key] = c;
}

nlohmann::json amplification::partial() const
{
  nlohmann::json rows = nlohmann::json::array(), procs = nlohmann::json::array();
  for (const auto& [key, f] : flows) {
    nlohmann::json layers = nlohmann::json::array();
    for (const flow& l : f) layers.push_back(flow_partial(l));
    rows.push_back({key.first.first, key.first.second, key.second, std::move(layers)});
  }
  std::map<process_key, std::pair<std::string, std::string>> names;
  for (const auto& [key, c] : commands) names[key].first = c;
  for (const auto& [key, s] : systems) names[key].second = s;
  for (const auto& [key, n] : names) procs.push_back({key.first, key.second, n.first, n.second});
  return {{"flows", std::move(rows)}, {"processes", std::move(procs)}};
}

dc::result<amplification> amplification::from_partial(const nlohmann::json& j)
{
  amplification a;
  try {
    for (const auto& row : j.at("flows")) {
      layer_flows f;
      for (size_t i = 0; i < layer_count; ++i) {
        const auto& l = row.at(3).at(i);
        // The untimed counts came later: a partial of six has none.
        bool untimed = l.size() > 6;
        f[i] = {l.at(0).get<uint64_t>(),
                l.at(1).get<uint64_t>(),
                l.at(2).get<uint64_t>(),
                l.at(3).get<uint64_t>(),
                l.at(4).get<uint64_t>(),
                l.at(5).get<uint64_t>(),
                untimed ? l.at(6).get<uint64_t>() : 0,
                untimed ? l.at(7).get<uint64_t>() : 0};
      }
      merge_flows(
          a.flows[{{row.at(0).get<uint64_t>(), row.at(1).get<uint64_t>()}, row.at(2).get<uint64_t>()}], f);
    }
    for (const auto& p : j.at("processes")) {
      process_key key{p.at(0).get<uint64_t>(), p.at(1).get<uint64_t>()};
      a.commands[key] = p.at(2).get<std::string>();
      if (!p.at(3).get<std::string>().empty())
        a.systems[key] = p.at(3).get<std::string>();
    }
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("partial: the amplification section is malformed (") + e.what() + ")");
  }
  return a;
}

nlohmann::json amplification::report(const name_map& names) const
{
  // The application's calls on pseudo files and character devices are not file data.
  auto counted = [&](uint64_t fhash, layer_flows f) {
    if (fhash != 0 && !is_data_file(name_of(fhash, names.files)))
      f[layer_posix] = {};
    return f;
  };
  layer_flows total{};
  std::map<uint64_t, layer_flows> by_file;
  std::map<process_key, layer_flows> by_process;
  for (const auto& [key, raw] : flows) {
    layer_flows f = counted(key.second, raw);
    merge_flows(total, f);
    merge_flows(by_process[key.first], f);
    if (key.second != 0)
      merge_flows(by_file[key.second], f);
  }
  nlohmann::json j;
  j["total"] = row_json(total);
  j["files"] = nlohmann::json::array();
  for (const auto& [fhash, f] : by_file) {
    bool moved = false;
    for (const flow& l : f) moved = moved || l.reads + l.writes > 0;
    if (!moved)
      continue;
    nlohmann::json e = file_json(f);
    e["file"] = name_of(fhash, names.files);
    j["files"].push_back(std::move(e));
  }
  j["processes"] = nlohmann::json::array();
  std::map<std::string, std::pair<uint64_t, layer_flows>> by_system;
  std::map<process_key, bool> seen;
  for (const auto& [key, f] : by_process) seen[key] = true;
  for (const auto& [key, s] : systems) seen.try_emplace(key, true);
  for (const auto& [key, _] : seen) {
    auto f = by_process.find(key);
    layer_flows flows_of = f == by_process.end() ? layer_flows{} : f->second;
    auto label = systems.find(key);
    std::string system = label == systems.end() ? "" : label->second;
    if (!system.empty()) {
      ++by_system[system].first;
      merge_flows(by_system[system].second, flows_of);
    }
    if (f == by_process.end())
      continue;
    nlohmann::json p = row_json(flows_of);
    p["host"] = name_of(key.first, names.hosts);
    p["pid"] = key.second;
    auto cmd = commands.find(key);
    p["command"] = cmd == commands.end() ? "" : cmd->second;
    p["system"] = system;
    j["processes"].push_back(std::move(p));
  }
  j["systems"] = nlohmann::json::array();
  for (const auto& [system, row] : by_system) {
    nlohmann::json s = row_json(row.second);
    s["system"] = system;
    s["processes"] = row.first;
    j["systems"].push_back(std::move(s));
  }
  return j;
}

}  // namespace dc::analyze
