#include "sink/snapshot_parse.h"

#include <charconv>

namespace dc {

namespace {

std::string_view trim(std::string_view s)
{
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Calls f(line) for each line of text (without its newline).
template <class F>
void for_each_line(std::string_view text, F f)
{
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos)
      break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<int64_t> to_int(std::string_view s)
{
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// Undoes the kernel's \ooo escapes in mount fields (space, tab, newline, backslash).
std::string unescape_octal(std::string_view s)
{
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

cpu_info parse_cpuinfo(std::string_view text)
{
  cpu_info info;
  for_each_line(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return;
    std::string_view key = trim(line.substr(0, colon));
    if (key == "processor")
      ++info.count;
    else if (key == "model name" && info.model.empty())
      info.model = trim(line.substr(colon + 1));
  });
  return info;
}

std::optional<uint64_t> parse_meminfo_bytes(std::string_view text, std::string_view key)
{
  std::optional<uint64_t> bytes;
  for_each_line(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (bytes || colon == std::string_view::npos || line.substr(0, colon) != key)
      return;
    std::string_view value = trim(line.substr(colon + 1));
    bool kb = value.ends_with(" kB");
    if (kb)
      value = trim(value.substr(0, value.size() - 3));
    if (auto n = to_int(value); n && *n >= 0)
      bytes = static_cast<uint64_t>(*n) * (kb ? 1024 : 1);
  });
  return bytes;
}

std::optional<std::string> parse_os_release(std::string_view text, std::string_view key)
{
  std::optional<std::string> found;
  for_each_line(text, [&](std::string_view line) {
    size_t eq = line.find('=');
    if (found || eq == std::string_view::npos || trim(line.substr(0, eq)) != key)
      return;
    std::string_view v = trim(line.substr(eq + 1));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    found = std::string(v);
  });
  return found;
}

std::string parse_scheduler(std::string_view text)
{
  size_t open = text.find('[');
  size_t close = text.find(']', open);
  if (open != std::string_view::npos && close != std::string_view::npos)
    return std::string(text.substr(open + 1, close - open - 1));
  return std::string(trim(text));
}

std::vector<mount_entry> parse_mounts(std::string_view text)
{
  std::vector<mount_entry> mounts;
  for_each_line(text, [&](std::string_view line) {
    std::vector<std::string_view> fields;
    while (!line.empty() && fields.size() < 4) {
      size_t sp = line.find(' ');
      fields.push_back(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    if (fields.size() == 4)
      mounts.push_back({unescape_octal(fields[0]), unescape_octal(fields[1]), unescape_octal(fields[2]),
                        unescape_octal(fields[3])});
  });
  return mounts;
}

std::vector<std::string> split_nul(std::string_view bytes)
{
  std::vector<std::string> out;
  while (!bytes.empty()) {
    size_t nul = bytes.find('\0');
    out.emplace_back(bytes.substr(0, nul));
    if (nul == std::string_view::npos)
      break;
    bytes.remove_prefix(nul + 1);
  }
  return out;
}

const std::vector<std::string_view>& snapshot_env_keys()
{
  // Rank variables first, in the order rank_of() prefers them.
  static const std::vector<std::string_view> keys = {"OMPI_COMM_WORLD_RANK",
                                                     "PMIX_RANK",
                                                     "PMI_RANK",
                                                     "SLURM_PROCID",
                                                     "FLUX_TASK_RANK",
                                                     "MV2_COMM_WORLD_RANK",
                                                     "PALS_RANKID",
                                                     "OMPI_COMM_WORLD_SIZE",
                                                     "OMPI_COMM_WORLD_LOCAL_RANK",
                                                     "PMI_SIZE",
                                                     "SLURM_JOB_ID",
                                                     "SLURM_JOB_NAME",
                                                     "SLURM_NODEID",
                                                     "SLURM_NTASKS",
                                                     "SLURM_LOCALID",
                                                     "SLURM_CLUSTER_NAME",
                                                     "FLUX_JOB_ID",
                                                     "FLUX_JOB_SIZE",
                                                     "PBS_JOBID",
                                                     "LSB_JOBID",
                                                     "OMP_NUM_THREADS",
                                                     "LD_PRELOAD",
                                                     "DATACRUMBS_RUN_ID"};
  return keys;
}

nlohmann::json kept_environment(const std::vector<std::string>& environ)
{
  nlohmann::json kept = nlohmann::json::object();
  for (const std::string& entry : environ) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos)
      continue;
    std::string_view key(entry.data(), eq);
    for (std::string_view k : snapshot_env_keys())
      if (k == key)
        kept[std::string(key)] = entry.substr(eq + 1);
  }
  return kept;
}

std::optional<int64_t> rank_of(const nlohmann::json& kept_env)
{
  for (std::string_view key : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID",
                               "FLUX_TASK_RANK", "MV2_COMM_WORLD_RANK", "PALS_RANKID"}) {
    auto it = kept_env.find(key);
    if (it != kept_env.end() && it->is_string())
      if (auto rank = to_int(trim(it->get<std::string>())); rank && *rank >= 0)
        return rank;
  }
  return std::nullopt;
}

process_ids parse_status(std::string_view text)
{
  process_ids ids;
  for_each_line(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return;
    std::string_view key = line.substr(0, colon);
    std::string_view rest = trim(line.substr(colon + 1));
    std::string_view first = rest.substr(0, rest.find_first_of(" \t"));
    int64_t* field = key == "Uid" ? &ids.uid : key == "Gid" ? &ids.gid : key == "PPid" ? &ids.ppid : nullptr;
    if (field)
      if (auto v = to_int(first))
        *field = *v;
  });
  return ids;
}

std::string parse_cgroup(std::string_view text)
{
  std::string first, unified;
  for_each_line(text, [&](std::string_view line) {
    size_t a = line.find(':');
    size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos)
      return;
    std::string path(line.substr(b + 1));
    if (line.substr(0, b + 1) == "0::")
      unified = path;
    else if (first.empty())
      first = path;
  });
  return unified.empty() ? first : unified;
}

}  // namespace dc
