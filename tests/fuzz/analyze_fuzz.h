// What the trace reader targets share: a trace file read as `datacrumbs analyze` reads it (one
// worker thread), every record through every section, the report and its text, and the partial
// result, which must read back to the same partial (analyze --merge is exact).
#pragma once

#include <string>

#include "analyze/analysis.h"
#include "analyze/trace_reader.h"
#include "fuzz/fuzz_util.h"

namespace dc::fuzz {

inline void analyze_file(const std::string& path)
{
  analyze::analysis all;
  analyze::record_sink sink{[&](const analyze::record& r) { all.add(r); }, [&] { all.end_file(); }};
  analyze::read_traces({path}, {1, false}, all.inputs, sink);
  nlohmann::json report = all.report(0);
  (void)analyze::text_report(report);
  std::string partial = all.partial().dump();
  auto back = analyze::analysis::from_partial(nlohmann::json::parse(partial));
  if (!back)
    violated("a partial result does not read back");
  if (back->partial().dump() != partial)
    violated("a partial result reads back to another partial result");
}

}  // namespace dc::fuzz
