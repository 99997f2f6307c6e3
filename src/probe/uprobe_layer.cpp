#include "probe/uprobe_layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "core/category.h"
#include "core/function_table.h"
#include "core/names.h"
#include "explore/elf_symbols.h"
#include "datacrumbs.skel.h"
#include "probe/process_links.h"
#include "probe/uprobe_links.h"
#include "probe/uprobe_objects.h"

extern "C" {
#include "events.h"
}

namespace dc {

namespace {

class uprobe_layer final : public user_probes {
 public:
  uprobe_layer(std::vector<uprobe_target> targets, std::vector<uprobe_entry> entries)
      : scanner_(std::move(entries))
  {
    take_planned(std::move(targets));
  }
  ~uprobe_layer() override { detach(); }

  // After the load and before loaded() writes the specs, with no process attached yet.
  void take_planned(std::vector<uprobe_target> targets) override
  {
    std::lock_guard lock(mutex_);
    targets_ = std::move(targets);
    index_.clear();
    planned_.clear();
    library_placements_.clear();
    std::map<std::pair<std::string, std::string>, size_t> in_library;  // (category, binary) -> functions
    for (size_t i = 0; i < targets_.size(); ++i) {
      const uprobe_target& t = targets_[i];
      ++in_library[{t.category, t.binary}];
      if (t.usdt)
        continue;
      index_.try_emplace({t.category, t.function}, i);
      if (auto id = identify(t.binary))
        planned_[*id].insert(t.category);
    }
    for (const auto& [where, n] : in_library)
      library_placements_.push_back({where.first, where.second, n, {}});

    probe_plan plan = plan_probe_sets(targets_);
    per_binary_ = std::move(plan.per_binary);
    suspects_ = std::move(plan.suspects);
    usdt_ = std::move(plan.usdt);
  }
  std::string_view name() const override { return "uprobe"; }
  std::string_view category() const override { return category::user; }

  // Nothing to attach yet: probes are attached per process as processes join the trace.
  layer_report attach() override
  {
    layer_report r{std::string(name()), std::string(category()), !targets_.empty(), {}, {}};
    if (targets_.empty())
      r.why = "no function to probe";
    std::map<std::string, size_t> counts;
    for (const auto& [binary, probes] : per_binary_) counts[binary] += probes.offsets.size();
    for (const auto& [binary, probes] : suspects_) counts[binary] += probes.offsets.size();
    for (const auto& [binary, probes] : usdt_) counts[binary] += probes.offsets.size();
    for (const auto& [binary, n] : counts)
      r.hooks.push_back(std::to_string(n) + " functions in " + binary +
                        (calls_.session_fd >= 0 ? " (uprobe session, per traced process)"
                                                : " (uprobe_multi entry and return, per traced process)"));
    return r;
  }

  // At a process's first hold: the named libraries' functions. At every hold: those the
  // objects it maps define (its program, after an exec).
  result<> attach_process(uint32_t tgid) override { return attach(tgid, true); }

  // The traced command, forked from this tool and not yet exec'd: what it maps now is this
  // tool's own objects, about to be replaced (searching them took 25-65 ms of the start-up);
  // its exec's hold searches its program's.
  result<> attach_before_exec(uint32_t tgid) override { return attach(tgid, false); }

  result<> attach(uint32_t tgid, bool search_objects)
  {
    // The next process waits here, held, while many links are still to close (backpressure).
    bool linked = links_.begin(tgid);
    std::vector<int> fds;
    if (!linked) {
      if (auto attached = attach_libraries(tgid, fds); !attached) {
        for (int f : fds) close(f);
        return attached;
      }
    }
    auto found = search_objects ? attach_objects(tgid, fds) : result<>{};
    links_.add(tgid, fds, true);
    return found;
  }

  std::vector<uprobe_target> targets() const override
  {
    std::lock_guard lock(mutex_);
    return targets_;
  }

