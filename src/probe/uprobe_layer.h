// The user-space layer: functions named by a probe config's uprobe entries, found with the
// explorer and attached by file offset, one generic program pair for all (bpf/uprobe.bpf.c).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/probe_config.h"
#include "core/uprobe_target.h"
#include "probe/layer.h"
#include "probe/process_links.h"

namespace dc {

// The functions a config's uprobe entries select, one per address of each binary. A binary or
// a regex that finds nothing is a note, never an error.
std::vector<uprobe_target> plan_uprobes(const probe_config& config, std::vector<std::string>& notes);
// The config's uprobe (function) entries, looked for in every object a traced process maps.
std::vector<uprobe_entry> uprobe_entries_of(const probe_config& config);

// Where a uprobe entry's functions were probed: the library it names (for every traced
// process: pids empty), or an object a process maps itself that defines them (pids: those).
struct uprobe_placement {
  std::string category;
  std::string object;
  size_t functions = 0;
  std::vector<uint32_t> pids;
};

// The user-space layer. Its probes are attached per traced process, with links filtered by the
// process's pid: only traced processes get the breakpoints (an untraced process that maps the
// same library pays nothing), and a process's probes cover every binary it maps later too
// (dlopen), because a link is made on the binary's file before the process maps it. At each
// hold (fork, exec) the objects the process maps are searched for the entries' functions too.
class user_probes : public layer {
 public:
  // The functions planned for it (plan_uprobes) when they were planned while the object loaded:
  // given before loaded() (which writes their specs), and before any process is attached.
  virtual void take_planned(std::vector<uprobe_target> targets) = 0;
  // Attaches every function for process tgid (callable from any thread).
  virtual result<> attach_process(uint32_t tgid) = 0;
  // The named libraries' functions only, for a process about to exec (whose objects now are
  // not its program's).
  virtual result<> attach_before_exec(uint32_t tgid) = 0;
  // Detaches tgid's probes (the process is gone).
  virtual void forget_process(uint32_t tgid) = 0;
  // tgid's probes stay linked when it is gone, until the end of the run (hand_over_links): the
  // traced command's, when a keeper can close them after the run instead of the run waiting.
  virtual void keep_links_to_the_end(uint32_t tgid) = 0;
  // Detaches the probes of every process that is gone (for those whose end was not told).
  virtual void sweep_gone() = 0;
  virtual sweep_counts swept() const = 0;
  // Functions the kernel refused to probe (found at the first attach, then skipped).
  virtual std::vector<std::string> refused_functions() const = 0;
  // Every probed function by probe index: the planned targets, then those found in the
  // objects processes map (their index grows as processes come).
  virtual std::vector<uprobe_target> targets() const = 0;
  virtual std::vector<uprobe_placement> placements() const = 0;
  // Whether a call's entry and return go to one session program through one link per binary
  // (Linux 6.13+), not to an entry and a return program through two.
  virtual bool call_sessions() const = 0;
};

// The layer attaching `targets`, and `entries`' functions wherever a traced process defines
// them; target i's events carry probe index i.
std::unique_ptr<user_probes> make_uprobe_layer(std::vector<uprobe_target> targets,
                                               std::vector<uprobe_entry> entries);

}  // namespace dc
