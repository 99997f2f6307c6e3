#include "analyze/run_section.h"

#include <algorithm>
#include <charconv>

#include "analyze/record_values.h"

namespace dc::analyze {

namespace {

bool parse_int(std::string_view s, int64_t& out)
{
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

void note_span(process_facts& p, int64_t start, int64_t end)
{
  p.start_us = std::min(p.start_us, start);
  p.end_us = std::max(p.end_us, end);
}

void note_metadata(run_section& run, process_facts& p, const record& r)
{
  std::string_view text = r.text("name");
  if (r.name == "process_name") {
    // DFTracer names MPI processes "Rank N"; DataCrumbs gives the command's short name.
    int64_t rank;
    if (text.starts_with("Rank ") && parse_int(text.substr(5), rank))
      p.rank = rank;
    else if (!text.empty())
      p.name = text;
    if (auto h = r.arg("cmd_hash"))
      p.cmd_hash = static_cast<uint64_t>(*h);
    if (auto pp = r.arg("ppid"))
      p.ppid = *pp;
    if (auto rank = r.arg("rank"))  // DataCrumbs: from the launcher's variables (collect/mpi_rank.h)
      p.rank = *rank;
    if (auto size = r.arg("size"))
      p.size = *size;
    if (std::string_view sys = r.text("system"); !sys.empty())
      p.system = sys;
  } else if (r.name == "PR") {
    auto v = r.arg("value");
    if (v && (text == "rank" || text == "RANK"))
      p.rank = *v;
    else if (v && (text == "size" || text == "comm_size" || text == "SIZE"))
      p.size = *v;
  } else if (r.name == "thread_name") {
    p.tids.insert(r.tid);
  } else if (r.name == "end") {
    for (const record_arg& a : r.args)
      if (a.key == "events_lost" || a.key.starts_with("lost_"))
        run.lost[std::string(a.key)] += static_cast<uint64_t>(std::max<int64_t>(0, a.value));
  }
}

}  // namespace

void run_section::add(const record& r, const call_facts& c)
{
  if (r.hhash)
    hosts.insert(r.hhash);
  process_key key{r.hhash, r.pid};
  process_facts* const* hit = index.find(key);
  process_facts& p = hit ? **hit : *index.add(key, &processes[key]);
  switch (r.ph) {
    case phase::metadata:
      ++metadata;
      note_metadata(*this, p, r);
      return;
    case phase::counter: ++counters; break;
    case phase::instant: ++instants; break;
    case phase::complete:
      if (r.cat == "dftracer") {  // DFTracer's start span names the command
        if (r.name == "start") {
          if (auto h = r.arg("cmd_hash"))
            p.cmd_hash = static_cast<uint64_t>(*h);
          if (auto pp = r.arg("ppid"))
            p.ppid = *pp;
        }
        return;
      }
      ++events;
      if (r.level >= 1 && r.p_idx < 0)
        io_time_us += static_cast<uint64_t>(r.dur_us);
      break;
    default: return;
  }
  if (r.ph == phase::counter && !is_call_sample(r))
    return;
  if (r.tid != p.last_tid) {
    p.tids.insert(r.tid);
    p.last_tid = r.tid;
  }
  ++p.events;
  p.bytes += c.bytes;
  note_span(p, r.ts_us, r.ts_us + r.dur_us);
  start_us = std::min(start_us, r.ts_us);
  end_us = std::max(end_us, r.ts_us + r.dur_us);
}

void run_section::merge(const run_section& o)
{
  for (const auto& [key, q] : o.processes) {
    process_facts& p = processes[key];
    if (p.name.empty())
      p.name = q.name;
    if (!p.cmd_hash)
      p.cmd_hash = q.cmd_hash;
    if (p.ppid < 0)
      p.ppid = q.ppid;
    if (p.rank < 0)
      p.rank = q.rank;
    if (p.size < 0)
      p.size = q.size;
    if (p.system.empty())
      p.system = q.system;
    p.tids.insert(q.tids.begin(), q.tids.end());
    p.events += q.events;
    p.bytes += q.bytes;
    note_span(p, q.start_us, q.end_us);
  }
  hosts.insert(o.hosts.begin(), o.hosts.end());
  events += o.events;
  counters += o.counters;
  metadata += o.metadata;
  instants += o.instants;
  io_time_us += o.io_time_us;
  start_us = std::min(start_us, o.start_us);
  end_us = std::max(end_us, o.end_us);
  for (const auto& [k, v] : o.lost) lost[k] += v;
}

nlohmann::json run_section::partial() const
{
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& [key, p] : processes)
    procs.push_back({{"hhash", key.first},
                     {"pid", key.second},
                     {"name", p.name},
                     {"cmd_hash", p.cmd_hash},
                     {"ppid", p.ppid},
                     {"rank", p.rank},
                     {"size", p.size},
                     {"system", p.system},
                     {"tids", p.tids},
                     {"events", p.events},
                     {"bytes", p.bytes},
                     {"start_us", p.start_us},
                     {"end_us", p.end_us}});
  return {{"processes", procs},   {"hosts", hosts},       {"events", events},         {"counters", counters},
          {"metadata", metadata}, {"instants", instants}, {"io_time_us", io_time_us}, {"start_us", start_us},
          {"end_us", end_us},     {"lost", lost}};
}

dc::result<run_section> run_section::from_partial(const nlohmann::json& j)
{
  run_section s;
  try {
    for (const auto& q : j.at("processes")) {
      process_facts& p = s.processes[{q.at("hhash").get<uint64_t>(), q.at("pid").get<uint64_t>()}];
      p.name = q.at("name").get<std::string>();
      p.cmd_hash = q.at("cmd_hash").get<uint64_t>();
      p.ppid = q.at("ppid").get<int64_t>();
      p.rank = q.at("rank").get<int64_t>();
      p.size = q.at("size").get<int64_t>();
      p.system = q.at("system").get<std::string>();
      p.tids = q.at("tids").get<std::set<uint64_t>>();
      p.events = q.at("events").get<uint64_t>();
      p.bytes = q.at("bytes").get<uint64_t>();
      p.start_us = q.at("start_us").get<int64_t>();
      p.end_us = q.at("end_us").get<int64_t>();
    }
    s.hosts = j.at("hosts").get<std::set<uint64_t>>();
    s.events = j.at("events").get<uint64_t>();
    s.counters = j.at("counters").get<uint64_t>();
    s.metadata = j.at("metadata").get<uint64_t>();
    s.instants = j.at("instants").get<uint64_t>();
    s.io_time_us = j.at("io_time_us").get<uint64_t>();
    s.start_us = j.at("start_us").get<int64_t>();
    s.end_us = j.at("end_us").get<int64_t>();
    s.lost = j.at("lost").get<std::map<std::string, uint64_t>>();
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("run: ") + e.what());
  }
  return s;
}

