// Loaded objects kept between runs. Making the object's maps, reading the kernel's BTF and
// verifying its programs is most of a run's start-up (~130 of ~250 ms on a 2-CPU VM,
// docs/performance.md); none of it depends on the traced command. A run that ends hands its
// object (the fds of its maps and programs, detached) to a keeper: `datacrumbs` started again as
// `__keep-object`, which resets the object's state to a fresh load's, then waits, attached to
// nothing, for the next run configured the same way to take it, or for its idle time to end,
// when it exits and the kernel frees the object. One keeper per configuration, at most
// most_keepers per user (probe/keeper_sockets.h): a run that keeps an object makes the last keeper
// of its configuration exit first, and the keeper of the configuration used least recently when
// there would be more.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

struct datacrumbs_bpf;

namespace dc {

// The first argument that makes `datacrumbs` a keeper (cli/main.cpp); `datacrumbs_keeper`
// (cli/keeper_main.cpp), the keeper run ends start when it is installed beside them, takes the
// same arguments.
inline constexpr const char* keeper_argument = "__keep-object";

// The fds of a kept object, in the object's order: the maps made, then the programs loaded.
struct kept_object {
  std::vector<int> maps;
  std::vector<int> programs;
};

// The name of the object as configured, before its load: the object's bytes and this kernel
// (`object_key`, core_btf_key of the object: computed once a run by the caller), the .rodata
// image, every map's shape and whether it is made, every program's type and whether it loads.
// Equal names load equal objects; empty when `object_key` is (nothing is kept).
std::string kept_object_key(const datacrumbs_bpf& skel, const std::string& object_key);

// The object named `key`, taken from this user's keeper, which then exits (the fds are the
// caller's). An error when there is no keeper, it keeps another object, or it cannot be trusted
// (another user's); the caller loads the object itself.
result<kept_object> take_kept_object(const std::string& key);

// Makes the opened, configured `skel` the kept object: every map made and program loaded must
// be the one `kept` holds (type, sizes; name and type), or nothing is taken and the fds are
// closed. Its maps are then libbpf's (their fds reused, .bss and .rodata mapped where the
// skeleton points); its programs' fds are returned, in the object's order, the caller's to own.
result<std::vector<int>> adopt_kept_object(datacrumbs_bpf& skel, kept_object kept);

// Hands the loaded object to a new keeper, `exe` started as `__keep-object`, for `idle_seconds`;
// the last keeper of this configuration is told to exit first. `programs`: the loaded programs' fds, in the
// object's order. `links`: links of the run's that only wait to be closed (uprobe links of processes that
// have ended: their release waits for RCU grace periods, 10-50 ms); the keeper closes them before
// it resets the object, so the run ends without waiting for them. The caller still closes its
// own copies. An error says why the object cannot be kept (a map no reset covers, no process to
// be had); the caller frees it, and closes the links, as before.
result<> keep_object(const datacrumbs_bpf& skel, const std::vector<int>& programs, const std::string& key,
                     const std::string& exe, unsigned idle_seconds, const std::vector<int>& links = {});

// The keeper's main (argv as keep_object passes it); its exit code.
int keeper_main(int argc, char** argv);

}  // namespace dc
