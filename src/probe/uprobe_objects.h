// Where a traced process has a uprobe entry's functions besides the library the entry names:
// a program that linked the library statically (Debian's plain `h5pcc`) defines H5Dwrite in its
// own executable, and a library may carry another's copy. Found per process at its holds (fork
// and exec), from the objects it maps, and cached per file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/uprobe_target.h"
#include "core/user_regex.h"

namespace dc {

// A file's identity: the same object under any path (symlinks, hard links).
struct file_id {
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t mtime_ns = 0;
  auto operator<=>(const file_id&) const = default;
};
// The file's identity, or nullopt when it cannot be stat'ed.
std::optional<file_id> identify(const std::string& path);

// A file a process runs code from, with the identity the kernel gives it (what the BPF side's
// dc_code_known holds: dev in the kernel's encoding; 0 and 0 when not mapped).
struct code_object {
  std::string path;
  uint32_t dev = 0;
  uint64_t ino = 0;
};

// The files process tgid runs code from: its executable, then every other file mapped
// executable (at a fork hold: the parent's libraries; at an exec hold: the program and the
// dynamic loader; at a hold for a new code mapping, the file just mapped too). Empty when the
// process is gone.
std::vector<code_object> code_objects(uint32_t tgid);

struct object_function {
  size_t entry = 0;  // index in the scanner's entries
  std::string function;
  uint64_t file_offset = 0;
};

class object_scanner {
 public:
  explicit object_scanner(std::vector<uprobe_entry> entries);
  const std::vector<uprobe_entry>& entries() const { return entries_; }
  // The entries' functions the object defines, once per address (the first alias by name):
  // read once per file identity.
  const std::vector<object_function>& functions_of(const std::string& path, const file_id& id);

 private:
  std::vector<uprobe_entry> entries_;
  std::vector<user_regex> regexes_;  // one per entry; an invalid one matches nothing
  std::map<file_id, std::vector<object_function>> cache_;
};

}  // namespace dc
