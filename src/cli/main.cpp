// datacrumbs: the command-line entry. Parses arguments, runs one mode, and turns an error value
// into the one line and exit code a user sees.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string_view>

#include "cli/analyze_mode.h"
#include "cli/daemon_mode.h"
#include "cli/explore_mode.h"
#include "cli/layers_mode.h"
#include "cli/live_mode.h"
#include "cli/run_mode.h"
#include "config/probe_config.h"

namespace {

int report(const dc::error& e)
{
  std::fprintf(stderr, "datacrumbs: %s\n", e.message.c_str());
  return e.exit_code;
}

}  // namespace

int main(int argc, char** argv)
{
  // The daemon: datacrumbs SIGNED-PROBES.json.gz [RUN-ID] (the form HPC sites script against).
  if (argc >= 2 && std::string_view(argv[1]).ends_with(".json.gz")) {
    if (argc > 3) {
      std::fprintf(stderr, "datacrumbs: usage: datacrumbs SIGNED-PROBES.json.gz [RUN-ID]\n");
      return 2;
    }
    auto code = dc::run_daemon({argv[1], argc == 3 ? argv[2] : "", false});
    return code ? *code : report(code.error());
  }
  CLI::App app{"DataCrumbs: where an application's I/O goes, layer by layer", "datacrumbs"};
  app.require_subcommand(1);

  dc::run_options run;
  auto* run_cmd = app.add_subcommand("run", "trace a command and its descendants from exec to exit");
  run_cmd->add_option("-o,--output", run.trace_path,
                      "trace file (.pfw.gz); default: a name in the current directory");
  run_cmd->add_option("--summary", run.summary_path, "write the run summary as JSON to this file");
  run_cmd->add_option("--ring-mb", run.ring_bytes, "event ring size in MiB (power of two)")
      ->transform([](std::string s) { return std::to_string(std::stoull(s) << 20); })
      ->check(CLI::Range(1ull << 20, 1ull << 31))
      ->check(CLI::Validator(
          [](std::string& v) {
            uint64_t n = std::stoull(v);
            return (n & (n - 1)) == 0 ? std::string() : std::string("the ring size must be a power of two");
          },
          "POWER_OF_TWO"));
  run_cmd->add_flag("-v,--verbose", run.verbose, "print libbpf's messages");
  run_cmd
      ->add_option("--layers", run.layers,
                   "comma-separated layers to trace (default: all; see 'datacrumbs layers')")
      ->delimiter(',')
      ->allow_extra_args(false);  // one word per use: a following "--" stays the separator
  run_cmd
      ->add_option(
          "--system", run.systems,
          "LABEL=REGEX: label processes whose name matches as a storage system (repeatable; built in: "
          "MinIO, Ceph, etcd, PostgreSQL, GlusterFS)")
      ->allow_extra_args(false);
  run_cmd->add_option(
      "--config", run.config_path,
      "probe config (capture_probes YAML); default: the shipped default.yaml (kernel layers + stdio)");
  run_cmd
      ->add_option("--mode", run.mode,
                   "trace: one event per call; profile: counters per interval, kept in the kernel "
                   "(default: the config's mode, else trace)")
      ->check(CLI::IsMember({"trace", "profile"}));
  run_cmd
      ->add_option("--interval-ms", run.interval_ms,
                   "profile mode's interval in milliseconds (default: the config's, else 1000)")
      ->check(CLI::Range(dc::min_profile_interval_ms, dc::max_profile_interval_ms));
  run_cmd
      ->add_option("--snapshot-dir", run.snapshot_dirs,
                   "record the paths, sizes and mtimes under DIR at start and end (repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_flag(
      "--no-index", run.no_index,
      "do not write the trace's line index (TRACE.zindex, the form dfanalyzer reads) at the end");
  auto* print_flag =
      run_cmd->add_flag("--print", run.print,
                        "print one line per event as it is traced (TIME SYSTEM EVENT_TYPE PID TID COMM ...)");
  run_cmd
      ->add_option("--print-filter", run.print_filter,
                   "--print only these layers (comma-separated: POSIX,BLOCK)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->needs(print_flag);
  run_cmd->add_option("--print-file", run.print_file, "--print to this file instead of stdout")
      ->needs(print_flag);
  run_cmd->add_flag(
      "--live", run.live,
      "show a live view every second on stdout (top processes, files, layers; plain text when not a "
      "terminal)");
  run_cmd->add_option("command", run.command, "the command to trace, after --")->required();
  run_cmd->prefix_command(false);

  bool layers_verbose = false;
  auto* layers_cmd = app.add_subcommand("layers", "list every layer, whether it is live here, and its hooks");
  layers_cmd->add_flag("-v,--verbose", layers_verbose, "print libbpf's messages");

  dc::explore_options explore;
  auto* explore_cmd = app.add_subcommand(
      "explore", "list the functions of a library or executable that can be probed, one per line");
  explore_cmd->add_option("target", explore.target, "a library name (libc.so.6) or a path");
  explore_cmd->add_option("--regex", explore.regex, "only names the regex matches whole (ECMAScript)");
  explore_cmd->add_flag("--kernel", explore.kernel,
                        "list the kernel's tracepoints and which layers are live");
  explore_cmd->add_flag("--usdt", explore.usdt, "list the binary's USDT probes (provider:name) instead");

  dc::analyze_options analyze;
  bool no_progress = false;
  auto* analyze_cmd = app.add_subcommand(
      "analyze", "report what traced programs did, from traces (ours or DFTracer's) or partial results");
  analyze_cmd->add_option("paths", analyze.inputs, "trace files, directories (searched recursively) or globs")
      ->required();
  analyze_cmd->add_flag("--merge", analyze.merge, "the paths are partial results (--partial) to merge");
  analyze_cmd->add_option("--json", analyze.json_path, "write the report as JSON to this file");
  analyze_cmd->add_option("--csv", analyze.csv_dir, "write the CSV tables into this directory");
  analyze_cmd->add_option("--html", analyze.html_path, "write the report as one self-contained HTML page");
  analyze_cmd->add_option("--partial", analyze.partial_path,
                          "also write a mergeable partial result of these inputs (.gz: gzipped)");
  analyze_cmd
      ->add_option("--bin-ms", analyze.bin_ms, "time-series bin width in ms (default: from the run length)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  analyze_cmd->add_option("--threads", analyze.threads, "workers that inflate and parse (default: all cores)")
      ->check(CLI::Range(1u, 4096u));
  analyze_cmd->add_flag("--no-progress", no_progress, "no progress bar on stderr");
  analyze_cmd
      ->add_option("--clock-skew-us", analyze.clock_skew_us,
                   "move a trace's timestamps onto NTP time when its host's recorded clock offset "
                   "exceeds this (default 1000; 0: any offset)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));

  dc::live_options live;
  auto* live_cmd =
      app.add_subcommand("live", "watch a daemon's run live (top processes, files and layers per second)");
  live_cmd->add_option("run-id", live.run_id, "the daemon's run id")->required();
  live_cmd->add_flag("--once", live.once, "print the current frame and exit");

  if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "run" &&
      std::string_view(argv[1]) != "live" && std::string_view(argv[1]) != "layers" &&
      std::string_view(argv[1]) != "explore" && std::string_view(argv[1]) != "analyze") {
    std::fprintf(
        stderr,
        "datacrumbs: unknown command '%s' (expected 'run', 'live', 'layers', 'explore', 'analyze' or a probe "
        "file)\n",
        argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "datacrumbs: %s\n", e.what());
    return 2;
  }

  if (*run_cmd) {
    if (run.live && run.print && run.print_file.empty()) {
      std::fprintf(stderr,
                   "datacrumbs: --print and --live both write to stdout: give --print a --print-file\n");
      return 2;
    }
    auto code = dc::run_traced(run);
    return code ? *code : report(code.error());
  }
  if (*live_cmd) {
    auto code = dc::run_live(live);
    return code ? *code : report(code.error());
  }
  if (*analyze_cmd) {
    if (analyze.merge && !analyze.partial_path.empty()) {
      std::fprintf(stderr, "datacrumbs: analyze: --partial takes traces, not --merge's partials\n");
      return 2;
    }
    if (analyze.merge && analyze.clock_skew_us >= 0) {
      std::fprintf(stderr,
                   "datacrumbs: analyze: --clock-skew-us applies when traces are read (with --partial), "
                   "not to --merge's partials\n");
      return 2;
    }
    analyze.progress = !no_progress;
    auto code = dc::run_analyze(analyze);
    return code ? *code : report(code.error());
  }
  if (*explore_cmd) {
    if (explore.kernel == !explore.target.empty()) {
      std::fprintf(stderr, "datacrumbs: explore takes a library or executable, or --kernel\n");
      return 2;
    }
    auto code = dc::explore(explore);
    return code ? *code : report(code.error());
  }
  auto code = dc::list_layers(layers_verbose);
  return code ? *code : report(code.error());
}
