// What a job's scheduler metadata asks of DataCrumbs. SLURM jobs carry it in their comment
// (`--comment '{"datacrumbs":{"enable":"yes","probe_file":"/path/probes.json.gz"}}'`), Flux jobs
// in the jobspec's attributes.system.datacrumbs. Other keys beside "datacrumbs" are the job's
// business and are left alone; metadata that is not ours is no request at all.
#pragma once

#include <string>

#include "core/result.h"

namespace dc {

struct job_request {
  bool traced = false;
  std::string probe_file;  // absolute, when traced
};

// `text` is a JSON document; `at` a dotted path of object keys to the object holding
// "datacrumbs" (empty: the document itself). Not JSON (unless it mentions datacrumbs), not an
// object, no "datacrumbs" key, or enable "no": not traced. A "datacrumbs" entry that is not
// {"enable":"yes"|"no","probe_file":"/abs/path"} is an error saying what is wrong.
result<job_request> parse_job_metadata(const std::string& text, const std::string& at = "");

}  // namespace dc
