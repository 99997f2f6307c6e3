// The minimal BTF for CO-RE, cached per kernel and object (probe/core_btf.h): made once by
// bpftool, read from the cache after, never used when others could have written it, and every
// layer loads against it as against the kernel's whole BTF.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "datacrumbs.skel.h"
#include "probe/core_btf.h"
#include "probe/kernel_object.h"
#include "runtime/private_dir.h"
#include "probe/layer.h"
#include "probe/layers.h"
#include "probe/uprobe_layer.h"

namespace dc {
namespace {

namespace fs = std::filesystem;

std::span<const std::byte> object_bytes()
{
  size_t size = 0;
  const void* bytes = datacrumbs_bpf__elf_bytes(&size);
  return {static_cast<const std::byte*>(bytes), size};
}

// The object's cached minimal BTF in `dir`, as load_object asks for it.
result<core_btf> cache_in(const std::string& dir)
{
  return cached_core_btf(object_bytes(), core_btf_key(object_bytes()), dir);
}

// This file's temporary directories.
struct temp_dir : test::private_dir {
  temp_dir() : private_dir("dc-core-btf") {}
};

mode_t mode_of(const std::string& path)
{
  struct stat st {};
  stat(path.c_str(), &st);
  return st.st_mode & 0777;
}

std::string ids_path(const core_btf& c)
{
  return c.path.substr(0, c.path.size() - 4) + ".ids";
}

TEST(core_btf, MadeOnceThenReadFromTheCacheWithTheKernelsOwnIds)
{
  temp_dir dir;
  auto made = cache_in(dir.path);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(made->made);
  EXPECT_EQ(fs::path(made->path).parent_path(), dir.path);
  // Minimal: the object's few hundred types, where the kernel's BTF is megabytes.
  EXPECT_GT(fs::file_size(made->path), 1000u);
  EXPECT_LT(fs::file_size(made->path), 200000u);
  EXPECT_EQ(mode_of(made->path) & 022, 0u);
  std::unique_ptr<btf, decltype(&btf__free)> vmlinux(btf__load_vmlinux_btf(), btf__free);
  ASSERT_TRUE(vmlinux);
  for (size_t i = 0; i < DC_CAST_COUNT; ++i) {
    int id = btf__find_by_name_kind(vmlinux.get(), cast_type_name(i), BTF_KIND_STRUCT);
    EXPECT_GT(id, 0) << cast_type_name(i);
    EXPECT_EQ(made->cast_ids[i], static_cast<uint32_t>(id)) << cast_type_name(i);
  }
  // No temporary file is left beside the two.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 2);

  auto cached = cache_in(dir.path);
  ASSERT_TRUE(cached) << cached.error().message;
  EXPECT_FALSE(cached->made);
  EXPECT_EQ(cached->path, made->path);
  EXPECT_EQ(cached->cast_ids, made->cast_ids);
}

TEST(core_btf, ACacheOthersCouldWriteIsNeverUsed)
{
  temp_dir dir;
  auto first = cache_in(dir.path);
  ASSERT_TRUE(first) << first.error().message;
  // A file others can write is made again, privately.
  chmod(ids_path(*first).c_str(), 0666);
  auto again = cache_in(dir.path);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->made);
  EXPECT_EQ(mode_of(ids_path(*again)) & 022, 0u);
  // So is one whose ids are not this build's types.
  std::ofstream(ids_path(*again)) << "task_struct 1\n";
  auto stale = cache_in(dir.path);
  ASSERT_TRUE(stale) << stale.error().message;
  EXPECT_TRUE(stale->made);
  // A directory others can write is not a cache at all.
  chmod(dir.path.c_str(), 0777);
  auto shared = cache_in(dir.path);
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().message.find("only this user can write"), std::string::npos)
      << shared.error().message;
}

TEST(core_btf, TheKeyFollowsTheObject)
{
  auto bytes = object_bytes();
  std::vector<std::byte> changed(bytes.begin(), bytes.end());
  changed[changed.size() / 2] ^= std::byte{1};
  std::string key = core_btf_key(bytes);
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(core_btf_key(bytes), key);
  EXPECT_NE(core_btf_key(changed), key);
}

// Every layer loads against the cached BTF, with no program refused, as against the kernel's.
TEST(core_btf, EveryLayerLoadsAgainstTheCachedBtf)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  temp_dir dir;
  for (bool cached : {false, true}) {
    object_settings settings;
    settings.ring_bytes = 1u << 20;
    settings.core_btf_dir = cached ? dir.path : "";
    auto layers = make_layers();
    auto loaded = load_object(settings, layers, all_layer_names());
    ASSERT_TRUE(loaded) << loaded.error().message;
    for (const auto& refused : loaded->refused)
      ADD_FAILURE() << (cached ? "cached BTF: " : "kernel BTF: ") << refused.name << ": " << refused.why;
    if (cached)
      EXPECT_EQ(loaded->core_btf.rfind(dir.path + "/core-btf-", 0), 0u) << loaded->core_btf;
    else
      EXPECT_EQ(loaded->core_btf, "");
    datacrumbs_bpf__destroy(loaded->skel);
  }
}

// A program the kernel refuses with the cache and without it is the kernel's refusal, not the
// cache's: it is left out and the rest still load against the cache (DATACRUMBS_NO_UPROBE_SESSION
// makes this kernel refuse the optional uprobe session program, as a kernel before 6.13 does).
TEST(core_btf, AProgramRefusedEitherWayLeavesTheCacheInUse)
{
  ASSERT_EQ(geteuid(), 0u) << "loading BPF programs needs root";
  temp_dir dir;
  setenv("DATACRUMBS_NO_UPROBE_SESSION", "1", 1);
  object_settings settings;
  settings.ring_bytes = 1u << 20;
  settings.core_btf_dir = dir.path;
  auto layers = make_layers();
  layers.push_back(make_uprobe_layer({}, {}));
  auto loaded = load_object(settings, layers, all_layer_names());
  unsetenv("DATACRUMBS_NO_UPROBE_SESSION");
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE(loaded->refused.empty());
  EXPECT_EQ(loaded->core_btf.rfind(dir.path + "/core-btf-", 0), 0u) << loaded->core_btf;
  EXPECT_LT(bpf_program__fd(loaded->skel->progs.dc_uprobe_session), 0);
  EXPECT_GE(bpf_program__fd(loaded->skel->progs.dc_uprobe_enter), 0);
  datacrumbs_bpf__destroy(loaded->skel);
}

}  // namespace
}  // namespace dc