  std::vector<uprobe_placement> placements() const override
  {
    std::lock_guard lock(mutex_);
    std::vector<uprobe_placement> all = library_placements_;
    for (const auto& [where, found] : found_)
      all.push_back({where.first, where.second, found.functions, {found.pids.begin(), found.pids.end()}});
    return all;
  }

  bool call_sessions() const override { return calls_.session_fd >= 0; }

  std::vector<std::string> refused_functions() const override
  {
    std::lock_guard lock(mutex_);
    return refused_names_;
  }

  void forget_process(uint32_t tgid) override { links_.forget(tgid); }
  void keep_links_to_the_end(uint32_t tgid) override { links_.keep_to_the_end(tgid); }
  std::vector<int> hand_over_links() override { return links_.hand_over(); }
  void sweep_gone() override { links_.sweep(); }
  sweep_counts swept() const override { return links_.swept(); }

  void detach() override
  {
    links_.close_all();
    layer::detach();
  }

  result<> before_load(datacrumbs_bpf& skel) override
  {
    // DATACRUMBS_NO_UPROBE_SESSION: what a kernel without uprobe sessions does, on any kernel
    // (its test, and a way around a kernel whose sessions misbehave): the session program is
    // loaded as a plain uprobe_multi one, which the verifier refuses (its kfunc is a session's),
    // and the object is loaded again without it, as on such a kernel.
    const char* off = std::getenv("DATACRUMBS_NO_UPROBE_SESSION");
    bool sessions = !(off && *off && *off != '0');
    for (bpf_program* p :
         {skel.progs.dc_uprobe_enter, skel.progs.dc_uprobe_return, skel.progs.dc_uprobe_usdt})
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(trace_uprobe_multi));
    bpf_program__set_expected_attach_type(
        skel.progs.dc_uprobe_session,
        static_cast<bpf_attach_type>(sessions ? trace_uprobe_session : trace_uprobe_multi));
    return {};
  }

  // The session program needs Linux 6.13+; without it, calls are linked to the entry and return
  // programs.
  bool optional(const bpf_program* prog) const override
  {
    return std::string_view(bpf_program__name(prog)) == "dc_uprobe_session";
  }

 protected:
  result<> after_load(datacrumbs_bpf& skel) override
  {
    // skel() is set: the spec map is filled through it, as for later targets.
    int session = fd_of(skel.progs.dc_uprobe_session);
    calls_ = {session, session >= 0 ? -1 : fd_of(skel.progs.dc_uprobe_enter),
              session >= 0 ? -1 : fd_of(skel.progs.dc_uprobe_return)};
    for (uint32_t i = 0; i < targets_.size(); ++i)
      if (auto written = write_spec(i, targets_[i].function); !written)
        return written;
    // A named library is linked for every process before it maps it: mapping it needs no hold.
    for (const auto* binaries : {&per_binary_, &suspects_, &usdt_})
      for (const auto& [binary, set] : *binaries)
        if (struct stat st{}; stat(binary.c_str(), &st) == 0)
          need_no_hold(kernel_dev(major(st.st_dev), minor(st.st_dev)), st.st_ino);
    return {};
  }

 private:
  // The named libraries' functions (and USDT sites), linked on their files for tgid.
  result<> attach_libraries(uint32_t tgid, std::vector<int>& fds)
  {
    std::map<std::string, probe_set> plan, suspects;
    {
      std::lock_guard lock(mutex_);
      plan = per_binary_;
      suspects.swap(suspects_);  // tried once, by the first process
    }
    if (auto settled = settle_suspects(suspects, tgid, fds); !settled)
      return settled;
    for (const auto& [binary, sites] : usdt_) {
      std::vector<uint64_t> refused;  // a USDT site is a nop: the kernel does not refuse it
      if (int err = link_probe_set(fd_of(skel()->progs.dc_uprobe_usdt), trace_uprobe_multi, binary, sites,
                                   false, tgid, fds, refused))
        return fail("cannot attach the USDT probes of " + binary + " for process " + std::to_string(tgid) +
                    ": " + std::strerror(err));
    }
    for (auto& [binary, set] : plan) {
      std::vector<uint64_t> refused;
      if (int err = link_calls(calls(), binary, set, tgid, fds, refused))
        return fail("cannot attach the functions of " + binary + " for process " + std::to_string(tgid) +
                    ": " + std::strerror(err));
      if (!refused.empty())
        set = forget_refused(binary, refused);
    }
    return {};
  }

