#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collect/heap_report.h"

namespace dc {
namespace {

namespace fs = std::filesystem;

struct heap_report_env : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("heap_report_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override
  {
    ::unsetenv("DATACRUMBS_MALLOC_INFO");
    fs::remove_all(dir);
  }
  static std::string read(const fs::path& p)
  {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static size_t count(const std::string& text, const std::string& what)
  {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
};

TEST_F(heap_report_env, UnsetMeansNoFileAndSamplingDoesNothing)
{
  ::unsetenv("DATACRUMBS_MALLOC_INFO");
  auto report = heap_report::from_environment();
  ASSERT_TRUE(report.has_value());
  report->sample();
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST_F(heap_report_env, EachSampleIsOneElementHoldingMallocInfo)
{
  fs::path file = dir / "malloc.xml";
  ::setenv("DATACRUMBS_MALLOC_INFO", file.c_str(), 1);
  for (int samples : {2, 1}) {  // the second run truncates the first's
    {
      auto report = heap_report::from_environment();
      ASSERT_TRUE(report.has_value()) << report.error().message;
      for (int i = 0; i < samples; ++i) report->sample();
    }
    std::string text = read(file);
    EXPECT_EQ(count(text, "<sample ms=\""), size_t(samples));
    EXPECT_EQ(count(text, "</sample>"), size_t(samples));
    EXPECT_EQ(count(text, "<malloc version="), size_t(samples));
  }
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(heap_report_env, ALinkAtThePathIsRefusedAndItsTargetUntouched)
{
  fs::path target = dir / "target";
  std::ofstream(target) << "keep\n";
  fs::create_symlink(target, dir / "link");
  ::setenv("DATACRUMBS_MALLOC_INFO", (dir / "link").c_str(), 1);
  auto report = heap_report::from_environment();
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().message.find("DATACRUMBS_MALLOC_INFO: cannot create"), std::string::npos)
      << report.error().message;
  EXPECT_EQ(read(target), "keep\n");
}

}  // namespace
}  // namespace dc
