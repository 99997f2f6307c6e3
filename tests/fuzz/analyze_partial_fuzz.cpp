// `datacrumbs analyze --merge`'s reader of partial results (analyze/analysis.h from_partial):
// JSON another analyze wrote, or anyone. An accepted partial is merged with itself and reported.
#include "analyze/analysis.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  nlohmann::json j = nlohmann::json::parse(dc::fuzz::text_of(data, size), nullptr, false);
  if (j.is_discarded())
    return 0;
  auto part = dc::analyze::analysis::from_partial(j);
  if (!part)
    return 0;
  dc::analyze::analysis twice = *part;
  twice.merge(*part);
  (void)dc::analyze::text_report(twice.report(0));
  (void)dc::analyze::text_report(part->report(1));
  return 0;
}
