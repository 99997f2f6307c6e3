// Where `run --print`, `run --live` and the daemon's live snapshot go (sink/event_print.h,
// sink/live_view.h): the checks of their options, their outputs, and the daemon's snapshot file,
// which `datacrumbs live RUN-ID` reads (docs/live.md).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/trace_pipeline.h"
#include "config/probe_config.h"
#include "core/result.h"

namespace dc {

// --print-filter's names, checked against the layers that make events and the config's entries
// (case-insensitive), as the trace's "cat" spells them.
result<std::set<std::string, std::less<>>> print_layers(const std::vector<std::string>& names,
                                                        const probe_config& config);

// --print's output: stdout, or `path` created (truncated) now, before the command starts.
result<std::unique_ptr<async_output>> print_output(const std::string& path);

// --live: frames to stdout, redrawn in place on a terminal, one block after another otherwise.
// `out` is finished by the caller after the pipeline, so the last frame precedes the summary.
std::function<void(const live_frame&)> live_printer(std::shared_ptr<async_output> out);

// The daemon's run: each frame replaces RUN_DIR/datacrumbs-RUN_ID.live.json (written beside it
// and renamed, so a reader never sees half of one), readable by root and the traced user only.
std::string live_snapshot_path(const std::string& run_dir, const std::string& run_id);
std::function<void(const live_frame&)> live_snapshot_writer(std::string path, uint32_t uid, uint32_t gid);

}  // namespace dc
