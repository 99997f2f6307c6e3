#include "probe/kernel_object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <utility>

#include "datacrumbs.skel.h"
#include "core/huge_heap.h"
#include "probe/core_btf.h"
#include "probe/object_keeper.h"
#include "probe/refusal_memory.h"

namespace dc {

namespace {

// libbpf's messages: on stderr when verbose; warnings kept while the object loads, to tell
// which program failed and why.
std::mutex g_log_mutex;
bool g_verbose = false;
bool g_capturing = false;
std::string g_warnings;

int libbpf_log(enum libbpf_print_level level, const char* fmt, va_list args)
{
  std::lock_guard lock(g_log_mutex);
  if (g_capturing && level == LIBBPF_WARN) {
    va_list copy;
    va_copy(copy, args);
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, copy);
    va_end(copy);
    g_warnings += line;
  }
  return g_verbose ? vfprintf(stderr, fmt, args) : 0;
}

// The program libbpf's warnings blame (its name), and the reason in one line: libbpf's own
// message, or for a verifier refusal the verifier's last word before "processed N insns".
std::pair<std::string, std::string> blamed_program(const std::string& warnings)
{
  auto at = warnings.find("prog '");
  if (at == std::string::npos)
    return {};
  auto name_end = warnings.find('\'', at + 6);
  std::string name = warnings.substr(at + 6, name_end - at - 6);
  auto line_end = warnings.find('\n', name_end);
  std::string why = warnings.substr(name_end + 1, line_end - name_end - 1);
  why.erase(0, why.find_first_not_of(": "));
  if (auto processed = warnings.find("\nprocessed ", name_end); processed != std::string::npos) {
    auto start = warnings.rfind('\n', processed - 1);
    if (start != std::string::npos && start > name_end)
      why += " (verifier: " + warnings.substr(start + 1, processed - start - 1) + ")";
  }
  return {name, why};
}

result<> configure(datacrumbs_bpf* skel, const object_settings& s, const core_btf* core)
{
  if (core)
    std::ranges::copy(core->cast_ids, skel->rodata->dc_cast_ids);
  skel->rodata->dc_wake_mark = s.wake_mark;
  skel->rodata->dc_hold_new = s.hold_new;
  skel->rodata->dc_page_shift = s.page_shift;
  // Per-CPU counters (the fault layer's file RSS) have a part for every possible CPU.
  if (int cpus = s.possible_cpus ? static_cast<int>(s.possible_cpus) : libbpf_num_possible_cpus(); cpus > 0)
    skel->rodata->dc_nr_cpus = static_cast<uint32_t>(cpus);
  skel->rodata->dc_holder_ns_dev = s.holder_ns_dev;
  skel->rodata->dc_holder_ns_ino = s.holder_ns_ino;
  skel->rodata->dc_profile_interval_ns = s.profile_interval_ns;
  // About three intervals are in the map at once; an event that finds no room is counted lost.
  if (int err = bpf_map__set_max_entries(skel->maps.dc_profile, s.profile_entries); err)
    return fail(std::string("cannot size the profile map: ") + std::strerror(-err));
  if (int err = bpf_map__set_max_entries(skel->maps.dc_events, static_cast<uint32_t>(s.ring_bytes)); err)
    return fail(std::string("cannot size the event ring: ") + std::strerror(-err));
  auto hold_ring = static_cast<uint32_t>(s.hold_ring_bytes);
  if (int err = hold_ring ? bpf_map__set_max_entries(skel->maps.dc_holds, hold_ring) : 0; err)
    return fail(std::string("cannot size the hold ring: ") + std::strerror(-err));
  return {};
}

// Which programs load: the process tracker's, and those of the layers not left out, less the
// optional programs this kernel refused and, in profile mode, those only trace mode uses.
result<> choose_programs(datacrumbs_bpf* skel, const std::vector<std::unique_ptr<layer>>& layers,
                         const std::vector<std::string>& refused, const std::vector<std::string>& left_out,
                         const std::vector<std::string>& all_layers, bool profiling)
{
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj)
  {
    auto owners =
        std::ranges::count_if(all_layers, [&](const std::string& n) { return program_of(prog, n); });
    bool process = program_of(prog, "process");
    if (owners + (process ? 1 : 0) != 1)
      return fail(std::string("BPF program ") + bpf_program__name(prog) +
                  " must be named dc_<layer>_... after exactly one layer");
    bool on = process || std::ranges::any_of(layers, [&](const std::unique_ptr<layer>& l) {
                return l->owns(prog) && std::ranges::find(refused, l->name()) == refused.end() &&
                       !(profiling && l->trace_only(prog));
              });
    on = on && std::ranges::find(left_out, bpf_program__name(prog)) == left_out.end();
    if (int err = bpf_program__set_autoload(prog, on); err)
      return fail(std::string("cannot choose the programs to load: ") + std::strerror(-err));
  }
  return {};
}

