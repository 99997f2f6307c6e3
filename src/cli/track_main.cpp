// datacrumbs_track / datacrumbs_untrack --executable X: adds (removes) libdatacrumbs_client.so
// as a dependency of a dynamic ELF executable, so that it registers with a running daemon
// whenever it runs, without datacrumbs_wrap. The edit is patchelf's; static binaries and
// non-ELF files are refused.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/options.h"
#include "core/install_paths.h"
#include "explore/elf_kind.h"

int main(int argc, char** argv)
{
  const bool untrack = std::string_view(std::filesystem::path(argv[0]).filename().string()).find("untrack") !=
                       std::string_view::npos;
  const char* me = untrack ? "datacrumbs_untrack" : "datacrumbs_track";
  CLI::App app{untrack ? "Remove the DataCrumbs client library from an executable's dependencies"
                       : "Add the DataCrumbs client library to an executable's dependencies",
               me};
  std::string executable;
  app.add_option("--executable", executable, "the dynamic ELF executable to edit")
      ->required()
      ->check(dc::cli::input_file());
  if (auto code = dc::cli::parse(app, argc, argv, me))
    return *code;
  if (auto ok = dc::check_dynamic_elf(executable); !ok)
    return dc::cli::report(me, ok.error().message, ok.error().exit_code);
  // By absolute path: the dependency is then found without any search path.
  std::string lib = dc::installed_path("lib/libdatacrumbs_client.so");
  pid_t pid = fork();
  if (pid == 0) {
    execlp("patchelf", "patchelf", untrack ? "--remove-needed" : "--add-needed", lib.c_str(),
           executable.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "%s: cannot run patchelf (install it: apt-get install patchelf)\n", me);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return dc::cli::report(me, "patchelf could not edit '" + executable + "'", 1);
  }
  return 0;
}
