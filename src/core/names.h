// String tables of a trace: names (paths, hosts, commands) by hash, files by (dev, inode), and
// processes by TGID. Owned by the one thread that decodes, so nothing here locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/hash.h"

namespace dc {

class name_table {
 public:
  uint64_t add(std::string_view s)
  {
    uint64_t h = string_hash(s);
    by_hash_.try_emplace(h, s);
    return h;
  }
  const std::string* find(uint64_t hash) const
  {
    auto it = by_hash_.find(hash);
    return it == by_hash_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<uint64_t, std::string> by_hash_;
};

struct file_key {
  uint32_t dev;  // kernel encoding (major << 20 | minor)
  uint64_t ino;
  bool operator==(const file_key&) const = default;
};

struct file_key_hash {
  size_t operator()(const file_key& k) const { return k.ino * 31 + k.dev; }
};

// Which file (dev, inode) has which path hash; paths come from opens and fd snapshots.
class file_table {
 public:
  void name(file_key key, uint64_t path_hash) { files_[key] = path_hash; }
  std::optional<uint64_t> find(file_key key) const
  {
    auto it = files_.find(key);
    if (it == files_.end())
      return std::nullopt;
    return it->second;
  }

 private:
  std::unordered_map<file_key, uint64_t, file_key_hash> files_;
};

struct thread_info {
  std::string comm;
};

struct process_info {
  uint32_t pid = 0;
  uint32_t parent = 0;
  std::string command;  // the command line, arguments separated by spaces
  std::string comm;
  int exit_status = -1;  // wait(2) status, -1 while unknown
  std::map<uint32_t, thread_info> threads;
  int rank = -1, size = -1;  // MPI rank and job size from the launcher's environment (-1: none)
};

using process_table = std::map<uint32_t, process_info>;

// What a sink needs to name an event's file and process (the decoder's tables, read-only).
struct trace_names {
  const name_table& names;
  const process_table& processes;
};

// Converts a user-space st_dev to the kernel's s_dev encoding that BPF reports.
inline uint32_t kernel_dev(uint64_t major, uint64_t minor)
{
  return static_cast<uint32_t>((major << 20) | (minor & 0xfffff));
}

}  // namespace dc
