// What the kernel refused, remembered for the next load configured the same way
// (probe/refusal_memory.h): the file read back only by the same configuration and boot and only
// when it is this user's alone; and against the kernel, a refused program left out at once by the
// next load (DATACRUMBS_NO_UPROBE_SESSION makes this kernel refuse the optional uprobe session
// program, as a kernel before 6.13 does).
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "datacrumbs.skel.h"
#include "probe/kernel_object.h"
#include "runtime/private_dir.h"
#include "probe/layers.h"
#include "probe/refusal_memory.h"
#include "probe/uprobe_layer.h"

namespace dc {
namespace {

namespace fs = std::filesystem;

// This file's temporary directories.
struct temp_dir : test::private_dir {
  temp_dir() : private_dir("dc-refusals") {}
};

// The one memory file in `dir`, or "".
std::string memory_file(const std::string& dir)
{
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("refused-"))
      return e.path();
  return "";
}

TEST(refusal_memory, ReadsBackForTheSameConfigurationOnly)
{
  temp_dir dir;
  refusals r{{"dc_uprobe_session"}, {{"net", "tp_btf/tcp_probe: invalid argument"}}};
  ASSERT_TRUE(remember_refusals(dir.path, "key-a", r));
  auto back = recall_refusals(dir.path, "key-a");
  EXPECT_EQ(back.programs, r.programs);
  EXPECT_EQ(back.layers, r.layers);
  EXPECT_TRUE(recall_refusals(dir.path, "key-b").empty()) << "another configuration";
  ASSERT_TRUE(remember_refusals(dir.path, "key-a", {}));
  EXPECT_TRUE(recall_refusals(dir.path, "key-a").empty()) << "forgotten";
  EXPECT_EQ(memory_file(dir.path), "");
}

TEST(refusal_memory, AFileOthersCouldWriteOrOfAnotherBootIsNotRead)
{
  temp_dir dir;
  ASSERT_TRUE(remember_refusals(dir.path, "key", {{"dc_uprobe_session"}, {}}));
  std::string file = memory_file(dir.path);
  ASSERT_NE(file, "");
  chmod(file.c_str(), 0666);
  EXPECT_TRUE(recall_refusals(dir.path, "key").empty()) << "a file others can write";
  chmod(file.c_str(), 0600);
  chmod(dir.path.c_str(), 0777);
  EXPECT_TRUE(recall_refusals(dir.path, "key").empty()) << "a directory others can write";
  EXPECT_FALSE(remember_refusals(dir.path, "key", {{"dc_uprobe_session"}, {}}));
  chmod(dir.path.c_str(), 0755);
  ASSERT_FALSE(recall_refusals(dir.path, "key").empty());
  // Another boot: the first line is the boot's id.
  std::ifstream in(file);
  std::string rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(file) << "00000000-0000-0000-0000-000000000000\n" << rest.substr(rest.find('\n') + 1);
  EXPECT_TRUE(recall_refusals(dir.path, "key").empty()) << "another boot's";
  // Anything but a program or layer name as the object spells them: the file is not read.
  ASSERT_TRUE(remember_refusals(dir.path, "key", {{"dc_uprobe_session"}, {}}));
  std::ofstream(file, std::ios::app) << "program\t../../etc\n";
  EXPECT_TRUE(recall_refusals(dir.path, "key").empty());
}

TEST(refusal_memory, OnlyTheKernelsLastingAnswersAreRemembered)
{
  EXPECT_TRUE(lasting_refusal(-EINVAL));
  EXPECT_TRUE(lasting_refusal(-EACCES));
  EXPECT_TRUE(lasting_refusal(-524));  // ENOTSUPP
  EXPECT_FALSE(lasting_refusal(-ENOMEM));
  EXPECT_FALSE(lasting_refusal(-EAGAIN));
  EXPECT_FALSE(lasting_refusal(-EBUSY));
}

result<loaded_object> load_with(const std::string& dir, bool without_sessions)
{
  if (without_sessions)
    setenv("DATACRUMBS_NO_UPROBE_SESSION", "1", 1);
  object_settings settings;
  settings.ring_bytes = 1u << 20;
  settings.core_btf_dir = dir;
  auto layers = make_layers();
  layers.push_back(make_uprobe_layer({}, {}));
  auto loaded = load_object(settings, layers, all_layer_names());
  unsetenv("DATACRUMBS_NO_UPROBE_SESSION");
  return loaded;
}

TEST(refusal_memory, AProgramRefusedOnceIsLeftOutAtOnceByTheNextLoadConfiguredSo)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  temp_dir dir;
  for (int load = 0; load < 2; ++load) {
    auto loaded = load_with(dir.path, true);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->refusals_recalled, load == 1) << "load " << load;
    EXPECT_TRUE(loaded->refused.empty());
    EXPECT_LT(bpf_program__fd(loaded->skel->progs.dc_uprobe_session), 0);
    EXPECT_GE(bpf_program__fd(loaded->skel->progs.dc_uprobe_enter), 0);
    datacrumbs_bpf__destroy(loaded->skel);
    EXPECT_NE(memory_file(dir.path), "") << "load " << load;
  }
  // Configured otherwise (sessions on), nothing is left out.
  auto other = load_with(dir.path, false);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_FALSE(other->refusals_recalled);
  EXPECT_GE(bpf_program__fd(other->skel->progs.dc_uprobe_session), 0);
  datacrumbs_bpf__destroy(other->skel);
}

}  // namespace
}  // namespace dc
