#include "cli/command_line.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "cli/options.h"
#include "config/probe_config.h"
#include "deploy/trace_name.h"

namespace dc {

namespace {

int refuse(const std::string& why)
{
  return cli::report("datacrumbs", why, 2);
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
  std::string why = cli::check_whole_number(value, page_kb, uint64_t{1} << 20);
  if (why.empty())
    why = cli::check_power_of_two(value);
  if (!why.empty())
    return std::unexpected("DATACRUMBS_HOLD_RING_KB (the hold ring's size in KiB): " + why);
  return std::stoull(value) << 10;
}

// `datacrumbs run`'s options; `ring_mb` and `layer_lists` are turned into run_options' after the parse.
CLI::App* add_run(CLI::App& app, command_line& c, uint64_t& ring_mb, std::vector<std::string>& layer_lists)
{
  auto* cmd = app.add_subcommand("run", "trace a command and its descendants from exec to exit");
  cmd->add_option("-o,--output", c.run.trace_path,
                  "trace file (.pfw.gz); default: a name in the current directory")
      ->check(cli::output_file());
  cmd->add_option("--summary", c.run.summary_path, "write the run summary as JSON to this file")
      ->check(cli::output_file());
  cmd->add_option("--ring-mb", ring_mb,
                  "event ring size in MiB (a power of two, 1 to 2048; default 64, in profile mode 16)")
      ->transform(cli::whole_number(1, 2048))
      ->check(cli::power_of_two());
  cmd->add_flag("-v,--verbose", c.run.verbose, "print libbpf's messages");
  cmd->add_option("--layers", layer_lists,
                  "comma-separated layers to trace (default: all; see 'datacrumbs layers')")
      ->check(cli::comma_list())
      ->allow_extra_args(false);  // one word per use: a following "--" stays the separator
  cmd->add_option(
         "--system", c.run.systems,
         "LABEL=REGEX: label processes whose name matches as a storage system (repeatable; built in: "
         "MinIO, Ceph, etcd, PostgreSQL, GlusterFS)")
      ->check(cli::not_empty())
      ->allow_extra_args(false);
  cmd->add_option(
         "--config", c.run.config_path,
         "probe config (capture_probes YAML); default: the shipped default.yaml (kernel layers + stdio)")
      ->check(cli::input_file());
  cmd->add_option("--mode", c.run.mode,
                  "trace: one event per call; profile: counters per interval, kept in the kernel "
                  "(default: the config's mode, else trace)")
      ->check(CLI::IsMember({"trace", "profile"}));
  cmd->add_option("--interval-ms", c.run.interval_ms,
                  "profile mode's interval in milliseconds (default: the config's, else 1000)")
      ->transform(cli::whole_number(min_profile_interval_ms, max_profile_interval_ms));
  cmd->add_option("--snapshot-dir", c.run.snapshot_dirs,
                  "record the paths, sizes and mtimes under DIR at start and end (repeatable)")
      ->check(cli::input_directory())
      ->allow_extra_args(false);
  cmd->add_flag("--no-index", c.run.no_index,
                "do not write the trace's line index (TRACE.zindex, the form dfanalyzer reads) at the end");
  auto* print_flag =
      cmd->add_flag("--print", c.run.print,
                    "print one line per event as it is traced (TIME SYSTEM EVENT_TYPE PID TID COMM ...)");
  cmd->add_option("--print-filter", c.run.print_filter,
                  "--print only these layers (comma-separated: POSIX,BLOCK)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->needs(print_flag);
  cmd->add_option("--print-file", c.run.print_file, "--print to this file instead of stdout")
      ->check(cli::output_file())
      ->needs(print_flag);
  cmd->add_flag(
      "--live", c.run.live,
      "show a live view every second on stdout (top processes, files, layers; plain text when not a "
      "terminal)");
  cmd->add_option("--process-detail", c.run.process_detail,
                  "exited processes whose detail the summary keeps, those that moved the most bytes; the "
                  "others are totalled by command (default 1000)")
      ->transform(cli::whole_number(0, 1'000'000'000));
  cmd->add_option("--keep-loaded", c.run.keep_loaded_s,
                  "keep the loaded BPF object, detached, in a keeper process for SECONDS after the run, so "
                  "that the next run configured the same way starts without loading it (default 120; 0: "
                  "free it at the end)")
      ->transform(cli::whole_number(0, 86400));
  cmd->add_option("command", c.run.command, "the command to trace, after --")->required();
  cmd->prefix_command(false);

  return cmd;
}

CLI::App* add_explore(CLI::App& app, command_line& c)
{
  auto* cmd = app.add_subcommand(
      "explore", "list the functions of a library or executable that can be probed, one per line");
  cmd->add_option("target", c.explore.target, "a library name (libc.so.6) or a path")
      ->check(cli::not_empty());
  cmd->add_option("--regex", c.explore.regex, "only names the regex matches whole (RE2 syntax)");
  cmd->add_flag("--kernel", c.explore.kernel, "list the kernel's tracepoints and which layers are live");
  cmd->add_flag("--usdt", c.explore.usdt, "list the binary's USDT probes (provider:name) instead");

  return cmd;
}

CLI::App* add_analyze(CLI::App& app, command_line& c, bool& no_progress)
{
  auto* cmd = app.add_subcommand(
      "analyze", "report what traced programs did, from traces (ours or DFTracer's) or partial results");
  cmd->add_option("paths", c.analyze.inputs, "trace files, directories (searched recursively) or globs")
      ->required()
      ->check(cli::analyze_input());
  cmd->add_flag("--merge", c.analyze.merge, "the paths are partial results (--partial) to merge");
  cmd->add_option("--json", c.analyze.json_path, "write the report as JSON to this file")
      ->check(cli::output_file());
  cmd->add_option("--csv", c.analyze.csv_dir, "write the CSV tables into this directory")
      ->check(cli::output_directory());
  cmd->add_option("--html", c.analyze.html_path, "write the report as one self-contained HTML page")
      ->check(cli::output_file());
  cmd->add_option("--partial", c.analyze.partial_path,
                  "also write a mergeable partial result of these inputs (.gz: gzipped)")
      ->check(cli::output_file());
  cmd->add_option("--bin-ms", c.analyze.bin_ms, "time-series bin width in ms (default: from the run length)")
      ->transform(cli::whole_number(1, uint64_t{1} << 40));
  cmd->add_option("--threads", c.analyze.threads, "workers that inflate and parse (default: all cores)")
      ->transform(cli::whole_number(1, 4096));
  cmd->add_flag("--no-progress", no_progress, "no progress bar on stderr");
  cmd->add_option("--clock-skew-us", c.analyze.clock_skew_us,
                  "move a trace's timestamps onto NTP time when its host's recorded clock offset "
                  "exceeds this (default 1000; 0: any offset)")
      ->transform(cli::whole_number(0, uint64_t{1} << 40));

  return cmd;
}

CLI::App* add_live(CLI::App& app, command_line& c)
{
  auto* cmd =
      app.add_subcommand("live", "watch a daemon's run live (top processes, files and layers per second)");
  cmd->add_option("run-id", c.live.run_id, "the daemon's run id")
      ->required()
      ->check(CLI::Validator(
          [](std::string& id) {
            auto ok = check_run_id(id);
            return ok ? std::string() : ok.error().message;
          },
          "RUN-ID"));
  cmd->add_flag("--once", c.live.once, "print the current frame and exit");

  return cmd;
}

// The checks that span options, after CLI11 took each one: the exit code when one fails.
std::optional<int> refuse_combinations(const command_line& c)
{
  if (c.which == command_line::mode::run && c.run.live && c.run.print && c.run.print_file.empty())
    return refuse("--print and --live both write to stdout: give --print a --print-file");
  if (c.which == command_line::mode::analyze) {
    const analyze_options& a = c.analyze;
    if (a.merge && !a.partial_path.empty())
      return refuse("analyze: --partial takes traces, not --merge's partials");
    for (const std::string& partial : a.inputs)
      if (std::string why = a.merge ? cli::check_input_file(partial) : ""; !why.empty())
        return refuse("analyze --merge: " + why);
    if (a.merge && a.clock_skew_us >= 0)
      return refuse(
          "analyze: --clock-skew-us applies when traces are read (with --partial), not to --merge's "
          "partials");
  }
  if (c.which == command_line::mode::explore && c.explore.kernel == !c.explore.target.empty())
    return refuse("explore takes a library or executable, or --kernel");
  return std::nullopt;
}

}  // namespace

std::expected<command_line, int> parse_command_line(int argc, char** argv)
{
  command_line c;
  auto hold_ring = hold_ring_bytes();
  // The daemon: datacrumbs SIGNED-PROBES.json.gz [RUN-ID] (the form HPC sites script against).
  if (argc >= 2 && std::string_view(argv[1]).ends_with(".json.gz")) {
    if (argc > 3)
      return std::unexpected(refuse("usage: datacrumbs SIGNED-PROBES.json.gz [RUN-ID]"));
    if (auto id = argc == 3 ? check_run_id(argv[2]) : result<>{}; !id)
      return std::unexpected(cli::report("datacrumbs", id.error().message, id.error().exit_code));
    if (!hold_ring)
      return std::unexpected(refuse(hold_ring.error()));
    c.which = command_line::mode::daemon;
    c.daemon = {argv[1], argc == 3 ? argv[2] : "", false, *hold_ring};
    return c;
  }
  static constexpr std::string_view commands[] = {"run", "live", "layers", "explore", "analyze"};
  if (argc > 1 && argv[1][0] != '-' &&
      std::ranges::find(commands, std::string_view(argv[1])) == std::end(commands))
    return std::unexpected(
        refuse("unknown command '" + std::string(argv[1]) +
               "' (expected 'run', 'live', 'layers', 'explore', 'analyze' or a probe file)"));

  CLI::App app{"DataCrumbs: where an application's I/O goes, layer by layer", "datacrumbs"};
  app.require_subcommand(1);
  uint64_t ring_mb = c.run.ring_bytes >> 20;
  std::vector<std::string> layer_lists;
  bool no_progress = false;
  CLI::App* run_cmd = add_run(app, c, ring_mb, layer_lists);
  auto* layers_cmd = app.add_subcommand("layers", "list every layer, whether it is live here, and its hooks");
  layers_cmd->add_flag("-v,--verbose", c.layers_verbose, "print libbpf's messages");
  CLI::App* explore_cmd = add_explore(app, c);
  CLI::App* analyze_cmd = add_analyze(app, c, no_progress);
  CLI::App* live_cmd = add_live(app, c);
  if (auto code = cli::parse(app, argc, argv, "datacrumbs"))
    return std::unexpected(*code);
  c.run.ring_bytes = ring_mb << 20;
  c.run.layers = cli::split_commas(layer_lists);
  c.analyze.progress = !no_progress;
  c.which = *run_cmd       ? command_line::mode::run
            : *live_cmd    ? command_line::mode::live
            : *analyze_cmd ? command_line::mode::analyze
            : *explore_cmd ? command_line::mode::explore
                           : command_line::mode::layers;
  if (auto code = refuse_combinations(c))
    return std::unexpected(*code);
  if (c.which == command_line::mode::run) {
    if (!hold_ring)
      return std::unexpected(refuse(hold_ring.error()));
    c.run.hold_ring_bytes = *hold_ring;
  }
  return c;
}

}  // namespace dc
