// Trace lines for the analyze accumulators' tests: an owning line that lends a dc::analyze::record,
// built by hand (unit tests) or from a parsed trace line (runtime tests).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analyze/folded_fs.h"
#include "analyze/record.h"

namespace dc::test {

struct trace_line {
  analyze::phase ph = analyze::phase::complete;
  std::string name, cat;
  uint64_t pid = 1, tid = 1;
  int64_t ts_us = 0, dur_us = 0, id = 0;
  int64_t p_idx = -1;  // args.p_idx, as the trace reader takes it out of args
  int32_t level = 0;
  uint64_t hhash = 7, fhash = 0;
  std::vector<std::pair<std::string, int64_t>> args;
  std::vector<std::pair<std::string, std::string>> texts;

  // The record view; valid while this line and `storage` live.
  analyze::record view(std::vector<analyze::record_arg>& arg_storage,
                       std::vector<analyze::record_text>& text_storage) const;
};

// Feeds lines to an accumulator in order, each call's folded FS operation after it (as
// analyze::analysis does).
template <class Acc>
void feed(Acc& acc, const std::vector<trace_line>& lines)
{
  std::vector<analyze::record_arg> a;
  std::vector<analyze::record_text> t;
  analyze::folded_fs fs;
  for (const auto& l : lines) {
    analyze::record r = l.view(a, t);
    acc.add(r);
    if (analyze::unfold_fs(r, fs))
      acc.add(fs.r);
  }
}

// A parsed trace line (ours or DFTracer's) as a trace_line; FH/HH lines also fill `names`.
trace_line line_from_json(const nlohmann::json& j, analyze::name_map& names);

}  // namespace dc::test
