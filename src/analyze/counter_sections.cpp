#include "analyze/counter_sections.h"

namespace dc::analyze {

nlohmann::json counter_sections::partial() const
{
  return {{"files", files.partial()},
          {"modules", modules.partial()},
          {"amplification", amp.partial()},
          {"page_cache", cache.partial()},
          {"network", net.partial()}};
}

dc::result<counter_sections> counter_sections::from_partial(const nlohmann::json& j)
{
  if (!j.is_object() || !j.contains("files") || !j.contains("modules") || !j.contains("amplification") ||
      !j.contains("page_cache") || !j.contains("network"))
    return dc::fail(
        "partial: the counter sections (files, modules, amplification, page_cache, network) are missing");
  counter_sections s;
  auto files = file_counters::from_partial(j["files"]);
  if (!files)
    return std::unexpected(files.error());
  auto modules = module_counters::from_partial(j["modules"]);
  if (!modules)
    return std::unexpected(modules.error());
  auto amp = amplification::from_partial(j["amplification"]);
  if (!amp)
    return std::unexpected(amp.error());
  auto cache = page_cache::from_partial(j["page_cache"]);
  if (!cache)
    return std::unexpected(cache.error());
  auto net = network::from_partial(j["network"]);
  if (!net)
    return std::unexpected(net.error());
  s.files = std::move(*files);
  s.modules = std::move(*modules);
  s.amp = std::move(*amp);
  s.cache = std::move(*cache);
  s.net = std::move(*net);
  return s;
}

nlohmann::json counter_sections::report(const name_map& names, const run_section& run) const
{
  nlohmann::json all = files.report(names);
  nlohmann::json user = modules.report(names, run, files.start_us);
  for (auto& f : user["files"]) all.push_back(std::move(f));
  return {{"files", std::move(all)},
          {"files_unattributed", std::move(user["unattributed"])},
          {"amplification", amp.report(names)},
          {"page_cache", cache.report(names)},
          {"network", net.report(names)}};
}

}  // namespace dc::analyze
