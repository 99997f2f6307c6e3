// The trace reader of `datacrumbs analyze` on a plain .pfw file: the line parser (simdjson;
// DataCrumbs' and DFTracer's lines), lines cut between chunks, every report section.
#include "fuzz/analyze_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  dc::fuzz::analyze_file(dc::fuzz::write_file("trace.pfw", dc::fuzz::text_of(data, size)));
  return 0;
}
