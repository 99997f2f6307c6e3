// The installed system config: defaults, the file, then the environment; a bad file is an error.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/system_config.h"

namespace dc {
namespace {

struct system_config_test : ::testing::Test {
  std::string path =
      (std::filesystem::temp_directory_path() / ("sys." + std::to_string(getpid()) + ".yaml")).string();
  void SetUp() override
  {
    for (const char* v :
         {"DATACRUMBS_TRACE_DIR", "DATACRUMBS_RUN_DIR", "DATACRUMBS_SECRET_FILE", "DATACRUMBS_SIGN_SOCKET"})
      unsetenv(v);
  }
  void TearDown() override
  {
    std::filesystem::remove(path);
    unsetenv("DATACRUMBS_TRACE_DIR");
  }
};

TEST_F(system_config_test, DefaultsThenTheFileThenTheEnvironment)
{
  auto none = load_system_config_from(path);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->trace_dir, "/var/lib/datacrumbs/traces");
  EXPECT_EQ(none->run_dir, "/run/datacrumbs");

  std::ofstream(path) << "trace_dir: /scratch/traces\nsign_socket: /run/dc/s.sock\n";
  auto from_file = load_system_config_from(path);
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(from_file->trace_dir, "/scratch/traces");
  EXPECT_EQ(from_file->sign_socket, "/run/dc/s.sock");
  EXPECT_EQ(from_file->secret_file, "/var/lib/datacrumbs/probe-signing.key");

  setenv("DATACRUMBS_TRACE_DIR", "/elsewhere", 1);
  auto from_env = load_system_config_from(path);
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->trace_dir, "/elsewhere");
}

TEST_F(system_config_test, UnknownSettingsAndBrokenFilesAreErrors)
{
  std::ofstream(path) << "trace_directory: /x\n";
  auto typo = load_system_config_from(path);
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("trace_directory"), std::string::npos);
  std::ofstream(path) << "trace_dir: [unclosed\n";
  auto broken = load_system_config_from(path);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find(path), std::string::npos);
}

}  // namespace
}  // namespace dc
