#include "probe/layers.h"

#include <time.h>

#include "core/category.h"
#include "core/user_regex.h"
#include "datacrumbs.skel.h"

namespace dc {

namespace {

// The network layer: each run has its own epoch (bpf/net.bpf.c, dc_net_epoch), so that a
// socket's owner remembered by an earlier run on a kept object is not taken for this run's.
class net_layer final : public layer {
 public:
  std::string_view name() const override { return "net"; }
  std::string_view category() const override { return category::net; }

 protected:
  result<> after_load(datacrumbs_bpf& skel) override
  {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    skel.bss->dc_net_epoch =
        static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec) + 1;
    return {};
  }
};

}  // namespace

std::unique_ptr<layer> make_net_layer()
{
  return std::make_unique<net_layer>();
}

std::vector<std::unique_ptr<layer>> make_layers()
{
  std::vector<std::unique_ptr<layer>> all;
  all.push_back(make_syscall_layer());
  all.push_back(make_fs_layer());
  all.push_back(make_block_layer());
  all.push_back(make_pagecache_layer());
  all.push_back(make_net_layer());
  all.push_back(make_fault_layer());
  return all;
}

std::vector<std::string> all_layer_names()
{
  std::vector<std::string> names{"uprobe", "beacon"};
  for (const auto& l : make_layers()) names.emplace_back(l->name());
  return names;
}

std::vector<std::string> kernel_layers_in(const probe_config& config)
{
  bool syscalls = false;
  std::vector<user_regex> kernel;  // the kernel entries' regexes (the config's reader refused a bad one)
  for (const probe_entry& e : config.entries) {
    syscalls |= e.kind == probe_kind::syscalls;
    if (e.kind != probe_kind::kernel)
      continue;
    if (auto regex = compile_user_regex(e.regex, e.name))
      kernel.push_back(std::move(*regex));
  }
  std::vector<std::string> names;
  for (const auto& l : make_layers()) {
    bool on = syscalls && l->name() == "syscall";
    for (const user_regex& r : kernel) on = on || r.matches(l->name());
    if (on)
      names.emplace_back(l->name());
  }
  return names;
}

result<> check_layer_names(const std::vector<std::string>& names)
{
  auto all = make_layers();
  for (const auto& n : names) {
    bool known = false;
    for (const auto& l : all) known |= l->name() == n;
    if (!known) {
      std::string choices;
      for (const auto& l : all) choices += (choices.empty() ? "" : ", ") + std::string(l->name());
      return fail("unknown layer '" + n + "' (layers: " + choices + ")", 2);
    }
  }
  return {};
}

}  // namespace dc