  // Tells the BPF side that a process mapping this file as code need not be held for it
  // (bpf/process.bpf.c dc_hold_code_map): it defines no function to link, or is linked anyway.
  void need_no_hold(uint32_t dev, uint64_t ino)
  {
    if (ino == 0)
      return;
    {
      std::lock_guard lock(mutex_);
      if (!no_hold_.insert({dev, ino}).second)
        return;
    }
    dc_code_key key{ino, dev, 0};
    uint8_t one = 1;
    // A failure (the map full) costs a hold per mapping of that file, never an event.
    (void)bpf_map_update_elem(bpf_map__fd(skel()->maps.dc_code_known), &key, &one, BPF_ANY);
  }

  // The entries' functions defined by the objects tgid maps itself (each object once per
  // process), linked for it; a named library's own functions are its plan's.
  result<> attach_objects(uint32_t tgid, std::vector<int>& fds)
  {
    for (const code_object& object : code_objects(tgid)) {
      const std::string& path = object.path;
      auto id = identify(path);
      if (!id) {
        need_no_hold(object.dev, object.ino);  // nothing can be linked to it by name
        continue;
      }
      probe_set set;
      {
        std::lock_guard lock(mutex_);
        if (!links_.first_search(tgid, *id))
          continue;
        auto planned = planned_.find(*id);
        for (const object_function& f : scanner_.functions_of(path, *id)) {
          const std::string& category = scanner_.entries()[f.entry].category;
          if (planned != planned_.end() && planned->second.contains(category))
            continue;
          auto cookie = cookie_for(category, f.function, path, f.file_offset);
          if (!cookie)
            return std::unexpected(cookie.error());
          set.offsets.push_back(f.file_offset);
          set.cookies.push_back(*cookie);
        }
      }
      if (set.offsets.empty()) {
        need_no_hold(object.dev, object.ino);
        continue;
      }
      std::vector<uint64_t> refused;
      if (int err = link_calls(calls(), path, set, tgid, fds, refused))
        return fail("cannot attach the functions " + path + " defines for process " + std::to_string(tgid) +
                    ": " + std::strerror(err));
      if (!refused.empty()) {
        std::lock_guard lock(mutex_);
        for (uint64_t c : refused) refused_names_.push_back(targets_[c].function + " (" + path + ")");
        set = without(set, refused);
      }
      std::lock_guard lock(mutex_);
      for (uint64_t c : set.cookies) {
        found_in& f = found_[{targets_[c].category, path}];
        f.pids.insert(tgid);
        f.function_cookies.insert(c);
        f.functions = f.function_cookies.size();
      }
    }
    return {};
  }

  // The probe index of a function an object defines (mutex_ held): the planned target of the
  // same entry and name if there is one (its events are the same function's), else a new one.
  result<uint64_t> cookie_for(const std::string& category, const std::string& function,
                              const std::string& path, uint64_t offset)
  {
    if (auto it = index_.find({category, function}); it != index_.end())
      return it->second;
    auto i = static_cast<uint32_t>(targets_.size());
    if (auto written = write_spec(i, function); !written)
      return std::unexpected(written.error());
    targets_.push_back({category, function, path, offset});
    index_.emplace(std::pair{category, function}, i);
    return i;
  }

