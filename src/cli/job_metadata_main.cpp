// datacrumbs_job_metadata [--at KEY.KEY] JSON: what a scheduler's prolog asks of a job's
// metadata. Prints the probe file and exits 0 when the job asked to be traced; exits 3, silent,
// when it did not; exits 2 with one line saying what is wrong when its request is malformed.
#include <cstdio>
#include <string>
#include <string_view>

#include "deploy/job_metadata.h"

int main(int argc, char** argv)
{
  std::string at;
  int first = 1;
  if (argc == 4 && std::string_view(argv[1]) == "--at") {
    at = argv[2];
    first = 3;
  }
  if (argc != first + 1) {
    std::fprintf(stderr, "usage: datacrumbs_job_metadata [--at KEY.KEY] JSON\n");
    return 2;
  }
  auto request = dc::parse_job_metadata(argv[first], at);
  if (!request) {
    std::fprintf(stderr, "%s\n", request.error().message.c_str());
    return 2;
  }
  if (!request->traced)
    return 3;
  std::printf("%s\n", request->probe_file.c_str());
  return 0;
}
