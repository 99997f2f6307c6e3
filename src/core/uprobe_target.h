// One probed user-space function (or USDT probe site): what the explorer found for a probe
// config's uprobe entry, what a probe file carries, and what a uprobe event's probe index names.
#pragma once

#include <cstdint>
#include <string>

namespace dc {

struct uprobe_target {
  std::string category;  // the config entry's name
  std::string function;  // a USDT probe: "provider:name"
  std::string binary;    // resolved path
  uint64_t offset = 0;
  bool usdt = false;       // a USDT probe site: an instant, no return
  uint64_t semaphore = 0;  // USDT: file offset of its semaphore, 0: none
};

// A config's uprobe entry as a regex over function names: its functions are also looked for in
// the objects each traced process maps itself (a program that linked the library statically
// defines them in its executable), not only in the library it names.
struct uprobe_entry {
  std::string category;  // the entry's name
  std::string regex;
};

}  // namespace dc
