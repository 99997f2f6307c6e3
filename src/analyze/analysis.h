// Every section of the analysis, fed record by record. Adding a section: one member here and
// one line in add, end_file, merge, partial, from_partial and report (analysis.cpp). Sections see
// records as clock_section placed them (timestamps on NTP time where a host's clock was off).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/clock_section.h"
#include "analyze/counter_sections.h"
#include "analyze/folded_fs.h"
#include "analyze/inputs_section.h"
#include "analyze/layers_section.h"
#include "analyze/names_section.h"
#include "analyze/record.h"
#include "analyze/run_section.h"
#include "analyze/snapshots.h"
#include "analyze/timeline_section.h"
#include "core/result.h"

namespace dc::analyze {

constexpr int partial_version = 1;
constexpr int report_version = 1;

struct analysis {
  inputs_section inputs;
  names_section names;
  run_section run;
  layers_section layers;
  timeline_section timeline;
  counter_sections counters;  // files, amplification, page_cache, network (diagnostics: in report)
  analyze::snapshots snapshots;
  clock_section clock;  // first: it places each record on the common timeline

  // Hands r, moved onto the common timeline, to every section; returns the record as placed
  // (valid until the next add) for per-event outputs.
  const record& add(const record& r)
  {
    const record& p = clock.place(r, placed_);
    names.add(p);
    call_facts c = facts_of(p);
    run.add(p, c);
    layers.add(p, c);
    timeline.add(p, c);
    counters.add(p);
    snapshots.add(p);
    unfolded_ = unfold_fs(p, folded_);
    if (unfolded_)
      add_folded(folded_.r);
    return p;
  }
  // The FS operation the record last added carried (folded_fs.h), for per-event outputs; null
  // when it carried none.
  const record* folded() const { return unfolded_ ? &folded_.r : nullptr; }
  // The FS operation a call carries in its args ("fs", folded_fs.h): counted in the layers, the
  // timeline and the counters as its own event was, but not a line of the trace (run section).
  void add_folded(const record& fs)
  {
    call_facts c = facts_of(fs);
    layers.add(fs, c);
    timeline.add(fs, c);
    counters.add(fs);
  }
  void end_file()
  {
    layers.end_file();
    counters.end_file();
    clock.end_file();
  }

  void merge(const analysis& other);
  nlohmann::json partial() const;
  static dc::result<analysis> from_partial(const nlohmann::json& j);
  // The report JSON (docs/analyze.md); bin_ms 0: chosen from the run length.
  nlohmann::json report(uint64_t bin_ms) const;

 private:
  record placed_;
  folded_fs folded_;
  bool unfolded_ = false;
};

// The text report printed on stdout, rendered from the report JSON.
std::string text_report(const nlohmann::json& report);

}  // namespace dc::analyze
