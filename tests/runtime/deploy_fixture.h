// The deployment tests' fixture: a private secret, trace and run directory per test, signed
// probe files, and a daemon started in the background and stopped with SIGTERM.
#pragma once

#include <signal.h>
#include <stdlib.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>

#include "runtime/runtime_helpers.h"

namespace dc::test {

inline const std::string bin_dir = std::filesystem::path(DATACRUMBS_BIN).parent_path().string();

// Polls `done` every 50 ms for up to 10 s.
bool wait_for(const std::function<bool()>& done);

struct deploy_test : runtime_test {
  std::string secret, config, probes;
  void SetUp() override
  {
    runtime_test::SetUp();
    secret = dir / "secret/key";
    setenv("DATACRUMBS_SECRET_FILE", secret.c_str(), 1);
    setenv("DATACRUMBS_TRACE_DIR", (dir / "traces").c_str(), 1);
    setenv("DATACRUMBS_RUN_DIR", (dir / "run").c_str(), 1);
    config = dir / "probes.yaml";
    probes = signed_probe_file("probes", "capture_probes:\n  - name: POSIX\n    probe: syscalls\n");
  }
  // Writes NAME.yaml with `yaml` and has the configurator sign it into NAME.json.gz.
  std::string signed_probe_file(const std::string& name, const std::string& yaml)
  {
    std::string yaml_path = dir / (name + ".yaml"), signed_path = dir / (name + ".json.gz");
    std::ofstream(yaml_path) << yaml;
    EXPECT_EQ(run_shell(bin_dir + "/datacrumbs_probe_configurator " + shell_quote(yaml_path) + " " +
                        shell_quote(signed_path) + " 2>/dev/null"),
              0);
    return signed_path;
  }
  int daemon = 0;           // a daemon a test started: stopped at the end, whatever happened
  std::time_t started = 0;  // when start_daemon started it (its trace's date)
  void TearDown() override
  {
    if (daemon > 0)
      kill(daemon, SIGKILL);
    unsetenv("DATACRUMBS_SECRET_FILE");
    unsetenv("DATACRUMBS_TRACE_DIR");
    unsetenv("DATACRUMBS_RUN_DIR");
  }
  // Starts the daemon in the background on `probe_file` and waits for its ready file; returns
  // what the ready file says.
  nlohmann::json start_daemon(const std::string& probe_file, const std::string& run_id);
  // Where the daemon writes run `run_id`'s trace (the default pattern, its start's day, this host).
  std::string expected_trace_path(const std::string& run_id) const;
  // SIGTERM, then waits for the daemon to exit; its ready file must be gone.
  void stop_daemon(const std::string& run_id);
  // Runs the daemon in the foreground; its exit status and its stderr.
  std::pair<int, std::string> daemon_refuses(const std::string& args)
  {
    std::string err = dir / "refused.err";
    int status = run_shell(std::string(DATACRUMBS_BIN) + " " + args + " 2>" + shell_quote(err));
    return {status, read_file(err)};
  }
};

}  // namespace dc::test
