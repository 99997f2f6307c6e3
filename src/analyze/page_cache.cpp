#include "analyze/page_cache.h"

#include <string>
#include <string_view>

#include "core/category.h"

namespace dc::analyze {

namespace {

constexpr std::string_view keys[] = {
    "hits", "misses", "pages_read", "pages_added", "pages_dirtied", "pages_written_back", "pages_evicted"};

void add_counts(page_cache::counts& into, const page_cache::counts& from)
{
  for (size_t i = 0; i < into.size(); ++i) into[i] += from[i];
}

nlohmann::json counts_json(const page_cache::counts& c)
{
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < c.size(); ++i) j[keys[i]] = c[i];
  uint64_t looked = c[0] + c[1];
  j["hit_ratio"] = looked == 0 ? nlohmann::json(nullptr)
                               : nlohmann::json(static_cast<double>(c[0]) / static_cast<double>(looked));
  j["written_back"] = c[5];
  j["evicted"] = c[6];
  return j;
}

std::string name_of(uint64_t hash, const std::unordered_map<uint64_t, std::string>& table)
{
  auto it = table.find(hash);
  return it == table.end() ? std::to_string(hash) : it->second;
}

}  // namespace

void page_cache::add(const record& r)
{
  // A metadata line of run totals since issue 17; a counter sample in older DataCrumbs traces.
  if ((r.ph != phase::metadata && r.ph != phase::counter) || r.cat != category::pagecache ||
      r.name != "page_cache")
    return;
  counts c{};
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<uint64_t>(std::max<int64_t>(0, r.arg(keys[i]).value_or(0)));
  add_counts(by_file[{{r.hhash, r.pid}, r.fhash}], c);
}

void page_cache::merge(const page_cache& other)
{
  for (const auto& [key, c] : other.by_file) add_counts(by_file[key], c);
}

nlohmann::json page_cache::partial() const
{
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, c] : by_file) rows.push_back({key.first.first, key.first.second, key.second, c});
  return rows;
}

dc::result<page_cache> page_cache::from_partial(const nlohmann::json& j)
{
  page_cache p;
  try {
    for (const auto& row : j) {
      counts c{};
      for (size_t i = 0; i < c.size(); ++i) c[i] = row.at(3).at(i).get<uint64_t>();
      add_counts(
          p.by_file[{{row.at(0).get<uint64_t>(), row.at(1).get<uint64_t>()}, row.at(2).get<uint64_t>()}], c);
    }
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("partial: the page_cache section is malformed (") + e.what() + ")");
  }
  return p;
}

nlohmann::json page_cache::report(const name_map& names) const
{
  counts total{};
  std::map<process_key, counts> procs;
  std::map<uint64_t, counts> files;
  for (const auto& [key, c] : by_file) {
    add_counts(total, c);
    add_counts(procs[key.first], c);
    add_counts(files[key.second], c);
  }
  nlohmann::json j = counts_json(total);
  j["processes"] = nlohmann::json::array();
  for (const auto& [key, c] : procs) {
    nlohmann::json p = counts_json(c);
    p["host"] = name_of(key.first, names.hosts);
    p["pid"] = key.second;
    j["processes"].push_back(std::move(p));
  }
  j["files"] = nlohmann::json::array();
  for (const auto& [fhash, c] : files) {
    nlohmann::json f = counts_json(c);
    f["file"] = name_of(fhash, names.files);
    j["files"].push_back(std::move(f));
  }
  return j;
}

}  // namespace dc::analyze
