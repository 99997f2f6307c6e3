#include "config/system_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "core/install_paths.h"

namespace dc {

namespace {

void override_from_env(std::string& value, const char* name)
{
  if (const char* v = std::getenv(name); v && *v)
    value = v;
}

}  // namespace

result<system_config> load_system_config_from(const std::string& path)
{
  system_config c;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    try {
      YAML::Node root = YAML::LoadFile(path);
      if (root && !root.IsNull() && !root.IsMap())
        return fail("system config '" + path + "': expected a map of settings", 2);
      for (const auto& kv : root) {
        std::string key = kv.first.as<std::string>();
        std::string value = kv.second.as<std::string>();
        if (key == "trace_dir")
          c.trace_dir = value;
        else if (key == "trace_pattern")
          c.trace_pattern = value;
        else if (key == "secret_file")
          c.secret_file = value;
        else if (key == "sign_socket")
          c.sign_socket = value;
        else
          return fail("system config '" + path + "': unknown setting '" + key +
                          "' (trace_dir, trace_pattern, secret_file, sign_socket)",
                      2);
      }
    } catch (const YAML::Exception& e) {
      return fail("system config '" + path + "': " + e.what(), 2);
    }
  }
  override_from_env(c.trace_dir, "DATACRUMBS_TRACE_DIR");
  override_from_env(c.trace_pattern, "DATACRUMBS_TRACE_PATTERN");
  override_from_env(c.run_dir, "DATACRUMBS_RUN_DIR");
  override_from_env(c.secret_file, "DATACRUMBS_SECRET_FILE");
  override_from_env(c.sign_socket, "DATACRUMBS_SIGN_SOCKET");
  return c;
}

result<system_config> load_system_config()
{
  return load_system_config_from(installed_path("etc/datacrumbs/datacrumbs.yaml"));
}

}  // namespace dc
