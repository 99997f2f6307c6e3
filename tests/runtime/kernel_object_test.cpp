// The BPF object as the kernel's verifier sees it on machines larger than this one. The fault
// layer reads per-CPU counters, which have a part per possible CPU: the verifier's work must not
// grow with their number (an HPC node has 64 to 256 CPUs, and the verifier stops a program at
// 1,000,000 instructions). Loaded, never attached: nothing is traced.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "datacrumbs.skel.h"
#include "probe/kernel_object.h"
#include "probe/layer.h"
#include "probe/layers.h"

namespace dc {
namespace {

// The instructions the verifier processed for the fault layer's RSS program, loaded for a
// machine with `cpus` possible CPUs; 0 when the layer did not load.
uint32_t fault_program_insns(uint32_t cpus)
{
  object_settings settings;
  settings.ring_bytes = 1u << 20;
  settings.possible_cpus = cpus;
  std::vector<std::unique_ptr<layer>> layers;
  layers.push_back(make_fault_layer());
  auto loaded = load_object(settings, layers, all_layer_names());
  EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message);
  if (!loaded)
    return 0;
  for (const auto& refused : loaded->refused)
    ADD_FAILURE() << cpus << " CPUs: " << refused.name << ": " << refused.why;
  bpf_prog_info info{};
  uint32_t length = sizeof(info);
  int fd = bpf_program__fd(loaded->skel->progs.dc_fault_rss_change);
  bool read = loaded->refused.empty() && fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &length) == 0;
  datacrumbs_bpf__destroy(loaded->skel);
  return read ? info.verified_insns : 0;
}

TEST(kernel_object, FaultLayerVerifiesAlikeForAnyNumberOfCpus)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  std::map<uint32_t, uint32_t> insns;
  for (uint32_t cpus : {2u, 64u, 8192u}) insns[cpus] = fault_program_insns(cpus);
  EXPECT_GT(insns[2], 0u);
  EXPECT_LT(insns[2], 100000u);
  // Alike: within 10% (a bound compared with the CPU count may fold differently). The program
  // that summed with a bounded loop grew by ~4,500 instructions a CPU and failed at 32.
  EXPECT_LE(insns[64], insns[2] * 11 / 10);
  EXPECT_LE(insns[8192], insns[2] * 11 / 10);
  for (auto [cpus, n] : insns) std::cout << cpus << " possible CPUs: " << n << " instructions verified\n";
}

// A layer's own maps (named dc_<layer>_...) are made only when its programs load: each layer
// loads alone with its own and the shared maps, and no other layer's map is made (their bucket
// arrays and LRU elements were most of `--layers syscall`'s start-up). A program that used
// another layer's map would be refused here (the verifier rejects a map that was not made).
TEST(kernel_object, EachLayerLoadsAloneWithOnlyItsOwnMaps)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  std::vector<std::string> all = all_layer_names();
  for (auto& alone : make_layers()) {
    std::string name(alone->name());
    object_settings settings;
    settings.ring_bytes = 1u << 20;
    std::vector<std::unique_ptr<layer>> layers;
    layers.push_back(std::move(alone));
    auto loaded = load_object(settings, layers, all);
    ASSERT_TRUE(loaded) << name << ": " << (loaded ? "" : loaded.error().message);
    for (const auto& refused : loaded->refused)
      ADD_FAILURE() << name << " alone: " << refused.name << ": " << refused.why;
    int own = 0;
    bpf_map* map;
    bpf_object__for_each_map(map, loaded->skel->obj)
    {
      auto owner = std::ranges::find_if(all, [&](const std::string& n) { return map_of(map, n); });
      bool made = bpf_map__fd(map) >= 0;
      bool wanted = owner == all.end() || *owner == name;
      own += owner != all.end() && *owner == name;
      EXPECT_EQ(made, wanted) << name << " alone: map " << bpf_map__name(map) << " of "
                              << (owner == all.end() ? std::string("every layer") : *owner);
    }
    std::cout << name << ": " << own << " maps of its own\n";
    // The syscall layer owns one small map; the others own what is slow to make.
    EXPECT_GE(own, name == "syscall" ? 1 : 2) << name;
    datacrumbs_bpf__destroy(loaded->skel);
  }
}

}  // namespace
}  // namespace dc
