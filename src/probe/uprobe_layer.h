// The user-space layer: functions named by a probe config's uprobe entries, found with the
// explorer and attached by file offset, one generic program pair for all (bpf/uprobe.bpf.c).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/probe_config.h"
#include "core/uprobe_target.h"
#include "probe/layer.h"

namespace dc {

// The functions a config's uprobe entries select, one per address of each binary. A binary or
// a regex that finds nothing is a note, never an error.
std::vector<uprobe_target> plan_uprobes(const probe_config& config, std::vector<std::string>& notes);

// The user-space layer. Its probes are attached per traced process, with links filtered by the
// process's pid: only traced processes get the breakpoints (an untraced process that maps the
// same library pays nothing), and a process's probes cover every binary it maps later too
// (dlopen), because a link is made on the binary's file before the process maps it.
class user_probes : public layer {
 public:
  // Attaches every function for process tgid (callable from any thread).
  virtual result<> attach_process(uint32_t tgid) = 0;
  // Detaches tgid's probes (the process is gone).
  virtual void forget_process(uint32_t tgid) = 0;
  // Functions the kernel refused to probe (found at the first attach, then skipped).
  virtual std::vector<std::string> refused_functions() const = 0;
};

// The layer attaching `targets`; target i's events carry probe index i.
std::unique_ptr<user_probes> make_uprobe_layer(std::vector<uprobe_target> targets);

}  // namespace dc