std::string host_name(uint64_t hhash, const name_map& names)
{
  auto it = names.hosts.find(hhash);
  return it != names.hosts.end() ? it->second : hhash ? std::to_string(hhash) : std::string("?");
}

std::string process_label(const process_key& key, const process_facts* p, const name_map& names)
{
  std::string s = host_name(key.first, names) + ":" + std::to_string(key.second);
  if (p && p->rank >= 0)
    s += " (rank " + std::to_string(p->rank) + ")";
  return s;
}

nlohmann::json run_section::report(const name_map& names) const
{
  auto or_null = [](int64_t v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json hs = nlohmann::json::array();
  for (uint64_t h : hosts) hs.push_back(host_name(h, names));
  std::sort(hs.begin(), hs.end());
  nlohmann::json procs = nlohmann::json::array();
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> threads;
  for (const auto& [key, p] : processes) {
    for (uint64_t t : p.tids) threads.emplace(key.first, key.second, t);
    auto cmd = names.strings.find(p.cmd_hash);
    procs.push_back(
        {{"host", host_name(key.first, names)},
         {"pid", key.second},
         {"rank", or_null(p.rank)},
         {"size", or_null(p.size)},
         {"command", cmd != names.strings.end() ? nlohmann::json(cmd->second) : nlohmann::json(nullptr)},
         {"name", p.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.name)},
         {"ppid", or_null(p.ppid)},
         {"system", p.system.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.system)},
         {"threads", p.tids.size()},
         {"events", p.events},
         {"bytes", p.bytes},
         {"start_us", p.events ? nlohmann::json(p.start_us) : nlohmann::json(nullptr)},
         {"end_us", p.events ? nlohmann::json(p.end_us) : nlohmann::json(nullptr)}});
  }
  std::stable_sort(procs.begin(), procs.end(), [](const auto& a, const auto& b) {
    return std::tie(a["host"].template get_ref<const std::string&>(), a["pid"]) <
           std::tie(b["host"].template get_ref<const std::string&>(), b["pid"]);
  });
  bool any = end_us >= start_us;
  return {{"hosts", hs},
          {"processes", procs},
          {"threads", threads.size()},
          {"start_us", any ? nlohmann::json(start_us) : nlohmann::json(nullptr)},
          {"end_us", any ? nlohmann::json(end_us) : nlohmann::json(nullptr)},
          {"wall_s", wall_s()},
          {"events", events},
          {"counters", counters},
          {"metadata", metadata},
          {"io_time_us", io_time_us},
          {"lost", lost}};
}

}  // namespace dc::analyze
