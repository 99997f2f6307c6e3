// datacrumbs_sign_probes: the root signing service (datacrumbs_sign_probes.service). Unprivileged
// users' datacrumbs_probe_configurator sends it their resolved probes; it signs them for the
// uid the kernel reports for the connection, if that uid can read every probed binary.
//
//   datacrumbs_sign_probes [--socket PATH]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "config/system_config.h"
#include "deploy/probe_file.h"
#include "deploy/signing_service.h"

int main(int argc, char** argv)
{
  CLI::App app{"Sign probe files for unprivileged users (root)", "datacrumbs_sign_probes"};
  std::string socket;
  app.add_option("--socket", socket,
                 "the UNIX socket to listen on (default: the system config's sign_socket)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "datacrumbs_sign_probes: %s\n", e.what());
    return 2;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "datacrumbs_sign_probes: the signing service runs as root\n");
    return 1;
  }
  auto system = dc::load_system_config();
  if (!system) {
    std::fprintf(stderr, "datacrumbs_sign_probes: %s\n", system.error().message.c_str());
    return system.error().exit_code;
  }
  if (socket.empty())
    socket = system->sign_socket;
  auto secret = dc::load_secret(system->secret_file, true);
  if (!secret) {
    std::fprintf(stderr, "datacrumbs_sign_probes: %s\n", secret.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "datacrumbs_sign_probes: listening on %s\n", socket.c_str());
  auto served = dc::serve_signing(socket, *secret);
  if (!served) {
    std::fprintf(stderr, "datacrumbs_sign_probes: %s\n", served.error().message.c_str());
    return 1;
  }
  return 0;
}
