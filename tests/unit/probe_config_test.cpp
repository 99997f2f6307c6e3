// Probe configs on what is not a config file: an `include:` that names a directory (found by the
// probe_config fuzz target, where it ended the tool with an uncaught I/O exception) is one error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/probe_config.h"

namespace dc {
namespace {

struct config_dir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("probe-config." + std::to_string(getpid()));
  config_dir() { std::filesystem::create_directories(path / "sub"); }
  ~config_dir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const
  {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

TEST(ProbeConfig, AnIncludeOfADirectoryIsAnErrorNamingIt)
{
  config_dir d;
  for (const std::string& include : {std::string("\"\""), std::string("sub"), (d.path / "sub").string()}) {
    std::string top = d.write("top.yaml", "capture_probes:\n  - include: " + include + "\n");
    auto config = load_probe_config(top);
    ASSERT_FALSE(config) << include;
    EXPECT_NE(config.error().message.find("is not a regular file"), std::string::npos)
        << config.error().message;
  }
  auto direct = load_probe_config(d.path.string());
  ASSERT_FALSE(direct);
  EXPECT_EQ(direct.error().message, "config '" + d.path.string() + "' is not a regular file");
}

TEST(ProbeConfig, AnIncludedFilesEntriesAreRead)
{
  config_dir d;
  d.write("kernel.yaml", "capture_probes:\n  - name: KERNEL\n    probe: kernel\n    regex: block\n");
  std::string top = d.write("top.yaml", "capture_probes:\n  - include: kernel.yaml\n");
  auto config = load_probe_config(top);
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->entries.size(), 1u);
  EXPECT_EQ(config->entries[0].name, "KERNEL");
}

}  // namespace
}  // namespace dc
