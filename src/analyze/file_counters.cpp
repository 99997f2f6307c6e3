#include "analyze/file_counters.h"

#include <algorithm>
#include <set>
#include <string>

#include "analyze/record_values.h"
#include "core/category.h"

namespace dc::analyze {

namespace {

constexpr int64_t f_dupfd = 0, f_dupfd_cloexec = 1030;

std::string file_name(uint64_t fhash, const name_map& names)
{
  auto it = names.files.find(fhash);
  return it == names.files.end() ? std::to_string(fhash) : it->second;
}

}  // namespace

bool is_pseudo_file(std::string_view name)
{
  return name.starts_with("socket:[") || name.starts_with("pipe:[") || name.starts_with("anon_inode:");
}

void file_counters::add(const record& r)
{
  if (r.ts_us > 0 && r.ph != phase::metadata && (start_us == 0 || r.ts_us < start_us))
    start_us = r.ts_us;
  if (r.ph != phase::complete || r.cat != category::posix || r.fhash == 0)
    return;
  if (r.name != last_name) {
    last_name = r.name;
    last_copies = posix_copies(r.name);
    last_kind = last_copies ? std::optional(posix_kind::read) : posix_kind_of(r.name);
  }
  auto kind = last_kind;
  if (!kind)
    return;
  posix_op op;
  op.kind = *kind;
  op.ts_us = r.ts_us;
  op.dur_us = r.dur_us;
  op.fhash = r.fhash;
  op.id = r.id;
  op.tid = static_cast<uint32_t>(r.tid);
  auto ret = r.arg("ret");
  op.has_ret = ret.has_value();
  op.ret = ret.value_or(0);
  op.fd = static_cast<int32_t>(r.arg("fd").value_or(-1));
  if (op.kind == posix_kind::dup && r.name == "fcntl") {
    int64_t cmd = r.arg("cmd").value_or(-1);
    if (cmd != f_dupfd && cmd != f_dupfd_cloexec)
      return;
  }
  if (op.kind == posix_kind::open && r.name.starts_with("creat"))
    op.flags = 01101;  // O_CREAT | O_WRONLY | O_TRUNC
  else
    op.flags = r.arg("flags").value_or(0);
  // Only the positioned calls carry an offset; lseek's offset argument is not a position.
  bool positioned = r.name.starts_with("pread") || r.name.starts_with("pwrite");
  if (positioned)
    op.offset = r.arg("offset").value_or(-1);
  if ((op.kind == posix_kind::read || op.kind == posix_kind::write) && !op.has_ret)
    return;  // no byte count: nothing Darshan could count
  process_stream& stream = streams[{r.hhash, r.pid}];
  stream.push(op);
  // A copy is a read of its input (above) and a write of its output, each at its descriptor's
  // position (an explicit offset argument is a pointer the trace does not follow).
  if (last_copies) {
    op.kind = posix_kind::write;
    op.fhash = static_cast<uint64_t>(r.arg("fhash2").value_or(0));
    op.fd = static_cast<int32_t>(r.arg("out_fd").value_or(-1));
    stream.push(op);
  }
}

void file_counters::merge(const file_counters& other)
{
  for (const auto& [key, stream] : other.streams) {
    if (!streams.contains(key) && !replayed.contains(key)) {
      streams.emplace(key, stream);
      continue;
    }
    for (const auto& [fhash, rec] : stream.records()) replayed[key][fhash].merge(rec);
  }
  for (const auto& [key, files] : other.replayed)
    for (const auto& [fhash, rec] : files) replayed[key][fhash].merge(rec);
  if (other.start_us != 0 && (start_us == 0 || other.start_us < start_us))
    start_us = other.start_us;
}

std::map<process_key, std::map<uint64_t, darshan_record>> file_counters::settled() const
{
  auto out = replayed;
  for (const auto& [key, stream] : streams)
    for (const auto& [fhash, rec] : stream.records()) out[key][fhash].merge(rec);
  return out;
}

nlohmann::json file_counters::partial() const
{
  nlohmann::json recs = nlohmann::json::array();
  for (const auto& [key, files] : settled())
    for (const auto& [fhash, rec] : files) {
      nlohmann::json j = rec.partial();
      j["hhash"] = key.first;
      j["pid"] = key.second;
      j["fhash"] = fhash;
      recs.push_back(std::move(j));
    }
  return {{"start_us", start_us}, {"records", std::move(recs)}};
}

dc::result<file_counters> file_counters::from_partial(const nlohmann::json& j)
{
  file_counters out;
  if (!j.is_object() || !j.contains("records") || !j["records"].is_array())
    return dc::fail("partial: the files section has no records");
  out.start_us = j.value("start_us", int64_t{0});
  for (const auto& r : j["records"]) {
    auto rec = darshan_record::from_partial(r);
    if (!rec)
      return std::unexpected(rec.error());
    if (!r.contains("hhash") || !r.contains("pid") || !r.contains("fhash"))
      return dc::fail("partial: a file record has no process or file");
    process_key key{r["hhash"].get<uint64_t>(), r["pid"].get<uint64_t>()};
    out.replayed[key][r["fhash"].get<uint64_t>()].merge(*rec);
  }
  return out;
}

std::map<process_key, nlohmann::json> file_counters::io_cost_us(const name_map& names) const
{
  std::map<process_key, nlohmann::json> out;
  for (const auto& [key, files] : settled()) {
    int64_t read = 0, write = 0, meta = 0;
    for (const auto& [fhash, rec] : files) {
      if (is_pseudo_file(file_name(fhash, names)))
        continue;
      read += rec.t[t_read_time];
      write += rec.t[t_write_time];
      meta += rec.t[t_meta_time];
    }
    out[key] = {{"read", read}, {"write", write}, {"meta", meta}};
  }
  return out;
}

nlohmann::json file_counters::report(const name_map& names) const
{
  std::map<uint64_t, darshan_record> by_file;
  std::map<uint64_t, std::set<process_key>> processes;
  for (const auto& [key, files] : settled())
    for (const auto& [fhash, rec] : files) {
      by_file[fhash].merge(rec);
      processes[fhash].insert(key);
    }
  std::vector<std::pair<std::string, uint64_t>> order;
  for (const auto& [fhash, rec] : by_file) {
    std::string name = file_name(fhash, names);
    if (!is_pseudo_file(name))
      order.emplace_back(std::move(name), fhash);
  }
  auto bytes = [&](uint64_t fhash) {
    const darshan_record& r = by_file[fhash];
    return r.c[c_bytes_read] + r.c[c_bytes_written];
  };
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    int64_t x = bytes(a.second), y = bytes(b.second);
    return x != y ? x > y : a.first < b.first;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, fhash] : order) {
    const darshan_record& r = by_file[fhash];
    nlohmann::json j = r.counters_json("POSIX", start_us);
    j["file"] = name;
    j["module"] = "POSIX";
    j["processes"] = processes[fhash].size();
    j["small_ops"] = r.ops_under_4k;
    j["unknown_offset_ops"] = r.unknown_offset_ops;
    j["out_of_order_ops"] = r.out_of_order_ops;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace dc::analyze