// Which maps are made: the shared ones, and each layer's own (named dc_<layer>_...) when a
// program of that layer loads. A layer left out costs no map (its hashes' bucket arrays and LRU
// elements were most of `--layers syscall`'s start-up); a loaded program that used another
// layer's map would be refused by the verifier, not run with a map missing.
result<> choose_maps(datacrumbs_bpf* skel, const std::vector<std::string>& all_layers)
{
  std::vector<std::string> loading;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj)
  {
    auto owner = std::ranges::find_if(all_layers, [&](const std::string& n) { return program_of(prog, n); });
    if (owner != all_layers.end() && bpf_program__autoload(prog) &&
        std::ranges::find(loading, *owner) == loading.end())
      loading.push_back(*owner);
  }
  bpf_map* map;
  bpf_object__for_each_map(map, skel->obj)
  {
    auto owner = std::ranges::find_if(all_layers, [&](const std::string& n) { return map_of(map, n); });
    if (owner == all_layers.end())
      continue;
    bool used = std::ranges::find(loading, *owner) != loading.end();
    if (int err = bpf_map__set_autocreate(map, used); err)
      return fail(std::string("cannot choose the maps to make: ") + std::strerror(-err));
  }
  return {};
}

// Whether creating `map` is slow: the kernel makes every element of a hash map without
// BPF_F_NO_PREALLOC, and of an LRU hash (which cannot go without), when it creates it (10-20 ms
// for 65,536), and allocates a ring buffer's pages (8 ms for 64 MiB); even without elements, a
// hash of 16,384 or more has a bucket array to allocate and clear (~2.7 ms for 65,536). Those
// were most of the object's load time.
bool slow_to_create(const bpf_map* map)
{
  switch (bpf_map__type(map)) {
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_RINGBUF: return true;
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
      return !(bpf_map__map_flags(map) & BPF_F_NO_PREALLOC) || bpf_map__max_entries(map) >= 16384;
    default: return false;
  }
}

// libbpf creates an object's maps one after another; the slow ones are created here at once,
// on a thread per CPU, largest first, and handed to libbpf (which keeps a duplicate of each
// descriptor). The work is the kernel's page allocation, bound by CPU: a thread per map only
// contended (up to libbpf's load, 70.5 ms against 61 on two CPUs). One that cannot be made here
// is left to libbpf, which says why if it cannot make it either.
void create_slow_maps(datacrumbs_bpf* skel)
{
  std::vector<bpf_map*> maps;
  bpf_map* map;
  bpf_object__for_each_map(map, skel->obj) if (slow_to_create(map) && bpf_map__autocreate(map))
      maps.push_back(map);
  // Largest first: LRU hashes make every element, a ring its pages, the rest a bucket array.
  auto work = [](const bpf_map* m) {
    uint64_t entries = bpf_map__max_entries(m);
    switch (bpf_map__type(m)) {
      case BPF_MAP_TYPE_RINGBUF: return entries;
      case BPF_MAP_TYPE_LRU_HASH:
      case BPF_MAP_TYPE_LRU_PERCPU_HASH: return entries * (64 + bpf_map__value_size(m));
      default: return entries * 16;
    }
  };
  std::ranges::sort(maps, std::greater{}, work);
  std::vector<int> fds(maps.size(), -1);
  std::atomic<size_t> next{0};
  auto make = [&] {
    for (size_t i; (i = next.fetch_add(1)) < maps.size();) {
      const bpf_map* m = maps[i];
      LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m));
      fds[i] = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
                              bpf_map__value_size(m), bpf_map__max_entries(m), &opts);
    }
  };
  {
    std::vector<std::jthread> makers;
    int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    for (int t = 1; t < cpus && static_cast<size_t>(t) < maps.size(); ++t) {
      try {
        makers.emplace_back(make);
      } catch (const std::system_error&) {
        break;  // no thread to be had (a thread limit): this one makes the rest
      }
    }
    make();
  }
  for (size_t i = 0; i < maps.size(); ++i)
    if (fds[i] >= 0) {
      bpf_map__reuse_fd(maps[i], fds[i]);
      close(fds[i]);
    }
}

}  // namespace

