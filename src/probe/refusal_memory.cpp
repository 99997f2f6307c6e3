#include "probe/refusal_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>

#include "core/hash.h"
#include "probe/core_btf.h"

namespace dc {

namespace {

constexpr int kernel_lacks_it = 524;  // ENOTSUPP, the kernel's own (not in libc's errno.h)

std::string path_of(const std::string& dir, const std::string& key)
{
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%014llx", static_cast<unsigned long long>(string_hash(key)));
  return dir + "/refused-" + hex;
}

std::string boot_id()
{
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// A program or layer name as the object spells them (nothing else is taken from the file).
bool plain_name(const std::string& s)
{
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string printable(std::string s)
{
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = ' ';
  return s;
}

}  // namespace

refusals recall_refusals(const std::string& dir, const std::string& key)
{
  std::string path = path_of(dir, key);
  if (!check_private(dir, true) || !check_private(path, false))
    return {};
  std::ifstream in(path);
  std::string line, boot = boot_id();
  // The first line: the boot and the whole key (a hash names the file; the key decides).
  if (!std::getline(in, line) || boot.empty() || line != boot || !std::getline(in, line) || line != key)
    return {};
  refusals r;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind, name, why;
    std::getline(fields, kind, '\t');
    std::getline(fields, name, '\t');
    std::getline(fields, why);
    if (!plain_name(name))
      return {};  // not a file this wrote: none
    if (kind == "program")
      r.programs.push_back(name);
    else if (kind == "layer")
      r.layers.emplace_back(name, printable(why));
    else
      return {};
  }
  return r;
}

result<> remember_refusals(const std::string& dir, const std::string& key, const refusals& r)
{
  std::string path = path_of(dir, key);
  if (r.empty()) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT)
      return fail("cannot remove " + path + ": " + std::strerror(errno));
    return {};
  }
  if (auto ok = check_private(dir, true); !ok)
    return ok;
  std::string boot = boot_id();
  if (boot.empty())
    return fail("cannot read this boot's id");
  std::string text = boot + "\n" + key + "\n";
  for (const auto& p : r.programs) text += "program\t" + p + "\n";
  for (const auto& [layer, why] : r.layers) text += "layer\t" + layer + "\t" + printable(why) + "\n";
  auto temp = write_temp(dir, "refused", std::as_bytes(std::span(text.data(), text.size())));
  if (!temp)
    return std::unexpected(temp.error());
  if (rename(temp->c_str(), path.c_str()) != 0) {
    unlink(temp->c_str());
    return fail("cannot rename into " + dir + ": " + std::strerror(errno));
  }
  return {};
}

bool leave_out(const refusals& known, const std::vector<std::unique_ptr<layer>>& layers,
               std::vector<std::string>& refused, std::vector<std::string>& left_out,
               std::vector<layer_report>& reports)
{
  for (const auto& p : known.programs)
    if (std::ranges::find(left_out, p) == left_out.end())
      left_out.push_back(p);
  for (const auto& [name, why] : known.layers) {
    auto l = std::ranges::find_if(layers, [&](const std::unique_ptr<layer>& l) { return l->name() == name; });
    if (l == layers.end() || std::ranges::find(refused, name) != refused.end())
      continue;
    refused.push_back(name);
    reports.push_back({name, std::string((*l)->category()), false, {}, why});
  }
  return !known.empty();
}

refusals refusals_of(const std::vector<std::string>& left_out, const std::vector<layer_report>& reports)
{
  refusals r{left_out, {}};
  for (const auto& report : reports) r.layers.emplace_back(report.name, report.why);
  return r;
}

bool lasting_refusal(int err)
{
  switch (-err) {
    case EINVAL:  // the verifier's refusal
    case EACCES:  // a helper or kfunc this program type may not call
    case E2BIG:   // too complex for this kernel
    case EPERM:   // a program type this kernel forbids (fentry here)
    case EOPNOTSUPP:
    case kernel_lacks_it:  // a feature this kernel lacks
      return true;
    default: return false;
  }
}

}  // namespace dc
