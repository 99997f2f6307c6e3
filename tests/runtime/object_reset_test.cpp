// Resetting a kept object (probe/object_reset.h): every map of the object has a reset, and after
// it the object's state is a fresh load's (hashes empty, arrays and .bss zero, task storage
// gone); the keeper's plan survives its argv. Loaded, never attached: nothing is traced.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "datacrumbs.skel.h"
#include "probe/kernel_object.h"
#include "probe/layer.h"
#include "probe/layers.h"
#include "probe/object_reset.h"
#include "probe/uprobe_layer.h"

namespace dc {
namespace {

std::vector<int> program_fds_in_order(const datacrumbs_bpf& skel)
{
  std::vector<int> fds;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel.obj) if (bpf_program__autoload(prog))
      fds.push_back(bpf_program__fd(prog));
  return fds;
}

TEST(object_reset, EveryMapIsResetToAFreshLoadsState)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  object_settings settings;
  settings.ring_bytes = 1u << 20;
  auto layers = make_layers();
  layers.push_back(make_uprobe_layer({}, {}));
  auto loaded = load_object(settings, layers, all_layer_names());
  ASSERT_TRUE(loaded) << loaded.error().message;
  datacrumbs_bpf* skel = loaded->skel;
  auto plan = reset_plan(*skel, program_fds_in_order(*skel));
  ASSERT_TRUE(plan) << plan.error().message;
  // State as a run leaves it: a hash entry, an array element, per-CPU counters, .bss, a
  // thread's storage (this one's, by its pidfd).
  uint32_t tgid = 4242, state = 1, zero = 0, gate = 7;
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.dc_traced), &tgid, &state, BPF_ANY), 0);
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.dc_hold_gate), &zero, &gate, BPF_ANY), 0);
  int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> lost(static_cast<size_t>(cpus), 5);
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.dc_lost), &zero, lost.data(), BPF_ANY), 0);
  skel->bss->dc_profile_flush_below = 9;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  ASSERT_GE(pidfd, 0);
  std::vector<char> thread(bpf_map__value_size(skel->maps.dc_threads), 1);
  ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.dc_threads), &pidfd, thread.data(), BPF_ANY), 0);

  auto reset = reset_object(*plan);
  ASSERT_TRUE(reset) << reset.error().message;
  uint32_t next = 0;
  EXPECT_NE(bpf_map_get_next_key(bpf_map__fd(skel->maps.dc_traced), nullptr, &next), 0);
  uint32_t got = 1;
  ASSERT_EQ(bpf_map_lookup_elem(bpf_map__fd(skel->maps.dc_hold_gate), &zero, &got), 0);
  EXPECT_EQ(got, 0u);
  ASSERT_EQ(bpf_map_lookup_elem(bpf_map__fd(skel->maps.dc_lost), &zero, lost.data()), 0);
  for (uint64_t v : lost) EXPECT_EQ(v, 0u);
  EXPECT_EQ(skel->bss->dc_profile_flush_below, 0u);
  EXPECT_NE(bpf_map_lookup_elem(bpf_map__fd(skel->maps.dc_threads), &pidfd, thread.data()), 0)
      << "the thread's storage outlived the reset";
  close(pidfd);
  datacrumbs_bpf__destroy(skel);
}

TEST(object_reset, ThePlanReadsBackAsWritten)
{
  std::vector<reset_step> steps{{reset_step::kind::drain, 5},   {reset_step::kind::zero, 6},
                                {reset_step::kind::ring, 7},    {reset_step::kind::as_is, 8},
                                {reset_step::kind::program, 9}, {reset_step::kind::forget_task, 10},
                                {reset_step::kind::link, 11}};
  auto text = plan_text(steps);
  auto back = parse_plan(text);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ((*back)[i].what, steps[i].what);
    EXPECT_EQ((*back)[i].fd, steps[i].fd);
  }
  for (const char* bad : {"x5", "d", "d-1", "d5x", "d5,,z6", "d99999999999"})
    EXPECT_FALSE(parse_plan(bad)) << bad;
}

}  // namespace
}  // namespace dc
