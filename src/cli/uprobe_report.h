// Where each uprobe entry of the config was found, for the summary: the named library, the
// objects processes map that define its functions (a library linked in statically), and the
// traced processes in which it found nothing, so that a user sees at once what was not captured.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/names.h"
#include "core/uprobe_target.h"
#include "probe/uprobe_layer.h"
#include "sink/summary.h"

namespace dc {

// [{"name", "found_in": [{"object", "functions", "pids" (absent: linked for every process)}],
//   "nothing_in": [{"pid", "comm"}]}]: a process is in nothing_in when none of the entry's
// functions was found in the objects it maps and it made no call to one.
nlohmann::json uprobe_entries_json(const std::vector<uprobe_entry>& entries,
                                   const std::vector<uprobe_placement>& placements,
                                   const summary_builder& summary, const process_table& processes);

// One line per entry, as the summary on stderr shows it.
std::string uprobe_entries_text(const nlohmann::json& entries);

}  // namespace dc
