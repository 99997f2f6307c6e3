#include "sink/system_summary.h"

#include <cstdio>

#include "core/category.h"
#include "core/user_regex.h"

namespace dc {

result<system_rule> parse_system_rule(const std::string& spec)
{
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return fail("--system takes LABEL=REGEX, got '" + spec + "'", 2);
  std::string label = spec.substr(0, eq), pattern = spec.substr(eq + 1);
  auto regex = compile_user_regex(pattern, "--system " + label);
  if (!regex)
    return std::unexpected(regex.error());
  return system_rule{label, std::move(*regex)};
}

std::vector<system_rule> system_rules(std::vector<system_rule> user)
{
  static const std::pair<const char*, const char*> builtins[] = {
      {"MinIO", "minio"},         {"Ceph", "ceph-.*|radosgw|rbd-.*|rados"},
      {"etcd", "etcd"},           {"PostgreSQL", "postgres|postmaster"},
      {"GlusterFS", "gluster.*"},
  };
  for (const auto& [label, pattern] : builtins)
    user.push_back({label, *compile_user_regex(pattern, label)});  // valid: they are ours
  return user;
}

std::string system_label(const process_info& p, const std::vector<system_rule>& rules)
{
  for (const auto& r : rules)
    if (r.regex.matches(p.comm))
      return r.label;
  return "";
}

namespace {

struct system_row {
  uint64_t processes = 0, sys_r = 0, sys_w = 0, vfs_r = 0, vfs_w = 0, blk_r = 0, blk_w = 0;
  layer_flow app, dev;
};

void add_ops(const io_totals& t, system_row& row)
{
  layer_flow app = flow_of(t, category::posix), fs = flow_of(t, category::fs),
             dev = flow_of(t, category::block);
  row.app.read_bytes += app.read_bytes;
  row.app.write_bytes += app.write_bytes;
  row.dev.read_bytes += dev.read_bytes;
  row.dev.write_bytes += dev.write_bytes;
  row.sys_r += app.read_ops;
  row.sys_w += app.write_ops;
  row.vfs_r += fs.read_ops;  // file-system reads and writes that moved data, buffered or direct
  row.vfs_w += fs.write_ops;
  row.blk_r += dev.read_ops;
  row.blk_w += dev.write_ops;
}

}  // namespace

nlohmann::json systems_json(const summary_builder& s, const process_table& processes,
                            const std::vector<system_rule>& rules)
{
  std::map<std::string, system_row> rows;
  for (const auto& [key, p] : processes) {
    std::string label = system_label(p, rules);
    if (label.empty())
      continue;
    system_row& row = rows[label];
    row.processes += p.folded ? p.folded : 1;
    auto t = s.per_process().find(key);
    if (t != s.per_process().end())
      add_ops(t->second, row);
  }
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [label, r] : rows)
    j[label] = {{"processes", r.processes},
                {"SYS_R", r.sys_r},
                {"SYS_W", r.sys_w},
                {"VFS_R", r.vfs_r},
                {"VFS_W", r.vfs_w},
                {"BLK_R", r.blk_r},
                {"BLK_W", r.blk_w},
                {"app_read_bytes", r.app.read_bytes},
                {"app_write_bytes", r.app.write_bytes},
                {"device_read_bytes", r.dev.read_bytes},
                {"device_write_bytes", r.dev.write_bytes},
                {"R_AMP", ratio_json(r.dev.read_bytes, r.app.read_bytes)},
                {"W_AMP", ratio_json(r.dev.write_bytes, r.app.write_bytes)}};
  return j;
}

std::string systems_text(const nlohmann::json& systems)
{
  if (systems.empty())
    return "";
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-12s %8s %8s %8s %8s %8s %8s %7s %7s\n", "SYSTEM", "SYS_R", "SYS_W",
                "VFS_R", "VFS_W", "BLK_R", "BLK_W", "R_AMP", "W_AMP");
  out += line;
  auto amp = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("-") : std::to_string(v.get<double>()).substr(0, 5);
  };
  for (const auto& [label, r] : systems.items()) {
    std::snprintf(line, sizeof(line), "%-12s %8llu %8llu %8llu %8llu %8llu %8llu %7s %7s\n", label.c_str(),
                  static_cast<unsigned long long>(r["SYS_R"].get<uint64_t>()),
                  static_cast<unsigned long long>(r["SYS_W"].get<uint64_t>()),
                  static_cast<unsigned long long>(r["VFS_R"].get<uint64_t>()),
                  static_cast<unsigned long long>(r["VFS_W"].get<uint64_t>()),
                  static_cast<unsigned long long>(r["BLK_R"].get<uint64_t>()),
                  static_cast<unsigned long long>(r["BLK_W"].get<uint64_t>()), amp(r["R_AMP"]).c_str(),
                  amp(r["W_AMP"]).c_str());
    out += line;
  }
  return out;
}

}  // namespace dc
