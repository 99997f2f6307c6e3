// The report sections analyze-counters provides, as one accumulator for the driver: "files"
// (Darshan counters: POSIX, then STDIO, MPIIO, H5F, H5D), "files_unattributed",
// "amplification", "page_cache" and "network"; "diagnostics" is computed from the finished
// report (analyze/diagnostics.h) once every section is in it.
#pragma once

#include <nlohmann/json.hpp>

#include "analyze/amplification.h"
#include "analyze/file_counters.h"
#include "analyze/module_counters.h"
#include "analyze/network.h"
#include "analyze/page_cache.h"
#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct counter_sections {
  file_counters files;
  module_counters modules;
  amplification amp;
  page_cache cache;
  network net;

  void add(const record& r)
  {
    files.add(r);
    modules.add(r);
    amp.add(r);
    cache.add(r);
    net.add(r);
  }
  void merge(const counter_sections& o)
  {
    files.merge(o.files);
    modules.merge(o.modules);
    amp.merge(o.amp);
    cache.merge(o.cache);
    net.merge(o.net);
  }
  void end_file() { modules.end_file(); }
  // {"files": .., "modules": .., "amplification": .., "page_cache": .., "network": ..}
  nlohmann::json partial() const;
  static dc::result<counter_sections> from_partial(const nlohmann::json& j);
  // The sections, to be put at the report's top level under the same keys (the run's MPI
  // sizes tell MPI-IO's collective opens from independent ones).
  nlohmann::json report(const name_map& names, const run_section& run) const;
};

}  // namespace dc::analyze
