// A probe configuration in the seed's `capture_probes` YAML form: which kernel layers and which
// user-space functions to trace, each entry's `name` becoming the events' `cat`.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace dc {

enum class probe_kind { syscalls, kernel, uprobe, kprobe, usdt, custom };

struct probe_entry {
  std::string name;  // the category (cat) of its events
  probe_kind kind = probe_kind::uprobe;
  std::string file;      // uprobe, usdt: the library or executable (a name or a path)
  std::string regex;     // uprobe: functions; usdt: probe names; kernel: layer names (whole match)
  std::string provider;  // usdt: only this provider's probes (empty: any)
};

struct probe_config {
  std::string path;
  std::vector<probe_entry> entries;
  // `mode: profile` (with `interval_ms`, default 1000): counters per interval; 0: trace mode.
  uint64_t profile_interval_ms = 0;
};

constexpr uint64_t min_profile_interval_ms = 10;
constexpr uint64_t max_profile_interval_ms = 3600 * 1000;

// Reads and checks a config; errors name the file, the entry and what is wrong.
result<probe_config> load_probe_config(const std::string& path);

// The directory of the shipped configs: <prefix>/etc/datacrumbs/configs next to an installed
// binary, else the source tree's.
std::string shipped_config_dir();

}  // namespace dc
