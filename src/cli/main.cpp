// datacrumbs: the command-line entry. Parses arguments, runs one mode, and turns an error value
// into the one line and exit code a user sees.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <expected>
#include <string_view>

#include "cli/analyze_mode.h"
#include "cli/daemon_mode.h"
#include "cli/explore_mode.h"
#include "cli/layers_mode.h"
#include "cli/live_mode.h"
#include "cli/options.h"
#include "cli/run_mode.h"
#include "config/probe_config.h"
#include "deploy/trace_name.h"

namespace {

int report(const dc::error& e)
{
  return dc::cli::report("datacrumbs", e.message, e.exit_code);
}

int refuse(const std::string& why)
{
  return dc::cli::report("datacrumbs", why, 2);
}

// DATACRUMBS_HOLD_RING_KB, a test and tuning knob: the size of the ring on which the kernel side
// tells this tool of processes to hold and of their end (bpf/task_record.bpf.h), in KiB. A ring
// is a power-of-two number of pages. Unset or empty: 0, the object's own size (64 KiB). What is
// wrong with a bad value, for one line and exit 2, as for an option's.
std::expected<uint64_t, std::string> hold_ring_bytes()
{
  const char* value = std::getenv("DATACRUMBS_HOLD_RING_KB");
  if (!value || !*value)
    return 0;
  auto page_kb = static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) >> 10;
  std::string why = dc::cli::check_whole_number(value, page_kb, uint64_t{1} << 20);
  if (why.empty())
    why = dc::cli::check_power_of_two(value);
  if (!why.empty())
    return std::unexpected("DATACRUMBS_HOLD_RING_KB (the hold ring's size in KiB): " + why);
  return std::stoull(value) << 10;
}

}  // namespace

