// The explorer's view of a binary's USDT probes (SystemTap SDT notes, .note.stapsdt): where
// each probe site is, in the file, and its semaphore, which the kernel counts up while a probe
// is attached so that the program evaluates the probe's arguments. Read with libelf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace dc {

struct usdt_probe {
  std::string provider;
  std::string name;
  std::string args;               // the argument spec, as in the note ("-4@$1 8@%rax")
  uint64_t file_offset = 0;       // where the uprobe attaches
  uint64_t semaphore_offset = 0;  // file offset of the semaphore; 0: none
};

// Every USDT probe site of the binary, in note order (a probe inlined in several places has
// several sites). Errors name the file and the problem; a binary without notes has none.
result<std::vector<usdt_probe>> list_usdt(const std::string& path);

}  // namespace dc
