// Storage-system rows: processes are labelled by name (built-ins for MinIO, Ceph, etcd,
// PostgreSQL and GlusterFS, plus user patterns), and each label gets the seed's amplification row
// (SYS_R SYS_W VFS_R VFS_W BLK_R BLK_W R_AMP W_AMP), here byte-based for the ratios.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/names.h"
#include "core/result.h"
#include "core/user_regex.h"
#include "sink/summary.h"

namespace dc {

struct system_rule {
  std::string label;
  user_regex regex;  // matched in full against the process's comm
};

// "LABEL=REGEX" from the command line; an invalid regex or a missing '=' is an error naming it.
result<system_rule> parse_system_rule(const std::string& spec);

// User rules first (they win), then the built-ins.
std::vector<system_rule> system_rules(std::vector<system_rule> user);

// The label of a process, or "" when no rule matches.
std::string system_label(const process_info& p, const std::vector<system_rule>& rules);

nlohmann::json systems_json(const summary_builder& s, const process_table& processes,
                            const std::vector<system_rule>& rules);
std::string systems_text(const nlohmann::json& systems);

}  // namespace dc
