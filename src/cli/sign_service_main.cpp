// datacrumbs_sign_probes: the root signing service (datacrumbs_sign_probes.service). Unprivileged
// users' datacrumbs_probe_configurator sends it their resolved probes; it signs them for the
// uid the kernel reports for the connection, if that uid can read every probed binary.
//
//   datacrumbs_sign_probes [--socket PATH]
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/options.h"
#include "config/system_config.h"
#include "deploy/probe_file.h"
#include "deploy/signing_service.h"

int main(int argc, char** argv)
{
  CLI::App app{"Sign probe files for unprivileged users (root)", "datacrumbs_sign_probes"};
  std::string socket;
  app.add_option("--socket", socket,
                 "the UNIX socket to listen on (default: the system config's sign_socket)")
      ->check(CLI::Validator(
          [](std::string& path) -> std::string {
            // Its directory is made if missing (as for the default), so only what is on the way
            // must not be a file.
            if (path.empty())
              return "an empty path";
            if (path.size() >= sizeof(sockaddr_un::sun_path))
              return "'" + path + "' is longer than a UNIX socket path can be (" +
                     std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes)";
            std::string parent = std::filesystem::path(path).parent_path().string();
            if (std::string why = parent.empty() ? "" : dc::cli::check_output_directory(parent); !why.empty())
              return why;
            std::error_code ec;
            return std::filesystem::is_directory(path, ec) ? "'" + path + "' is a directory" : "";
          },
          "SOCKET"));
  if (auto code = dc::cli::parse(app, argc, argv, "datacrumbs_sign_probes"))
    return *code;
  const char* me = "datacrumbs_sign_probes";
  if (geteuid() != 0)
    return dc::cli::report(me, "the signing service runs as root", 1);
  auto system = dc::load_system_config();
  if (!system)
    return dc::cli::report(me, system.error().message, system.error().exit_code);
  if (socket.empty())
    socket = system->sign_socket;
  auto secret = dc::load_secret(system->secret_file, true);
  if (!secret)
    return dc::cli::report(me, secret.error().message, 1);
  std::fprintf(stderr, "datacrumbs_sign_probes: listening on %s\n", socket.c_str());
  auto served = dc::serve_signing(socket, *secret);
  if (!served)
    return dc::cli::report(me, served.error().message, 1);
  return 0;
}
