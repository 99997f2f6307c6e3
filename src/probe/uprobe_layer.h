// The user-space layer: functions named by a probe config's uprobe entries, found with the
// explorer and attached by file offset, one generic program pair for all (bpf/uprobe.bpf.c).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/probe_config.h"
#include "probe/layer.h"

namespace dc {

struct uprobe_target {
  std::string category;  // the config entry's name
  std::string function;
  std::string binary;  // resolved path
  uint64_t offset = 0;
};

// The functions a config's uprobe entries select, one per address of each binary. A binary or
// a regex that finds nothing is a note, never an error.
std::vector<uprobe_target> plan_uprobes(const probe_config& config, std::vector<std::string>& notes);

// The layer attaching `targets`; target i's events carry probe index i.
std::unique_ptr<layer> make_uprobe_layer(std::vector<uprobe_target> targets);

}  // namespace dc
