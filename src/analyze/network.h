// The "network" section: the NET layer's socket sends and receives (bytes, calls), the
// connections they used (distinct host, protocol and address/port pairs), TCP connections
// established, retransmits and drops, for the run and per process.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct net_counts {
  uint64_t bytes_sent = 0, bytes_received = 0, sends = 0, receives = 0, established = 0, retransmits = 0,
           drops = 0;
  void merge(const net_counts& o);
};

struct network {
  using process_key = std::pair<uint64_t, uint64_t>;  // (hhash, pid)
  // (hhash, protocol, local address, local port, remote address, remote port)
  using connection = std::tuple<uint64_t, int64_t, std::string, int64_t, std::string, int64_t>;
  std::map<process_key, net_counts> by_process;
  std::map<process_key, std::set<connection>> connections;

  void add(const record& r);
  void merge(const network& other);
  nlohmann::json partial() const;
  static dc::result<network> from_partial(const nlohmann::json& j);
  // {"bytes_sent","bytes_received","sends","receives","connections","established","retransmits",
  //  "drops","processes":[..]}
  nlohmann::json report(const name_map& names) const;
};

}  // namespace dc::analyze
