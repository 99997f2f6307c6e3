#include "probe/uprobe_layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <array>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <regex>
#include <set>

#include "core/category.h"
#include "core/function_table.h"
#include "core/user_regex.h"
#include "explore/elf_symbols.h"
#include "datacrumbs.skel.h"
#include "probe/uprobe_links.h"

extern "C" {
#include "events.h"
}

namespace dc {

namespace {

class uprobe_layer final : public user_probes {
 public:
  explicit uprobe_layer(std::vector<uprobe_target> targets) : targets_(std::move(targets))
  {
    // Per binary: the offsets of its functions, the cookie of each its index in targets_.
    std::map<std::string, std::ifstream> files;
    for (size_t i = 0; i < targets_.size(); ++i) {
      const uprobe_target& t = targets_[i];
      auto [file, opened] = files.try_emplace(t.binary);
      if (opened)
        file->second.open(t.binary, std::ios::binary);
      if (t.usdt) {  // entry only, with its semaphore
        probe_set& sites = usdt_[t.binary];
        sites.offsets.push_back(t.offset);
        sites.cookies.push_back(i);
        sites.ref_ctrs.push_back(t.semaphore);
        continue;
      }
      probe_set& into = has_lock_prefix(file->second, t.offset) ? suspects_[t.binary] : per_binary_[t.binary];
      into.offsets.push_back(t.offset);
      into.cookies.push_back(i);
    }
  }
  ~uprobe_layer() override { detach(); }
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
                        " (uprobe_multi, per traced process)");
    return r;
  }

  result<> attach_process(uint32_t tgid) override
  {
    std::map<std::string, probe_set> plan, suspects;
    {
      std::lock_guard lock(mutex_);
      plan = per_binary_;
      suspects.swap(suspects_);  // tried once, by the first process
    }
    std::vector<int> fds;
    if (auto settled = settle_suspects(suspects, tgid, fds); !settled) {
      for (int f : fds) close(f);
      return settled;
    }
    for (const auto& [binary, sites] : usdt_) {
      std::vector<uint64_t> refused;  // a USDT site is a nop: the kernel does not refuse it
      if (int err = link_probe_set(bpf_program__fd(skel()->progs.dc_uprobe_usdt), binary, sites, false, tgid,
                                   fds, refused)) {
        for (int f : fds) close(f);
        return fail("cannot attach the USDT probes of " + binary + " for process " + std::to_string(tgid) +
                    ": " + std::strerror(err));
      }
    }
    for (auto& [binary, set] : plan) {
      for (bool ret : {false, true}) {
        bpf_program* prog = ret ? skel()->progs.dc_uprobe_return : skel()->progs.dc_uprobe_enter;
        std::vector<uint64_t> refused;
        if (int err = link_probe_set(bpf_program__fd(prog), binary, set, ret, tgid, fds, refused)) {
          for (int f : fds) close(f);
          return fail("cannot attach the functions of " + binary + " for process " + std::to_string(tgid) +
                      ": " + std::strerror(err));
        }
        if (!refused.empty())
          set = forget_refused(binary, refused);  // the return probes skip them too
      }
    }
    std::lock_guard lock(mutex_);
    auto& held = links_[tgid];
    held.insert(held.end(), fds.begin(), fds.end());
    return {};
  }

  std::vector<std::string> refused_functions() const override
  {
    std::lock_guard lock(mutex_);
    return refused_names_;
  }

  void forget_process(uint32_t tgid) override
  {
    std::vector<int> fds;
    {
      std::lock_guard lock(mutex_);
      auto it = links_.find(tgid);
      if (it == links_.end())
        return;
      fds = std::move(it->second);
      links_.erase(it);
    }
    closer_.close_later(std::move(fds));
  }

  void detach() override
  {
    std::map<uint32_t, std::vector<int>> all;
    {
      std::lock_guard lock(mutex_);
      all.swap(links_);
    }
    for (auto& [tgid, fds] : all) closer_.close_later(std::move(fds));
    layer::detach();
  }

