// The one BPF object (bpf/datacrumbs.bpf.c), opened, configured and loaded with the programs of
// the process tracker and of the layers asked for. A layer whose program the kernel refuses (a
// tracepoint this kernel lacks, a verifier that says no) is left out, with the reason, and the
// object loads again without it: one layer's trouble never takes the others down.
#pragma once

#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "probe/layer.h"

namespace dc {

struct object_settings {
  uint64_t ring_bytes = 0;
  uint64_t hold_ring_bytes = 0;  // 0: as the object declares it (64 KiB)
  uint64_t wake_mark = 0;
  bool hold_new = false;             // hold new processes until their uprobes are attached
  uint64_t profile_interval_ns = 0;  // 0: trace mode
  uint32_t profile_entries = 1;      // size of the profile-mode counter map
  bool verbose = false;              // libbpf's messages on stderr
  uint32_t page_shift = 12;          // log2 of the kernel's page size (sysconf)
  uint64_t holder_ns_dev = 0;        // this process's pid namespace (/proc/self/ns/pid), by which
  uint64_t holder_ns_ino = 0;        // the kernel knows the holder's death
  uint32_t possible_cpus = 0;        // 0: this machine's; more checks the programs verify for a
                                     // larger machine (the per-CPU counters the fault layer reads)
  // Called once, right before libbpf's load or asking a keeper for the object: to start work on another
  // thread, which then has a CPU while libbpf uses one (the maps before the load are made on every CPU).
  std::function<void()> while_loading;
  std::string core_btf_dir;  // where the minimal BTF for CO-RE is cached; empty: none (core_btf.h)
  // Take the object from this user's keeper when it keeps one configured the same way
  // (probe/object_keeper.h), and name what loads so that it can be kept.
  bool kept_objects = false;
};

struct loaded_object {
  datacrumbs_bpf* skel = nullptr;     // owned by the caller (datacrumbs_bpf__destroy)
  std::vector<layer_report> refused;  // layers left out, and why
  std::string core_btf;               // what CO-RE relocated against: the cached minimal BTF, or why not
  std::string kept_key;               // with kept_objects: what names this object for a keeper
  bool adopted = false;               // taken from a keeper, not loaded
  std::vector<int> adopted_programs;  // adopted: the programs' fds in the object's order (the caller's)
  std::string keeper_note;            // with kept_objects, not adopted: why not
  bool refusals_recalled = false;     // left out at once what this kernel refused before (refusal_memory.h)
};

// Loads the object with the programs of `layers`; a layer in `refused` keeps its object pointer
// unset. Every program of the object must belong to the process tracker or to exactly one of
// `all_layers` (names).
result<loaded_object> load_object(const object_settings& settings,
                                  const std::vector<std::unique_ptr<layer>>& layers,
                                  const std::vector<std::string>& all_layers);

}  // namespace dc
