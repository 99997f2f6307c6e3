#include "deploy/job_metadata.h"

#include <nlohmann/json.hpp>

namespace dc {

result<job_request> parse_job_metadata(const std::string& text, const std::string& at)
{
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    if (text.find("datacrumbs") != std::string::npos)
      return fail("the job metadata mentions datacrumbs but is not valid JSON", 2);
    return job_request{};
  }
  const nlohmann::json* holder = &doc;
  for (size_t start = 0; !at.empty() && start <= at.size();) {
    size_t end = at.find('.', start);
    std::string key = at.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!holder->is_object() || !holder->contains(key))
      return job_request{};
    holder = &(*holder)[key];
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  if (!holder->is_object() || !holder->contains("datacrumbs"))
    return job_request{};
  const auto& ours = (*holder)["datacrumbs"];
  const std::string form = R"( (expected {"enable":"yes","probe_file":"/path/probes.json.gz"}))";
  if (!ours.is_object())
    return fail("\"datacrumbs\" is not an object" + form, 2);
  for (const auto& [key, value] : ours.items())
    if (key != "enable" && key != "probe_file")
      return fail("unknown datacrumbs setting \"" + key + "\"" + form, 2);
  // Flux stores --setattr values as JSON when they parse: enable=1 and enable=true mean yes.
  auto enable = ours.find("enable");
  bool yes = enable != ours.end() && (*enable == "yes" || *enable == true || *enable == 1);
  bool no = enable != ours.end() && (*enable == "no" || *enable == false || *enable == 0);
  if (!yes && !no)
    return fail("datacrumbs \"enable\" must be \"yes\" or \"no\"" + form, 2);
  if (no)
    return job_request{};
  auto probe_file = ours.find("probe_file");
  if (probe_file == ours.end() || !probe_file->is_string() || probe_file->get<std::string>().empty() ||
      probe_file->get<std::string>().front() != '/')
    return fail("datacrumbs \"probe_file\" must be an absolute path" + form, 2);
  return job_request{true, probe_file->get<std::string>()};
}

}  // namespace dc
