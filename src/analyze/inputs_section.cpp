#include "analyze/inputs_section.h"

#include <cstdio>

namespace dc::analyze {

void inputs_section::problem(std::string line)
{
  ++problems_total;
  if (problems.size() >= max_problems)
    return;
  if (print)
    std::fprintf(stderr, "analyze: %s\n", line.c_str());
  problems.push_back(std::move(line));
}

void inputs_section::merge(const inputs_section& o)
{
  files += o.files;
  bytes += o.bytes;
  lines += o.lines;
  for (size_t i = 0; i < skipped.size(); ++i) skipped[i] += o.skipped[i];
  unreadable_bytes += o.unreadable_bytes;
  corrupt_members += o.corrupt_members;
  corrupt_lines_at_least += o.corrupt_lines_at_least;
  for (const std::string& p : o.problems)
    if (problems.size() < max_problems)
      problems.push_back(p);
  problems_total += o.problems_total;
}

uint64_t inputs_section::records() const
{
  uint64_t skipped_lines = 0;
  for (uint64_t n : skipped) skipped_lines += n;
  return lines > skipped_lines ? lines - skipped_lines : 0;
}

nlohmann::json inputs_section::report() const
{
  nlohmann::json skip = nlohmann::json::object();
  for (size_t i = 0; i < skipped.size(); ++i)
    if (skipped[i])
      skip[std::string(skip_name(static_cast<skip_reason>(i)))] = skipped[i];
  return {{"files", files},
          {"bytes", bytes},
          {"lines", lines},
          {"skipped", skip},
          {"unreadable",
           {{"bytes", unreadable_bytes},
            {"corrupt_members", corrupt_members},
            {"corrupt_lines_at_least", corrupt_lines_at_least}}},
          {"problems", problems},
          {"problems_total", problems_total}};
}

nlohmann::json inputs_section::partial() const
{
  return report();
}

dc::result<inputs_section> inputs_section::from_partial(const nlohmann::json& j)
{
  inputs_section s;
  try {
    s.files = j.at("files").get<uint64_t>();
    s.bytes = j.at("bytes").get<uint64_t>();
    s.lines = j.at("lines").get<uint64_t>();
    for (size_t i = 0; i < s.skipped.size(); ++i) {
      auto name = std::string(skip_name(static_cast<skip_reason>(i)));
      if (j.at("skipped").contains(name))
        s.skipped[i] = j.at("skipped").at(name).get<uint64_t>();
    }
    s.unreadable_bytes = j.at("unreadable").at("bytes").get<uint64_t>();
    s.corrupt_members = j.at("unreadable").at("corrupt_members").get<uint64_t>();
    s.corrupt_lines_at_least = j.at("unreadable").at("corrupt_lines_at_least").get<uint64_t>();
    s.problems = j.at("problems").get<std::vector<std::string>>();
    s.problems_total = j.at("problems_total").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("inputs: ") + e.what());
  }
  return s;
}

}  // namespace dc::analyze
