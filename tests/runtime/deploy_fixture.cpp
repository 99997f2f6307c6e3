#include "runtime/deploy_fixture.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include "config/system_config.h"
#include "deploy/trace_name.h"

namespace dc::test {

bool wait_for(const std::function<bool()>& done)
{
  for (int i = 0; i < 200; ++i) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

nlohmann::json deploy_test::start_daemon(const std::string& probe_file, const std::string& run_id)
{
  std::string ready = dir / ("run/datacrumbs-" + run_id + ".ready"), pid_file = dir / "daemon.pid";
  started = std::time(nullptr);
  // Its stdout must not be the test's: ctest waits for every holder of that pipe to close it.
  EXPECT_EQ(
      run_shell(std::string(DATACRUMBS_BIN) + " " + shell_quote(probe_file) + " " + run_id +
                " >/dev/null 2>" + shell_quote(dir / "d.err") + " & echo $! > " + shell_quote(pid_file)),
      0);
  daemon = std::atoi(read_file(pid_file).c_str());
  if (!wait_for([&] { return std::filesystem::exists(ready); })) {
    ADD_FAILURE() << "no ready file: " << read_file(dir / "d.err");
    return {};
  }
  auto info = nlohmann::json::parse(read_file(ready));
  EXPECT_EQ(info["pid"], daemon);
  EXPECT_EQ(info["trace"], expected_trace_path(run_id));
  return info;
}

std::string deploy_test::expected_trace_path(const std::string& run_id) const
{
  // The daemon dates it the day it started: between start_daemon's start and now (across UTC
  // midnight, the one that exists; before the daemon wrote it, the start's day).
  std::string first;
  for (std::time_t day : {started, std::time(nullptr)}) {
    auto name = expand_trace_pattern(default_trace_pattern, {run_id, short_host_name(), "root", day});
    std::string path = dir / ("traces/" + name.value_or("?"));
    if (std::filesystem::exists(path))
      return path;
    if (first.empty())
      first = path;
  }
  return first;
}

void deploy_test::stop_daemon(const std::string& run_id)
{
  ASSERT_EQ(kill(daemon, SIGTERM), 0);
  ASSERT_TRUE(wait_for([&] { return kill(daemon, 0) != 0; })) << "the daemon did not stop";
  daemon = 0;
  EXPECT_FALSE(std::filesystem::exists(dir / ("run/datacrumbs-" + run_id + ".ready")))
      << "the ready file outlived the daemon";
}

}  // namespace dc::test
