#include "deploy/trace_name.h"

#include <unistd.h>

namespace dc {

namespace {

std::string two_digits(int v)
{
  return std::string(v < 10 ? "0" : "") + std::to_string(v);
}

}  // namespace

result<> check_run_id(const std::string& run_id)
{
  bool ok = !run_id.empty() && run_id.size() <= 64 && run_id != "." && run_id != ".." &&
            run_id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
                std::string::npos;
  if (!ok)
    return fail("invalid run id '" + run_id + "' (1-64 of letters, digits, '.', '_', '-'; not '.' or '..')",
                2);
  return {};
}

std::string short_host_name()
{
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0)
    return "unknown-host";
  std::string host = buf;
  return host.substr(0, host.find('.'));
}

result<std::string> expand_trace_pattern(const std::string& pattern, const trace_name_fields& fields)
{
  auto refuse = [&](const std::string& why) {
    return fail("trace pattern '" + pattern + "': " + why +
                    " (relative path ending in .pfw.gz; %j run id, %h host, %u user, %Y %m %d date, %%)",
                2);
  };
  if (pattern.empty() || pattern.front() == '/')
    return refuse("not a relative path");
  std::tm day{};
  gmtime_r(&fields.start, &day);
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (++i == pattern.size())
      return refuse("ends in a lone '%'");
    const std::string* field = nullptr;
    switch (pattern[i]) {
      case 'j': field = &fields.run_id; break;
      case 'h': field = &fields.host; break;
      case 'u': field = &fields.user; break;
      case 'Y': out += std::to_string(day.tm_year + 1900); continue;
      case 'm': out += two_digits(day.tm_mon + 1); continue;
      case 'd': out += two_digits(day.tm_mday); continue;
      case '%': out += '%'; continue;
      default: return refuse(std::string("unknown field '%") + pattern[i] + "'");
    }
    if (field->empty() || field->find('/') != std::string::npos || *field == "." || *field == "..")
      return fail("trace pattern '" + pattern + "': '%" + pattern[i] + "' would be '" + *field +
                      "', not a file name part",
                  2);
    out += *field;
  }
  if (!out.ends_with(".pfw.gz") || out.ends_with("/.pfw.gz"))
    return refuse("does not name a .pfw.gz file");
  for (size_t start = 0; start <= out.size();) {
    size_t end = out.find('/', start);
    std::string part = out.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part == "." || part == "..")
      return refuse("has an empty, '.' or '..' component");
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return out;
}

}  // namespace dc
