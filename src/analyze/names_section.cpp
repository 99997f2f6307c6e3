#include "analyze/names_section.h"

#include "analyze/record_values.h"

namespace dc::analyze {

namespace {

using table = std::unordered_map<uint64_t, std::string>;

nlohmann::json table_json(const table& t)
{
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [h, name] : t) j[std::to_string(h)] = name;
  return j;
}

void table_from(const nlohmann::json& j, table& t)
{
  for (const auto& [h, name] : j.items()) t.emplace(std::stoull(h), name.get<std::string>());
}

}  // namespace

void names_section::add(const record& r)
{
  if (r.ph == phase::metadata && r.cat == "dftracer") {
    table* t = r.name == "FH"   ? &names.files
               : r.name == "HH" ? &names.hosts
               : r.name == "SH" ? &names.strings
                                : nullptr;
    if (t)
      if (uint64_t h = defined_hash(r))
        t->try_emplace(h, std::string(r.text("name")));
    return;
  }
  if (r.fhash)
    if (std::string_view f = r.text("fname"); !f.empty())
      names.files.try_emplace(r.fhash, std::string(f));
  if (r.hhash)
    if (std::string_view h = r.text("hostname"); !h.empty())
      names.hosts.try_emplace(r.hhash, std::string(h));
}

void names_section::merge(const names_section& o)
{
  for (const auto& [h, n] : o.names.files) names.files.try_emplace(h, n);
  for (const auto& [h, n] : o.names.hosts) names.hosts.try_emplace(h, n);
  for (const auto& [h, n] : o.names.strings) names.strings.try_emplace(h, n);
}

nlohmann::json names_section::partial() const
{
  return {{"files", table_json(names.files)},
          {"hosts", table_json(names.hosts)},
          {"strings", table_json(names.strings)}};
}

dc::result<names_section> names_section::from_partial(const nlohmann::json& j)
{
  names_section s;
  try {
    table_from(j.at("files"), s.names.files);
    table_from(j.at("hosts"), s.names.hosts);
    table_from(j.at("strings"), s.names.strings);
  } catch (const std::exception& e) {
    return dc::fail(std::string("names: ") + e.what());
  }
  return s;
}

}  // namespace dc::analyze
