// What a job's scheduler metadata asks (deploy/job_metadata.h): a SLURM comment or a Flux
// jobspec, any text the job's user chose. The first line is the --at path, the rest the JSON.
#include "deploy/job_metadata.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  auto parts = dc::fuzz::split(dc::fuzz::text_of(data, size), "\n", 2);
  const std::string& at = parts.size() == 2 ? parts[0] : std::string();
  auto request = dc::parse_job_metadata(parts.back(), at);
  if (request && request->traced && (request->probe_file.empty() || request->probe_file.front() != '/'))
    dc::fuzz::violated("a traced job without an absolute probe file");
  if (!request && request.error().exit_code != 2)
    dc::fuzz::violated("a malformed request is not exit code 2");
  return 0;
}
