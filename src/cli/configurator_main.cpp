// datacrumbs_probe_configurator: resolves a probe config into a signed probe file for the daemon.
//
//   datacrumbs_probe_configurator [--user NAME|UID] CONFIG.yaml OUT.json.gz
//
// Run as root it signs directly with the root-only secret; the file is made for --user (default:
// the invoking user, root's SUDO_UID when run through sudo), whose processes alone the daemon
// will trace with it. Run as anyone else it asks the signing service (datacrumbs_sign_probes).
#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "cli/options.h"
#include "cli/output_files.h"
#include "config/probe_config.h"
#include "config/system_config.h"
#include "deploy/probe_file.h"
#include "deploy/signing_service.h"
#include "probe/layers.h"
#include "probe/uprobe_layer.h"

namespace {

int fail_with(const std::string& message, int code)
{
  return dc::cli::report("datacrumbs_probe_configurator", message, code);
}

// A user name or number (a uid the kernel can have: below 2^32 - 1); the error names it.
dc::result<uint32_t> uid_of(const std::string& user)
{
  if (!user.empty() && user.find_first_not_of("0123456789") == std::string::npos) {
    if (std::string why = dc::cli::check_whole_number(user, 0, 0xfffffffeu); !why.empty())
      return dc::fail("--user: " + why, 2);
    return static_cast<uint32_t>(std::stoul(user));
  }
  if (passwd* pw = getpwnam(user.c_str()))
    return pw->pw_uid;
  return dc::fail("--user: unknown user '" + user + "'", 2);
}

}  // namespace

int main(int argc, char** argv)
{
  CLI::App app{"Resolve a probe config into a signed probe file", "datacrumbs_probe_configurator"};
  std::string config_path, out_path, user;
  app.add_option("config", config_path, "probe config (capture_probes YAML)")
      ->required()
      ->check(dc::cli::input_file());
  app.add_option("output", out_path, "signed probe file to write (.json.gz)")
      ->required()
      ->check(dc::cli::output_file());
  app.add_option("--user", user, "the user whose processes the file may trace (name or uid)")
      ->check(dc::cli::not_empty());
  if (auto code = dc::cli::parse(app, argc, argv, "datacrumbs_probe_configurator"))
    return *code;
  const bool root = geteuid() == 0;
  if (!root && !user.empty())
    return fail_with("--user is for root: the signing service signs for the uid that asks", 2);
  uint32_t uid = getuid();
  if (const char* sudo_uid = std::getenv("SUDO_UID"); root && sudo_uid && user.empty())
    user = sudo_uid;
  if (!user.empty()) {
    auto u = uid_of(user);
    if (!u)
      return fail_with(u.error().message, u.error().exit_code);
    uid = *u;
  }
  auto system = dc::load_system_config();
  if (!system)
    return fail_with(system.error().message, system.error().exit_code);
  auto config = dc::load_probe_config(config_path);
  if (!config)
    return fail_with(config.error().message, config.error().exit_code);
  std::vector<std::string> notes;
  // The config resolved into exact probes: the kernel layers it selects, every user-space function.
  dc::probe_file probes{uid,
                        config->path,
                        dc::kernel_layers_in(*config),
                        dc::plan_uprobes(*config, notes),
                        dc::uprobe_entries_of(*config),
                        config->profile_interval_ms};
  for (const auto& n : notes) std::fprintf(stderr, "datacrumbs_probe_configurator: %s\n", n.c_str());
  // Root signs with the secret; anyone else asks the signing service, which signs for the uid
  // the kernel reports for the connection.
  dc::result<std::string> bytes = dc::fail("unreachable");
  if (root) {
    auto secret = dc::load_secret(system->secret_file, true);
    if (!secret)
      return fail_with(secret.error().message, 1);
    bytes = dc::sign_probe_file(probes, *secret);
  } else {
    bytes = dc::request_signature(system->sign_socket, dc::probe_file_content(probes));
  }
  if (!bytes)
    return fail_with(bytes.error().message, 1);
  auto out = dc::pending_file::reserve(out_path);
  if (!out)
    return fail_with(out.error().message, 1);
  if (auto written = out->commit(*bytes); !written)
    return fail_with(written.error().message, 1);
  std::fprintf(stderr, "datacrumbs_probe_configurator: %s: %zu functions, kernel layers:", out_path.c_str(),
               probes.uprobes.size());
  for (const auto& l : probes.kernel_layers) std::fprintf(stderr, " %s", l.c_str());
  std::fprintf(stderr, "; for uid %u\n", uid);
  return 0;
}