  result<> before_load(datacrumbs_bpf& skel) override
  {
    for (bpf_program* p :
         {skel.progs.dc_uprobe_enter, skel.progs.dc_uprobe_return, skel.progs.dc_uprobe_usdt})
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(trace_uprobe_multi));
    return {};
  }

 protected:
  result<> after_load(datacrumbs_bpf& skel) override
  {
    int specs = bpf_map__fd(skel.maps.dc_uprobe_specs);
    if (targets_.size() > bpf_map__max_entries(skel.maps.dc_uprobe_specs))
      return fail("too many functions to probe: " + std::to_string(targets_.size()));
    for (uint32_t i = 0; i < targets_.size(); ++i) {
      const function_info* info = find_function(targets_[i].function);
      dc_uprobe_spec spec{};
      spec.str_arg = info ? info->str_arg : -1;
      spec.item_size_arg = info ? info->item_size_arg : -1;
      spec.deref_arg = info && info->deref_when != deref::none ? info->deref_arg : -1;
      spec.deref_at_return = info && info->deref_when == deref::at_return ? 1 : 0;
      if (bpf_map_update_elem(specs, &i, &spec, BPF_ANY) != 0)
        return fail(std::string("cannot fill the uprobe spec map: ") + std::strerror(errno));
    }
    return {};
  }

 private:
  // Tries each suspect function alone for tgid, several at once (a refusal costs a grace
  // period, and those overlap): a refused one is reported and skipped, an accepted one keeps
  // its links and joins its binary's set for every later process.
  result<> settle_suspects(const std::map<std::string, probe_set>& suspects, uint32_t tgid,
                           std::vector<int>& fds)
  {
    struct trial {
      std::string binary;
      probe_set one;
      std::vector<int> fds;
      std::vector<uint64_t> refused;
      int err = 0;
    };
    std::vector<trial> trials;
    for (const auto& [binary, set] : suspects)
      for (size_t i = 0; i < set.offsets.size(); ++i)
        trials.push_back({binary, {{set.offsets[i]}, {set.cookies[i]}, {}}, {}, {}, 0});
    auto run = [&](trial& t) {
      for (bool ret : {false, true}) {
        bpf_program* prog = ret ? skel()->progs.dc_uprobe_return : skel()->progs.dc_uprobe_enter;
        t.err = link_probe_set(bpf_program__fd(prog), t.binary, t.one, ret, tgid, t.fds, t.refused);
        if (t.err || !t.refused.empty())
          return;
      }
    };
    constexpr size_t at_once = 16;
    for (size_t first = 0; first < trials.size(); first += at_once) {
      std::vector<std::thread> workers;
      for (size_t k = first; k < std::min(trials.size(), first + at_once); ++k)
        workers.emplace_back(run, std::ref(trials[k]));
      for (auto& w : workers) w.join();
    }
    std::lock_guard lock(mutex_);
    for (trial& t : trials) {
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
    probe_set kept;
    for (size_t i = 0; i < set.cookies.size(); ++i) {
      if (std::ranges::find(refused, set.cookies[i]) != refused.end())
        continue;
      kept.offsets.push_back(set.offsets[i]);
      kept.cookies.push_back(set.cookies[i]);
    }
    set = kept;
    for (uint64_t c : refused) refused_names_.push_back(targets_[c].function + " (" + binary + ")");
    return kept;
  }

  std::vector<uprobe_target> targets_;
  mutable std::mutex mutex_;  // per_binary_, refused_names_, links_: attached from two threads
  std::map<std::string, probe_set> per_binary_;
  std::map<std::string, probe_set> suspects_;  // LOCK-prefixed: tried alone by the first process
  std::map<std::string, probe_set> usdt_;      // USDT sites, per binary: entry only
  std::vector<std::string> refused_names_;
  std::map<uint32_t, std::vector<int>> links_;  // per traced process
  link_closer closer_;                          // joined (every link closed) with the layer
};

}  // namespace

std::unique_ptr<user_probes> make_uprobe_layer(std::vector<uprobe_target> targets)
{
  return std::make_unique<uprobe_layer>(std::move(targets));
}

}  // namespace dc