  // Fills probe index i's entry of the spec map: which argument is a string, an item size.
  result<> write_spec(uint32_t i, const std::string& function)
  {
    if (i >= bpf_map__max_entries(skel()->maps.dc_uprobe_specs))
      return fail("too many functions to probe: more than " +
                  std::to_string(bpf_map__max_entries(skel()->maps.dc_uprobe_specs)));
    const function_info* info = find_function(function);
    dc_uprobe_spec spec{};
    spec.str_arg = info ? info->str_arg : -1;
    spec.item_size_arg = info ? info->item_size_arg : -1;
    spec.deref_arg = info && info->deref_when != deref::none ? info->deref_arg : -1;
    spec.deref_at_return = info && info->deref_when == deref::at_return ? 1 : 0;
    if (bpf_map_update_elem(bpf_map__fd(skel()->maps.dc_uprobe_specs), &i, &spec, BPF_ANY) != 0)
      return fail(std::string("cannot fill the uprobe spec map: ") + std::strerror(errno));
    return {};
  }

  // Tries each suspect function alone for tgid (link_each_alone): a refused one is reported and
  // skipped, an accepted one keeps its links and joins its binary's set for every later process.
  result<> settle_suspects(const std::map<std::string, probe_set>& suspects, uint32_t tgid,
                           std::vector<int>& fds)
  {
    std::vector<lone_link> trials = link_each_alone(calls(), suspects, tgid);
    std::lock_guard lock(mutex_);
    for (lone_link& t : trials) {
      fds.insert(fds.end(), t.fds.begin(), t.fds.end());
      const std::string& function = targets_[t.one.cookies[0]].function;
      if (t.err)
        return fail("cannot attach " + function + " for process " + std::to_string(tgid) + ": " +
                    std::strerror(t.err));
      if (!t.refused.empty()) {
        refused_names_.push_back(function + " (" + t.binary + ")");
        continue;
      }
      per_binary_[t.binary].offsets.push_back(t.one.offsets[0]);
      per_binary_[t.binary].cookies.push_back(t.one.cookies[0]);
    }
    return {};
  }

  // Drops functions the kernel refused from the binary's set, for this and every later process.
  probe_set forget_refused(const std::string& binary, const std::vector<uint64_t>& refused)
  {
    std::lock_guard lock(mutex_);
    probe_set& set = per_binary_[binary];
    probe_set kept = without(set, refused);
    set = kept;
    for (uint64_t c : refused) refused_names_.push_back(targets_[c].function + " (" + binary + ")");
    return kept;
  }

  // Functions of one entry found in one object processes map, and those processes.
  struct found_in {
    size_t functions = 0;
    std::set<uint64_t> function_cookies;
    std::set<uint32_t> pids;
  };

  // The programs calls are linked to (set once loaded, read-only after).
  call_programs calls() const { return calls_; }
  call_programs calls_;

  mutable std::mutex mutex_;  // everything below but links_: attached from two threads
  std::vector<uprobe_target> targets_;
  object_scanner scanner_;
  std::map<std::pair<std::string, std::string>, uint64_t> index_;  // (category, function) -> target
  std::map<file_id, std::set<std::string>> planned_;  // a named library -> the entries planned in it
  std::vector<uprobe_placement> library_placements_;
  std::map<std::pair<std::string, std::string>, found_in> found_;  // (category, object)
  std::map<std::string, probe_set> per_binary_;
  std::map<std::string, probe_set> suspects_;  // LOCK-prefixed: tried alone by the first process
  std::map<std::string, probe_set> usdt_;      // USDT sites, per binary: entry only
  std::vector<std::string> refused_names_;
  std::set<std::pair<uint32_t, uint64_t>> no_hold_;  // files told to dc_code_known (dev, ino)
  process_links links_;                              // per traced process; every link closed with the layer
};

}  // namespace

std::unique_ptr<user_probes> make_uprobe_layer(std::vector<uprobe_target> targets,
                                               std::vector<uprobe_entry> entries)
{
  return std::make_unique<uprobe_layer>(std::move(targets), std::move(entries));
}

}  // namespace dc
