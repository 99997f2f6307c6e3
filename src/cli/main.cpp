// datacrumbs: the command-line entry. Parses arguments (cli/command_line.h), runs one mode, and
// turns an error value into the one line and exit code a user sees.
#include <string_view>

#include "cli/analyze_mode.h"
#include "cli/command_line.h"
#include "cli/daemon_mode.h"
#include "cli/explore_mode.h"
#include "cli/layers_mode.h"
#include "cli/live_mode.h"
#include "cli/options.h"
#include "cli/run_mode.h"
#include "probe/object_keeper.h"

namespace {

int exit_code_of(const dc::result<int>& code)
{
  return code ? *code : dc::cli::report("datacrumbs", code.error().message, code.error().exit_code);
}

}  // namespace

int main(int argc, char** argv)
{
  // A run's loaded object, kept for the next (probe/object_keeper.h): not a user's command.
  if (argc > 1 && std::string_view(argv[1]) == dc::keeper_argument)
    return dc::keeper_main(argc, argv);
  auto parsed = dc::parse_command_line(argc, argv);
  if (!parsed)
    return parsed.error();
  const dc::command_line& c = *parsed;
  switch (c.which) {
    case dc::command_line::mode::daemon: return exit_code_of(dc::run_daemon(c.daemon));
    case dc::command_line::mode::run: return exit_code_of(dc::run_traced(c.run));
    case dc::command_line::mode::live: return exit_code_of(dc::run_live(c.live));
    case dc::command_line::mode::analyze: return exit_code_of(dc::run_analyze(c.analyze));
    case dc::command_line::mode::explore: return exit_code_of(dc::explore(c.explore));
    case dc::command_line::mode::layers: return exit_code_of(dc::list_layers(c.layers_verbose));
  }
  return 2;
}
