#include "config/probe_config.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "core/install_paths.h"
#include "core/user_regex.h"

namespace dc {

namespace {

result<probe_kind> kind_of(const std::string& s)
{
  if (s == "syscalls")
    return probe_kind::syscalls;
  if (s == "kernel")
    return probe_kind::kernel;
  if (s == "uprobe")
    return probe_kind::uprobe;
  if (s == "kprobe")
    return probe_kind::kprobe;
  if (s == "usdt")
    return probe_kind::usdt;
  if (s == "custom")
    return probe_kind::custom;
  return fail("unknown probe '" + s + "' (syscalls, kernel, uprobe, kprobe, usdt, custom)", 2);
}

}  // namespace

result<probe_config> load_config_at_depth(const std::string& path, int depth);

result<probe_config> load_probe_config(const std::string& path)
{
  return load_config_at_depth(path, 0);
}

// The top-level `mode` (trace | profile) and profile `interval_ms`.
result<> read_mode(const YAML::Node& root, probe_config& config)
{
  try {
    std::string mode = root["mode"] ? root["mode"].as<std::string>() : "trace";
    if (mode != "trace" && mode != "profile")
      return fail("mode must be 'trace' or 'profile', not '" + mode + "'");
    uint64_t interval = root["interval_ms"] ? root["interval_ms"].as<uint64_t>() : 1000;
    if (interval < min_profile_interval_ms || interval > max_profile_interval_ms)
      return fail("interval_ms must be between " + std::to_string(min_profile_interval_ms) + " and " +
                  std::to_string(max_profile_interval_ms));
    config.profile_interval_ms = mode == "profile" ? interval : 0;
  } catch (const YAML::Exception& e) {
    return fail(std::string("mode/interval_ms: ") + e.what());
  }
  return {};
}

// `depth` bounds `include:` chains (an include cycle is an error, not a hang).
result<probe_config> load_config_at_depth(const std::string& path, int depth)
{
  // A directory opens but fails on the first read with an I/O exception yaml-cpp does not wrap
  // (found by the probe_config fuzz target: `include: ""` names the config's own directory).
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    return fail("config '" + path + "' is not a regular file", 2);
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return fail("cannot read config '" + path + "'", 2);
  } catch (const YAML::Exception& e) {
    return fail("config '" + path + "': " + e.what(), 2);
  } catch (const std::exception& e) {
    return fail("cannot read config '" + path + "': " + e.what(), 2);
  }
  auto bad = [&](size_t i, const std::string& what) {
    return fail("config '" + path + "': capture_probes[" + std::to_string(i) + "]: " + what, 2);
  };
  YAML::Node probes = root.IsMap() ? root["capture_probes"] : YAML::Node();
  if (!probes || !probes.IsSequence())
    return fail("config '" + path + "': no capture_probes list", 2);
  probe_config config{path, {}, 0};
  if (auto mode = read_mode(root, config); !mode)
    return fail("config '" + path + "': " + mode.error().message, 2);
  for (size_t i = 0; i < probes.size(); ++i) {
    const YAML::Node& n = probes[i];
    if (n.IsMap() && n["include"]) {
      // Another config's entries, by a path relative to this one's directory.
      if (depth >= 8)
        return bad(i, "includes nest deeper than 8 (a cycle?)");
      std::filesystem::path inc = n["include"].as<std::string>();
      if (inc.is_relative())
        inc = std::filesystem::path(path).parent_path() / inc;
      auto included = load_config_at_depth(inc.string(), depth + 1);
      if (!included)
        return std::unexpected(included.error());
      for (auto& e : included->entries) config.entries.push_back(std::move(e));
      continue;
    }
    if (!n.IsMap() || !n["name"] || !n["probe"])
      return bad(i, "each entry needs 'name' and 'probe'");
    probe_entry e;
    try {
      e.name = n["name"].as<std::string>();
      auto kind = kind_of(n["probe"].as<std::string>());
      if (!kind)
        return bad(i, kind.error().message);
      e.kind = *kind;
      // usdt entries name their binary `binary_path` in the seed's form; `file` is accepted too.
      e.file = n["file"]          ? n["file"].as<std::string>()
               : n["binary_path"] ? n["binary_path"].as<std::string>()
                                  : "";
      e.provider = n["provider"] ? n["provider"].as<std::string>() : "";
      e.regex = n["regex"] ? n["regex"].as<std::string>() : ".*";
    } catch (const YAML::Exception& ex) {
      return bad(i, ex.what());
    }
    if (e.name.empty())
      return bad(i, "'name' is empty");
    if (e.kind == probe_kind::uprobe && e.file.empty())
      return bad(i, "a uprobe entry needs 'file'");
    if (e.kind == probe_kind::usdt && e.file.empty())
      return bad(i, "a usdt entry needs 'file' (or 'binary_path')");
    if (auto r = compile_user_regex(e.regex, "capture_probes[" + std::to_string(i) + "].regex"); !r)
      return bad(i, r.error().message);
    config.entries.push_back(std::move(e));
  }
  return config;
}

std::string shipped_config_dir()
{
  std::string installed = installed_path("etc/datacrumbs/configs");
  std::error_code ec;
  if (std::filesystem::is_directory(installed, ec))
    return installed;
  return DATACRUMBS_SOURCE_CONFIG_DIR;
}

}  // namespace dc
