// The report sections analyze-counters provides, as one accumulator for the driver: "files"
// (Darshan counters), "amplification", "page_cache" and "network"; "diagnostics" is computed
// from the finished report (analyze/diagnostics.h) once every section is in it.
#pragma once

#include <nlohmann/json.hpp>

#include "analyze/amplification.h"
#include "analyze/file_counters.h"
#include "analyze/network.h"
#include "analyze/page_cache.h"
#include "analyze/record.h"
#include "core/result.h"

namespace dc::analyze {

struct counter_sections {
  file_counters files;
  amplification amp;
  page_cache cache;
  network net;

  void add(const record& r)
  {
    files.add(r);
    amp.add(r);
    cache.add(r);
    net.add(r);
  }
  void merge(const counter_sections& o)
  {
    files.merge(o.files);
    amp.merge(o.amp);
    cache.merge(o.cache);
    net.merge(o.net);
  }
  // {"files": .., "amplification": .., "page_cache": .., "network": ..}
  nlohmann::json partial() const;
  static dc::result<counter_sections> from_partial(const nlohmann::json& j);
  // The four sections, to be put at the report's top level under the same keys.
  nlohmann::json report(const name_map& names) const;
};

}  // namespace dc::analyze
