#include "cli/live_mode.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/daemon_mode.h"
#include "cli/live_output.h"
#include "config/system_config.h"
#include "core/file_text.h"
#include "deploy/trace_name.h"
#include "sink/live_view.h"

namespace dc {

namespace {

// Whether the daemon named by a ready file still runs (a daemon killed outright leaves it).
bool daemon_alive(const std::string& ready_text)
{
  auto j = nlohmann::json::parse(ready_text, nullptr, false);
  if (j.is_discarded() || !j.contains("pid") || !j["pid"].is_number_integer())
    return true;  // not ours to judge: keep waiting for its frames
  return kill(j["pid"].get<pid_t>(), 0) == 0 || errno == EPERM;
}

}  // namespace

result<int> run_live(const live_options& options)
{
  if (auto ok = check_run_id(options.run_id); !ok)
    return std::unexpected(ok.error());
  auto system = load_system_config();
  if (!system)
    return std::unexpected(system.error());
  std::string ready_path = system->run_dir + "/datacrumbs-" + options.run_id + ".ready";
  std::string snapshot_path = live_snapshot_path(system->run_dir, options.run_id);
  bool tty = isatty(STDOUT_FILENO) == 1;
  uint64_t shown = 0;
  for (;;) {
    auto ready = read_file_text(ready_path);
    auto text = read_file_text(snapshot_path);
    if (!ready && !text)
      return fail("no daemon run '" + options.run_id + "' here (no " + ready_path + ")");
    if (text) {
      auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_discarded())
        return fail(snapshot_path + " is not a live snapshot");
      auto frame = live_frame_from_json(j);
      if (!frame)
        return fail(snapshot_path + ": " + frame.error().message);
      if (frame->seq != shown) {
        std::string out = tty ? "\033[H\033[2J" + live_text(*frame) : live_text(*frame) + "\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        shown = frame->seq;
      }
      if (frame->ended || options.once)
        return 0;
    } else if (options.once) {
      return fail("run '" + options.run_id + "' has shown no frame yet (" + snapshot_path + ")");
    }
    if (!ready)
      return fail("run '" + options.run_id + "' ended without its last frame");
    if (!daemon_alive(*ready))
      return fail("the daemon of run '" + options.run_id + "' is gone (" + ready_path + " remains)");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace dc
