#include "cli/explore_mode.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "cli/layers_mode.h"
#include "core/user_regex.h"
#include "explore/usdt_notes.h"
#include "explore/elf_symbols.h"
#include "probe/system_checks.h"

namespace dc {

namespace {

// Tracepoints as "system:event", from tracefs (mounted if missing).
result<std::set<std::string>> list_tracepoints()
{
  if (auto mounted = ensure_tracefs(); !mounted)
    return std::unexpected(mounted.error());
  namespace fs = std::filesystem;
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& sys : fs::directory_iterator("/sys/kernel/tracing/events", ec)) {
    if (!sys.is_directory())
      continue;
    for (const auto& ev : fs::directory_iterator(sys.path(), ec))
      if (ev.is_directory())
        out.insert(sys.path().filename().string() + ":" + ev.path().filename().string());
  }
  if (out.empty())
    return fail("no tracepoints under /sys/kernel/tracing/events (is tracefs mounted, are you root?)");
  return out;
}

}  // namespace

result<int> explore(const explore_options& options)
{
  std::optional<user_regex> filter;
  if (!options.regex.empty()) {
    auto r = compile_user_regex(options.regex, "--regex");
    if (!r)
      return std::unexpected(r.error());
    filter = std::move(*r);
  }
  auto wanted = [&](const std::string& name) { return !filter || filter->matches(name); };
  if (options.kernel) {
    auto tracepoints = list_tracepoints();
    if (!tracepoints)
      return std::unexpected(tracepoints.error());
    for (const auto& tp : *tracepoints)
      if (wanted(tp))
        std::printf("tracepoint %s\n", tp.c_str());
    return list_layers(false);
  }
  auto path = resolve_binary(options.target);
  if (!path)
    return std::unexpected(path.error());
  if (options.usdt) {
    auto probes = list_usdt(*path);
    if (!probes)
      return std::unexpected(probes.error());
    std::set<std::string> names;  // a probe inlined in several places has several sites
    for (const auto& p : *probes) names.insert(p.provider + ":" + p.name);
    for (const auto& n : names)
      if (wanted(n))
        std::printf("%s\n", n.c_str());
    return 0;
  }
  auto functions = list_functions(*path);
  if (!functions)
    return std::unexpected(functions.error());
  for (const auto& f : *functions)
    if (wanted(f.name))
      std::printf("%s\n", f.name.c_str());
  return 0;
}

}  // namespace dc
