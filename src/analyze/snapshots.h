// The report's "snapshots" section: the system specs, process snapshots and directory
// snapshots the traces carry as metadata lines (sink/snapshots.h, docs/snapshots.md).
// Snapshots are kept as written: merging is a union, so any split of the inputs gives the same
// section.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct snapshots {
  struct directory {
    uint64_t total = 0;  // entries the snapshot had (its lines state it)
    std::string error;   // why it could not be read ("" when it could)
    bool truncated = false;
    std::map<std::string, nlohmann::json> entries;  // by path
  };

  // hhash -> (ts of the spec, the spec); the latest spec of a host wins.
  std::map<uint64_t, std::pair<int64_t, nlohmann::json>> systems;
  // (hhash, pid, ts, command) -> the process snapshot
  std::map<std::tuple<uint64_t, uint64_t, int64_t, std::string>, nlohmann::json> processes;
  // (hhash, dir, when, ts) -> the directory snapshot
  std::map<std::tuple<uint64_t, std::string, std::string, int64_t>, directory> directories;
  uint64_t unreadable = 0;  // snapshot lines whose value is not a JSON object

  void add(const record& r);
  void merge(const snapshots& other);
  nlohmann::json partial() const;
  static dc::result<snapshots> from_partial(const nlohmann::json& j);
  // {"system": {HOST: spec}, "processes": [..], "filesystem": [..]}
  nlohmann::json report(const name_map& names) const;
};

// The section as text for the report on stdout ("" when the traces carry no snapshot).
std::string snapshots_text(const nlohmann::json& section);

}  // namespace dc::analyze
