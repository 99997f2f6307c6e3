// The system config reader (config/system_config.h): a YAML map of four settings.
#include <cstdlib>

#include "config/system_config.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
  // The environment overrides the file: none of it here, so the file alone decides.
  for (const char* v : {"DATACRUMBS_TRACE_DIR", "DATACRUMBS_TRACE_PATTERN", "DATACRUMBS_RUN_DIR",
                        "DATACRUMBS_SECRET_FILE", "DATACRUMBS_SIGN_SOCKET"})
    unsetenv(v);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  std::string path = dc::fuzz::write_file("datacrumbs.yaml", dc::fuzz::text_of(data, size));
  auto config = dc::load_system_config_from(path);
  if (!config && config.error().exit_code != 2)
    dc::fuzz::violated("a bad system config is not exit code 2");
  return 0;
}
