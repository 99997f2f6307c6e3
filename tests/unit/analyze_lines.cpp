#include "unit/analyze_lines.h"

namespace dc::test {

analyze::record trace_line::view(std::vector<analyze::record_arg>& arg_storage,
                                 std::vector<analyze::record_text>& text_storage) const
{
  arg_storage.clear();
  text_storage.clear();
  for (const auto& [k, v] : args) arg_storage.push_back({k, v});
  for (const auto& [k, v] : texts) text_storage.push_back({k, v});
  analyze::record r;
  r.ph = ph;
  r.name = name;
  r.cat = cat;
  r.pid = pid;
  r.tid = tid;
  r.ts_us = ts_us;
  r.dur_us = dur_us;
  r.id = id;
  r.p_idx = p_idx;
  r.level = level;
  r.hhash = hhash;
  r.fhash = fhash;
  r.args = arg_storage;
  r.texts = text_storage;
  return r;
}

trace_line line_from_json(const nlohmann::json& j, analyze::name_map& names)
{
  trace_line l;
  std::string ph = j.value("ph", "");
  l.ph = ph == "X"                ? analyze::phase::complete
         : ph == "C"              ? analyze::phase::counter
         : ph == "M"              ? analyze::phase::metadata
         : ph == "i" || ph == "I" ? analyze::phase::instant
                                  : analyze::phase::other;
  l.name = j.value("name", "");
  l.cat = j.value("cat", "");
  l.pid = j.value("pid", uint64_t{0});
  l.tid = j.value("tid", uint64_t{0});
  l.ts_us = j.value("ts", int64_t{0});
  l.dur_us = j.value("dur", int64_t{0});
  l.id = j.value("id", int64_t{0});
  static const nlohmann::json no_args = nlohmann::json::object();
  const nlohmann::json& args = j.contains("args") ? j["args"] : no_args;
  for (const auto& [k, v] : args.items()) {
    if (k == "hhash")
      l.hhash = v.get<uint64_t>();
    else if (k == "fhash")
      l.fhash = v.get<uint64_t>();
    else if (k == "p_idx" && v.is_number_integer())
      l.p_idx = v.get<int64_t>();
    else if (k == "level" && v.is_number_integer())
      l.level = v.get<int32_t>();
    else if (v.is_number_integer())
      l.args.emplace_back(k, v.get<int64_t>());
    else if (v.is_string())
      l.texts.emplace_back(k, v.get<std::string>());
  }
  if (l.ph == analyze::phase::metadata && (l.name == "FH" || l.name == "HH" || l.name == "SH")) {
    const auto& a = j["args"];
    auto& table = l.name == "FH" ? names.files : l.name == "HH" ? names.hosts : names.strings;
    table[a["value"].get<uint64_t>()] = a["name"].get<std::string>();
  }
  return l;
}

}  // namespace dc::test
