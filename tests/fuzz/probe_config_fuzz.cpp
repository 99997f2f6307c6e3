// The probe config reader (config/probe_config.h): capture_probes YAML with include:. The input
// is up to three files cut at "\n#---\n": main.yaml, then a.yaml and b.yaml, which main.yaml (and
// each other, or themselves: a cycle) can include by name.
#include "config/probe_config.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  auto files = dc::fuzz::split(dc::fuzz::text_of(data, size), "\n#---\n", 3);
  const char* names[] = {"main.yaml", "a.yaml", "b.yaml"};
  for (size_t i = 0; i < 3; ++i) dc::fuzz::write_file(names[i], i < files.size() ? files[i] : "");
  auto config = dc::load_probe_config((dc::fuzz::scratch() / "main.yaml").string());
  if (config) {
    // What a loaded config promises its users (probe/uprobe_plan.cpp relies on it).
    for (const auto& e : config->entries) {
      if (e.name.empty())
        dc::fuzz::violated("an entry without a name was accepted");
      if ((e.kind == dc::probe_kind::uprobe || e.kind == dc::probe_kind::usdt) && e.file.empty())
        dc::fuzz::violated("a uprobe/usdt entry without a file was accepted");
    }
    if (config->profile_interval_ms != 0 && (config->profile_interval_ms < dc::min_profile_interval_ms ||
                                             config->profile_interval_ms > dc::max_profile_interval_ms))
      dc::fuzz::violated("a profile interval out of range was accepted");
  } else if (config.error().message.empty()) {
    dc::fuzz::violated("an error without a message");
  }
  return 0;
}
