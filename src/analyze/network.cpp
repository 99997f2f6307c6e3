#include "analyze/network.h"

#include "core/category.h"

namespace dc::analyze {

namespace {

nlohmann::json counts_json(const net_counts& c, size_t connections)
{
  return {{"bytes_sent", c.bytes_sent},
          {"bytes_received", c.bytes_received},
          {"sends", c.sends},
          {"receives", c.receives},
          {"connections", connections},
          {"established", c.established},
          {"retransmits", c.retransmits},
          {"drops", c.drops}};
}

}  // namespace

void net_counts::merge(const net_counts& o)
{
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  sends += o.sends;
  receives += o.receives;
  established += o.established;
  retransmits += o.retransmits;
  drops += o.drops;
}

void network::add(const record& r)
{
  if (r.cat != category::net || (r.ph != phase::complete && r.ph != phase::counter && r.ph != phase::instant))
    return;
  bool counter = r.ph == phase::counter;
  process_key proc{r.hhash, r.pid};
  net_counts& c = by_process[proc];
  uint64_t calls = counter ? static_cast<uint64_t>(std::max<int64_t>(0, r.arg("count").value_or(0))) : 1;
  if (r.name == "send" || r.name == "recv") {
    uint64_t bytes =
        static_cast<uint64_t>(std::max<int64_t>(0, r.arg(counter ? "bytes" : "ret").value_or(0)));
    bool send = r.name == "send";
    (send ? c.bytes_sent : c.bytes_received) += bytes;
    (send ? c.sends : c.receives) += calls;
    if (!counter)
      connections[proc].insert({r.hhash, r.arg("protocol").value_or(0), std::string(r.text("laddr")),
                                r.arg("lport").value_or(0), std::string(r.text("raddr")),
                                r.arg("rport").value_or(0)});
  } else if (r.name == "state") {
    if (r.text("new_state") == "ESTABLISHED")
      ++c.established;
  } else if (r.name == "retransmit") {
    c.retransmits += calls;
  } else if (r.name == "drop") {
    c.drops += calls;
  }
}

void network::merge(const network& other)
{
  for (const auto& [key, c] : other.by_process) by_process[key].merge(c);
  for (const auto& [key, s] : other.connections) connections[key].insert(s.begin(), s.end());
}

nlohmann::json network::partial() const
{
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& [key, c] : by_process) {
    nlohmann::json conns = nlohmann::json::array();
    if (auto it = connections.find(key); it != connections.end())
      for (const auto& [h, proto, la, lp, ra, rp] : it->second) conns.push_back({h, proto, la, lp, ra, rp});
    procs.push_back({key.first, key.second,
                     nlohmann::json::array({c.bytes_sent, c.bytes_received, c.sends, c.receives,
                                            c.established, c.retransmits, c.drops}),
                     std::move(conns)});
  }
  return procs;
}

dc::result<network> network::from_partial(const nlohmann::json& j)
{
  network n;
  try {
    for (const auto& p : j) {
      process_key key{p.at(0).get<uint64_t>(), p.at(1).get<uint64_t>()};
      const auto& v = p.at(2);
      net_counts c{v.at(0).get<uint64_t>(), v.at(1).get<uint64_t>(), v.at(2).get<uint64_t>(),
                   v.at(3).get<uint64_t>(), v.at(4).get<uint64_t>(), v.at(5).get<uint64_t>(),
                   v.at(6).get<uint64_t>()};
      n.by_process[key].merge(c);
      for (const auto& e : p.at(3))
        n.connections[key].insert({e.at(0).get<uint64_t>(), e.at(1).get<int64_t>(),
                                   e.at(2).get<std::string>(), e.at(3).get<int64_t>(),
                                   e.at(4).get<std::string>(), e.at(5).get<int64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("partial: the network section is malformed (") + e.what() + ")");
  }
  return n;
}

nlohmann::json network::report(const name_map& names) const
{
  net_counts total;
  std::set<connection> all;
  for (const auto& [key, c] : by_process) total.merge(c);
  for (const auto& [key, s] : connections) all.insert(s.begin(), s.end());
  nlohmann::json j = counts_json(total, all.size());
  j["processes"] = nlohmann::json::array();
  for (const auto& [key, c] : by_process) {
    auto conns = connections.find(key);
    nlohmann::json p = counts_json(c, conns == connections.end() ? 0 : conns->second.size());
    auto host = names.hosts.find(key.first);
    p["host"] = host == names.hosts.end() ? std::to_string(key.first) : host->second;
    p["pid"] = key.second;
    j["processes"].push_back(std::move(p));
  }
  return j;
}

}  // namespace dc::analyze
