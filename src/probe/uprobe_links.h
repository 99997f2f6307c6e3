// uprobe_multi links, per process: creating them by hand (Debian's libbpf 1.1 predates them),
// finding the functions the kernel refuses to probe, and closing them off the critical path.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/uprobe_target.h"

namespace dc {

// The attach types, for the programs' expected_attach_type and the links.
constexpr uint32_t trace_uprobe_multi = 48;    // enum bpf_attach_type BPF_TRACE_UPROBE_MULTI
constexpr uint32_t trace_uprobe_session = 57;  // BPF_TRACE_UPROBE_SESSION (Linux 6.13+)

// The functions of one binary, as the arrays of one link.
struct probe_set {
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> cookies;   // index in the layer's targets
  std::vector<uint64_t> ref_ctrs;  // USDT semaphores (file offsets, 0: none); empty: no USDT
};

// Links `set` for tgid. When the kernel refuses the set because of some function it cannot
// probe (its first instruction), halves the set until those are found: their cookies go to
// `refused`, every accepted part gets a link of its own. Returns the errno of any other
// failure (the process is gone, ...), 0 on success.
int link_probe_set(int prog_fd, uint32_t attach_type, const std::string& binary, const probe_set& set,
                   bool ret, uint32_t tgid, std::vector<int>& fds, std::vector<uint64_t>& refused);

// The programs a probed function's calls go to: one session program (entry and return through
// one link), or, where the kernel has no uprobe sessions (session_fd < 0), an entry and a
// return program.
struct call_programs {
  int session_fd = -1;
  int enter_fd = -1;
  int return_fd = -1;
};

// Links `set` for tgid to `progs`: one session link, or an entry link and a return link for the
// functions the entry's accepted. Refused functions and errors as link_probe_set's.
int link_calls(const call_programs& progs, const std::string& binary, const probe_set& set, uint32_t tgid,
               std::vector<int>& fds, std::vector<uint64_t>& refused);

// One function linked alone for a process: its links, the cookie if the kernel refused it, or
// the errno of another failure.
struct lone_link {
  std::string binary;
  probe_set one;
  std::vector<int> fds;
  std::vector<uint64_t> refused;
  int err = 0;
};

// Links each function of `sets` alone for tgid, 16 at once: a refusal costs a grace period,
// and those overlap.
std::vector<lone_link> link_each_alone(const call_programs& progs,
                                       const std::map<std::string, probe_set>& sets, uint32_t tgid);

// The planned targets sorted into link sets per binary, each function's cookie its index in
// `targets`: the functions (those whose first instruction has a LOCK prefix apart, see
// has_lock_prefix), and the USDT sites (entry only, with their semaphores).
struct probe_plan {
  std::map<std::string, probe_set> per_binary, suspects, usdt;
};
probe_plan plan_probe_sets(const std::vector<uprobe_target>& targets);

// `set` less the functions whose cookies are in `refused`.
probe_set without(const probe_set& set, const std::vector<uint64_t>& refused);

// Whether the instruction at `offset` of the open binary starts with a LOCK prefix: x86 uprobes
// refuse some of those (pthread_spin_lock's `lock dec`, OpenSSL's *_up_ref `lock xadd`) and
// accept others (Open MPI's `lock orq $0,(%rsp)`). One refused function fails the attach of its
// whole set, and finding it by halving the set costs seconds for thousands of functions, so
// these are tried one by one instead, once.
bool has_lock_prefix(std::ifstream& file, uint64_t offset);

}  // namespace dc