int main(int argc, char** argv)
{
  // The daemon: datacrumbs SIGNED-PROBES.json.gz [RUN-ID] (the form HPC sites script against).
  auto hold_ring = hold_ring_bytes();
  if (argc >= 2 && std::string_view(argv[1]).ends_with(".json.gz")) {
    if (argc > 3)
      return refuse("usage: datacrumbs SIGNED-PROBES.json.gz [RUN-ID]");
    if (auto id = argc == 3 ? dc::check_run_id(argv[2]) : dc::result<>{}; !id)
      return report(id.error());
    if (!hold_ring)
      return refuse(hold_ring.error());
    auto code = dc::run_daemon({argv[1], argc == 3 ? argv[2] : "", false, *hold_ring});
    return code ? *code : report(code.error());
  }
  CLI::App app{"DataCrumbs: where an application's I/O goes, layer by layer", "datacrumbs"};
  app.require_subcommand(1);

  dc::run_options run;
  auto* run_cmd = app.add_subcommand("run", "trace a command and its descendants from exec to exit");
  run_cmd
      ->add_option("-o,--output", run.trace_path,
                   "trace file (.pfw.gz); default: a name in the current directory")
      ->check(dc::cli::output_file());
  run_cmd->add_option("--summary", run.summary_path, "write the run summary as JSON to this file")
      ->check(dc::cli::output_file());
  uint64_t ring_mb = run.ring_bytes >> 20;
  run_cmd->add_option("--ring-mb", ring_mb, "event ring size in MiB (a power of two, 1 to 2048)")
      ->transform(dc::cli::whole_number(1, 2048))
      ->check(dc::cli::power_of_two());
  run_cmd->add_flag("-v,--verbose", run.verbose, "print libbpf's messages");
  std::vector<std::string> layer_lists;
  run_cmd
      ->add_option("--layers", layer_lists,
                   "comma-separated layers to trace (default: all; see 'datacrumbs layers')")
      ->check(dc::cli::comma_list())
      ->allow_extra_args(false);  // one word per use: a following "--" stays the separator
  run_cmd
      ->add_option(
          "--system", run.systems,
          "LABEL=REGEX: label processes whose name matches as a storage system (repeatable; built in: "
          "MinIO, Ceph, etcd, PostgreSQL, GlusterFS)")
      ->check(dc::cli::not_empty())
      ->allow_extra_args(false);
  run_cmd
      ->add_option(
          "--config", run.config_path,
          "probe config (capture_probes YAML); default: the shipped default.yaml (kernel layers + stdio)")
      ->check(dc::cli::input_file());
  run_cmd
      ->add_option("--mode", run.mode,
                   "trace: one event per call; profile: counters per interval, kept in the kernel "
                   "(default: the config's mode, else trace)")
      ->check(CLI::IsMember({"trace", "profile"}));
  run_cmd
      ->add_option("--interval-ms", run.interval_ms,
                   "profile mode's interval in milliseconds (default: the config's, else 1000)")
      ->transform(dc::cli::whole_number(dc::min_profile_interval_ms, dc::max_profile_interval_ms));
  run_cmd
      ->add_option("--snapshot-dir", run.snapshot_dirs,
                   "record the paths, sizes and mtimes under DIR at start and end (repeatable)")
      ->check(dc::cli::input_directory())
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
      ->check(dc::cli::output_file())
      ->needs(print_flag);
  run_cmd->add_flag(
      "--live", run.live,
      "show a live view every second on stdout (top processes, files, layers; plain text when not a "
      "terminal)");
  run_cmd
      ->add_option("--process-detail", run.process_detail,
                   "exited processes whose detail the summary keeps, those that moved the most bytes; the "
                   "others are totalled by command (default 1000)")
      ->transform(dc::cli::whole_number(0, 1'000'000'000));
  run_cmd->add_option("command", run.command, "the command to trace, after --")->required();
  run_cmd->prefix_command(false);

  bool layers_verbose = false;
  auto* layers_cmd = app.add_subcommand("layers", "list every layer, whether it is live here, and its hooks");
  layers_cmd->add_flag("-v,--verbose", layers_verbose, "print libbpf's messages");

  dc::explore_options explore;
  auto* explore_cmd = app.add_subcommand(
      "explore", "list the functions of a library or executable that can be probed, one per line");
  explore_cmd->add_option("target", explore.target, "a library name (libc.so.6) or a path")
      ->check(dc::cli::not_empty());
  explore_cmd->add_option("--regex", explore.regex, "only names the regex matches whole (ECMAScript)");
  explore_cmd->add_flag("--kernel", explore.kernel,
                        "list the kernel's tracepoints and which layers are live");
  explore_cmd->add_flag("--usdt", explore.usdt, "list the binary's USDT probes (provider:name) instead");

  dc::analyze_options analyze;
  bool no_progress = false;
  auto* analyze_cmd = app.add_subcommand(
      "analyze", "report what traced programs did, from traces (ours or DFTracer's) or partial results");
  analyze_cmd->add_option("paths", analyze.inputs, "trace files, directories (searched recursively) or globs")
      ->required()
      ->check(dc::cli::analyze_input());
  analyze_cmd->add_flag("--merge", analyze.merge, "the paths are partial results (--partial) to merge");
  analyze_cmd->add_option("--json", analyze.json_path, "write the report as JSON to this file")
      ->check(dc::cli::output_file());
  analyze_cmd->add_option("--csv", analyze.csv_dir, "write the CSV tables into this directory")
      ->check(dc::cli::output_directory());
  analyze_cmd->add_option("--html", analyze.html_path, "write the report as one self-contained HTML page")
      ->check(dc::cli::output_file());
  analyze_cmd
      ->add_option("--partial", analyze.partial_path,
                   "also write a mergeable partial result of these inputs (.gz: gzipped)")
      ->check(dc::cli::output_file());
  analyze_cmd
      ->add_option("--bin-ms", analyze.bin_ms, "time-series bin width in ms (default: from the run length)")
      ->transform(dc::cli::whole_number(1, uint64_t{1} << 40));
  analyze_cmd->add_option("--threads", analyze.threads, "workers that inflate and parse (default: all cores)")
      ->transform(dc::cli::whole_number(1, 4096));
  analyze_cmd->add_flag("--no-progress", no_progress, "no progress bar on stderr");
  analyze_cmd
      ->add_option("--clock-skew-us", analyze.clock_skew_us,
                   "move a trace's timestamps onto NTP time when its host's recorded clock offset "
                   "exceeds this (default 1000; 0: any offset)")
      ->transform(dc::cli::whole_number(0, uint64_t{1} << 40));

  dc::live_options live;
  auto* live_cmd =
      app.add_subcommand("live", "watch a daemon's run live (top processes, files and layers per second)");
  live_cmd->add_option("run-id", live.run_id, "the daemon's run id")
      ->required()
      ->check(CLI::Validator(
          [](std::string& id) {
            auto ok = dc::check_run_id(id);
            return ok ? std::string() : ok.error().message;
          },
          "RUN-ID"));
  live_cmd->add_flag("--once", live.once, "print the current frame and exit");

  if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "run" &&
      std::string_view(argv[1]) != "live" && std::string_view(argv[1]) != "layers" &&
      std::string_view(argv[1]) != "explore" && std::string_view(argv[1]) != "analyze") {
    return refuse("unknown command '" + std::string(argv[1]) +
                  "' (expected 'run', 'live', 'layers', 'explore', 'analyze' or a probe file)");
  }
  if (auto code = dc::cli::parse(app, argc, argv, "datacrumbs"))
    return *code;
  run.ring_bytes = ring_mb << 20;
  run.layers = dc::cli::split_commas(layer_lists);

  if (*run_cmd) {
    if (run.live && run.print && run.print_file.empty())
      return refuse("--print and --live both write to stdout: give --print a --print-file");
    if (!hold_ring)
      return refuse(hold_ring.error());
    run.hold_ring_bytes = *hold_ring;
    auto code = dc::run_traced(run);
    return code ? *code : report(code.error());
  }
  if (*live_cmd) {
    auto code = dc::run_live(live);
    return code ? *code : report(code.error());
  }
  if (*analyze_cmd) {
    if (analyze.merge && !analyze.partial_path.empty())
      return refuse("analyze: --partial takes traces, not --merge's partials");
    for (const std::string& partial : analyze.inputs)
      if (std::string why = analyze.merge ? dc::cli::check_input_file(partial) : ""; !why.empty())
        return refuse("analyze --merge: " + why);
    if (analyze.merge && analyze.clock_skew_us >= 0)
      return refuse(
          "analyze: --clock-skew-us applies when traces are read (with --partial), not to --merge's "
          "partials");
    analyze.progress = !no_progress;
    auto code = dc::run_analyze(analyze);
    return code ? *code : report(code.error());
  }
  if (*explore_cmd) {
    if (explore.kernel == !explore.target.empty())
      return refuse("explore takes a library or executable, or --kernel");
    auto code = dc::explore(explore);
    return code ? *code : report(code.error());
  }
  auto code = dc::list_layers(layers_verbose);
  return code ? *code : report(code.error());
}
