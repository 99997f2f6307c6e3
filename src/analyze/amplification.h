// The "amplification" section: bytes and operations each layer moved (POSIX: what the
// application asked for, FS: what the filesystem moved for it, BLOCK: what reached the device),
// per file, per process and per storage system (the I/O amplification tracer seed's table
// SYSTEM SYS_R SYS_W VFS_R VFS_W BLK_R BLK_W R_AMP W_AMP, with bytes and average latencies).
// Counted as `datacrumbs run`'s own summary counts them (src/sink/summary.cpp), so both give the
// same numbers for the same run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "analyze/record.h"
#include "core/event.h"
#include "core/result.h"

namespace dc::analyze {

// Bytes, calls and summed call time of one layer, each way; the calls whose time is not known (a
// block request traced without its end) are in the counts, not in the averages.
struct flow {
  uint64_t read_bytes = 0, write_bytes = 0, reads = 0, writes = 0, read_time_us = 0, write_time_us = 0;
  uint64_t reads_untimed = 0, writes_untimed = 0;
  void merge(const flow& o);
};

enum flow_layer : uint8_t { layer_posix, layer_fs, layer_block, layer_count };
using layer_flows = std::array<flow, layer_count>;

// Whether the application's reads and writes of a file count as file data, as the tracer
// decides from the file's type (regular files and block devices). The trace names files, not
// types, so the name decides: pseudo files (sockets, pipes, anon inodes) and character devices
// under /dev (terminals, /dev/null, /dev/zero) are not data; /dev/shm, /dev/mqueue and block
// devices (sd*, vd*, xvd*, hd*, nvme*n*, loop*, dm-*, md*, mmcblk*, nbd*, rbd*, zram*, pmem*,
// sr*, mapper/*) are.
bool is_data_file(std::string_view name);

struct amplification {
  using process_key = std::pair<uint64_t, uint64_t>;  // (hhash, pid)
  // (process, fhash) -> layer flows; fhash 0 holds what no file was named for (device writes
  // of the kernel's flusher, ...).
  std::map<std::pair<process_key, uint64_t>, layer_flows> flows;
  std::map<process_key, std::string> systems;   // the process_name line's "system" label
  std::map<process_key, std::string> commands;  // the process_name line's name

  // The previous POSIX line's operation and its direction: names repeat, comparing beats hashing.
  std::string last_posix_name;
  io_dir last_posix_dir = io_dir::none;
  bool last_posix_copies = false;  // it moved data between two files (posix_copies)

  void add(const record& r);
  void merge(const amplification& other);
  nlohmann::json partial() const;
  static dc::result<amplification> from_partial(const nlohmann::json& j);
  // {"total": {...}, "files": [...], "processes": [...], "systems": [...]}
  nlohmann::json report(const name_map& names) const;
};

}  // namespace dc::analyze