result<loaded_object> load_object(const object_settings& settings,
                                  const std::vector<std::unique_ptr<layer>>& layers,
                                  const std::vector<std::string>& all_layers)
{
  g_verbose = settings.verbose;
  libbpf_set_print(libbpf_log);
  loaded_object out;
  std::optional<core_btf> core;
  // The object and kernel hashed once (the CO-RE cache's name, and the start of the kept
  // object's key: each hashed the 1.4 MB object apart before).
  size_t size = 0;
  const void* bytes = datacrumbs_bpf__elf_bytes(&size);
  std::span object(static_cast<const std::byte*>(bytes), size);
  bool keyed = !settings.core_btf_dir.empty() || settings.kept_objects;
  std::string object_key = keyed ? core_btf_key(object) : std::string();
  if (!settings.core_btf_dir.empty()) {
    auto cached = cached_core_btf(object, object_key, settings.core_btf_dir);
    if (cached)
      core = std::move(*cached);
    out.core_btf =
        cached ? core->path + (core->made ? " (made now)" : "") : "none: " + cached.error().message;
  }
  std::vector<std::string> refused, left_out;
  std::optional<std::pair<core_btf, std::string>> parked;  // the cache, and whose refusal parked it
  bool started_aside = false;
  bool asked_keeper = !settings.kept_objects;
  // What this kernel refused before, in a run configured the same way, is left out at once
  // (probe/refusal_memory.h); what this run finds refused is remembered when every refusal was
  // the kernel's lasting answer.
  bool recalled = settings.core_btf_dir.empty();
  std::string first_key;
  bool found_refusals = false, all_lasting = true;
  for (;;) {
    LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = core ? core->path.c_str() : nullptr);
    datacrumbs_bpf* skel = datacrumbs_bpf__open_opts(&open_opts);
    if (!skel && core) {
      out.core_btf = "none: libbpf cannot read " + core->path;
      core.reset();
      continue;
    }
    if (!skel)
      return fail(std::string("cannot open the BPF object: ") + std::strerror(errno));
    result<> ready = configure(skel, settings, core ? &*core : nullptr);
    if (ready)
      ready = choose_programs(skel, layers, refused, left_out, all_layers, settings.profile_interval_ns != 0);
    for (const auto& l : layers)
      if (ready && std::ranges::find(refused, l->name()) == refused.end())
        ready = l->before_load(*skel);
    if (ready)
      ready = choose_maps(skel, all_layers);
    if (!ready) {
      datacrumbs_bpf__destroy(skel);
      return std::unexpected(ready.error());
    }
    std::string key = settings.kept_objects || !recalled ? kept_object_key(*skel, object_key) : std::string();
    if (!std::exchange(recalled, true) && !key.empty()) {
      first_key = key;
      out.refusals_recalled = leave_out(recall_refusals(settings.core_btf_dir, first_key), layers, refused,
                                        left_out, out.refused);
      if (out.refusals_recalled && settings.verbose)
        std::fprintf(stderr, "datacrumbs: left out what this kernel refused in the last run configured so\n");
      if (out.refusals_recalled) {
        datacrumbs_bpf__destroy(skel);
        continue;
      }
    }
    if (settings.kept_objects)
      out.kept_key = key;
    // A kept object configured the same way needs no load at all (probe/object_keeper.h).
    if (!std::exchange(asked_keeper, true) && !out.kept_key.empty()) {
      // The work beside the load starts now: there may be no load to wait for.
      if (settings.while_loading && !std::exchange(started_aside, true))
        settings.while_loading();
      auto kept = take_kept_object(out.kept_key);
      result<std::vector<int>> adopted = std::unexpected(kept ? error{} : kept.error());
      if (kept)
        adopted = adopt_kept_object(*skel, std::move(*kept));
      if (adopted) {
        out.skel = skel;
        out.adopted = true;
        out.adopted_programs = std::move(*adopted);
        if (settings.verbose)
          std::fprintf(stderr, "datacrumbs: the object was taken from its keeper, not loaded\n");
        return out;
      }
      out.keeper_note = adopted.error().message;
      if (kept) {  // some maps may be the kept ones already: open the object afresh
        datacrumbs_bpf__destroy(skel);
        continue;
      }
    }
    create_slow_maps(skel);
    {
      std::lock_guard lock(g_log_mutex);
      g_capturing = true;
      g_warnings.clear();
    }
    if (settings.while_loading && !started_aside) {
      settings.while_loading();
      started_aside = true;
    }
    int err = 0;
    {
      huge_heap heap;
      err = datacrumbs_bpf__load(skel);
    }
    std::string warnings;
    {
      std::lock_guard lock(g_log_mutex);
      g_capturing = false;
      warnings.swap(g_warnings);
    }
    if (!err) {
      if (found_refusals && all_lasting && !first_key.empty())
        (void)remember_refusals(settings.core_btf_dir, first_key, refusals_of(left_out, out.refused));
      if (settings.verbose && !out.core_btf.empty())
        std::fprintf(
            stderr, "datacrumbs: CO-RE relocated against %s\n",
            core ? out.core_btf.c_str() : ("the kernel's BTF (minimal BTF " + out.core_btf + ")").c_str());
      out.skel = skel;
      return out;
    }
    auto [name, why] = blamed_program(warnings);
    // A refusal while relocating against the cached BTF is tried again against the kernel's
    // whole BTF before any program is blamed: the cache must never cost a layer. The cache is
    // parked meanwhile; it comes back when the same program is refused without it too (the
    // kernel refuses that program, not the cache), so that a program this kernel always refuses
    // does not make every run relocate against the whole BTF.
    if (core) {
      datacrumbs_bpf__destroy(skel);
      out.core_btf =
          "none: " + (name.empty() ? std::string("a program") : name) + " was refused with " + core->path;
      parked.emplace(std::move(*core), name);
      core.reset();
      continue;
    }
    if (parked && parked->second == name && !name.empty()) {
      core = std::move(parked->first);
      out.core_btf = core->path + (core->made ? " (made now)" : "");
    }
    parked.reset();
    // Whose program was it? An optional one (a faster way this kernel may lack): load again
    // without it. A layer's: leave that layer out and load again; anything else (the process
    // tracker, a map) fails the whole object.
    bpf_program* prog = name.empty() ? nullptr : bpf_object__find_program_by_name(skel->obj, name.c_str());
    auto blamed = std::ranges::find_if(layers, [&](const std::unique_ptr<layer>& l) {
      return prog && l->owns(prog) && std::ranges::find(refused, l->name()) == refused.end();
    });
    std::string section = prog ? bpf_program__section_name(prog) : "";
    bool optional = blamed != layers.end() && (*blamed)->optional(prog);
    datacrumbs_bpf__destroy(skel);
    found_refusals = true;
    all_lasting = all_lasting && lasting_refusal(err);
    if (optional && std::ranges::find(left_out, name) == left_out.end()) {
      left_out.push_back(name);
      continue;
    }
    if (blamed == layers.end())
      return fail("cannot load the BPF programs: " +
                  (name.empty() ? std::string(std::strerror(-err)) : name + ": " + why));
    refused.emplace_back((*blamed)->name());
    out.refused.push_back({std::string((*blamed)->name()),
                           std::string((*blamed)->category()),
                           false,
                           {},
                           section + ": " + why});
  }
}

}  // namespace dc
