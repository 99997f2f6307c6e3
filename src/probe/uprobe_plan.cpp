// Planning the user-space layer: which functions (and USDT probe sites) of which binaries a
// config selects, found with the explorer. What finds nothing is a note, never an error.
#include <set>

#include "core/user_regex.h"
#include "explore/elf_symbols.h"
#include "explore/usdt_notes.h"
#include "probe/uprobe_layer.h"

namespace dc {

namespace {

// The functions of `path` the entry's regex matches, once per address (aliases share one).
void plan_functions(const probe_entry& e, const std::string& path, std::vector<uprobe_target>& targets,
                    std::set<std::pair<std::string, uint64_t>>& attached, std::vector<std::string>& notes)
{
  auto regex = compile_user_regex(e.regex, e.name);
  if (!regex) {  // the config's reader refuses one first
    notes.push_back("probe entry '" + e.name + "' skipped: " + regex.error().message);
    return;
  }
  auto functions = list_functions(path, [&](std::string_view name) { return regex->matches(name); });
  if (!functions) {
    notes.push_back("probe entry '" + e.name + "' skipped: " + functions.error().message);
    return;
  }
  size_t before = targets.size();
  for (const elf_function& f : *functions)
    if (attached.insert({path, f.address}).second)
      targets.push_back({e.name, f.name, path, f.file_offset});
  if (targets.size() == before)
    notes.push_back("probe entry '" + e.name + "': no function of " + path + " matches '" + e.regex + "'");
}

// The USDT probe sites of `path` whose name the regex matches (of the entry's provider, if it
// names one): every site of a probe, since a probe inlined in several places has several.
void plan_usdt(const probe_entry& e, const std::string& path, std::vector<uprobe_target>& targets,
               std::vector<std::string>& notes)
{
  auto probes = list_usdt(path);
  if (!probes) {
    notes.push_back("probe entry '" + e.name + "' skipped: " + probes.error().message);
    return;
  }
  auto regex = compile_user_regex(e.regex, e.name);
  size_t before = targets.size();
  for (const usdt_probe& p : *probes)
    if (regex && (e.provider.empty() || p.provider == e.provider) && regex->matches(p.name))
      targets.push_back({e.name, p.provider + ":" + p.name, path, p.file_offset, true, p.semaphore_offset});
  if (targets.size() == before)
    notes.push_back("probe entry '" + e.name + "': no USDT probe of " + path + " matches '" + e.regex + "'" +
                    (e.provider.empty() ? "" : " in provider '" + e.provider + "'"));
}

}  // namespace

std::vector<uprobe_target> plan_uprobes(const probe_config& config, std::vector<std::string>& notes)
{
  std::vector<uprobe_target> targets;
  std::set<std::pair<std::string, uint64_t>> attached;  // (binary, address): aliases once
  for (const probe_entry& e : config.entries) {
    if (e.kind == probe_kind::kprobe || e.kind == probe_kind::custom) {
      notes.push_back("probe entry '" + e.name + "' skipped: this probe kind is not supported yet");
      continue;
    }
    if (e.kind != probe_kind::uprobe && e.kind != probe_kind::usdt)
      continue;
    auto path = resolve_binary(e.file);
    if (!path) {
      notes.push_back("probe entry '" + e.name + "': " + path.error().message +
                      (e.kind == probe_kind::uprobe
                           ? "; its functions are still looked for in the traced programs"
                           : "; skipped"));
      continue;
    }
    if (e.kind == probe_kind::usdt)
      plan_usdt(e, *path, targets, notes);
    else
      plan_functions(e, *path, targets, attached, notes);
  }
  return targets;
}

std::vector<uprobe_entry> uprobe_entries_of(const probe_config& config)
{
  std::vector<uprobe_entry> entries;
  for (const probe_entry& e : config.entries)
    if (e.kind == probe_kind::uprobe)
      entries.push_back({e.name, e.regex});
  return entries;
}

}  // namespace dc
