#include "probe/uprobe_objects.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/names.h"
#include "core/user_regex.h"
#include "explore/elf_symbols.h"

namespace dc {

std::optional<file_id> identify(const std::string& path)
{
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return std::nullopt;
  return file_id{st.st_dev, st.st_ino,
                 static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::vector<code_object> code_objects(uint32_t tgid)
{
  std::string proc = "/proc/" + std::to_string(tgid);
  std::vector<code_object> objects;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink(proc + "/exe", ec);
  if (ec)
    return objects;
  objects.push_back({exe.string(), 0, 0});
  std::ifstream maps(proc + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // address perms offset dev inode path
    std::istringstream in(line);
    std::string range, perms, offset, dev, path;
    uint64_t inode = 0;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    // Code only, from a file still there ("(deleted)" ones cannot be linked by path).
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/' || path.ends_with(" (deleted)"))
      continue;
    unsigned major = 0, minor = 0;
    std::sscanf(dev.c_str(), "%x:%x", &major, &minor);
    auto same = std::ranges::find(objects, path, &code_object::path);
    if (same == objects.end())
      same = objects.insert(objects.end(), {path, 0, 0});
    same->dev = kernel_dev(major, minor);
    same->ino = inode;
  }
  return objects;
}

object_scanner::object_scanner(std::vector<uprobe_entry> entries) : entries_(std::move(entries))
{
  for (const uprobe_entry& e : entries_) {
    auto r = compile_user_regex(e.regex, e.category);  // the planner already noted a bad one
    regexes_.push_back(r ? std::move(*r) : user_regex());
  }
}

const std::vector<object_function>& object_scanner::functions_of(const std::string& path, const file_id& id)
{
  auto [it, fresh] = cache_.try_emplace(id);
  if (!fresh)
    return it->second;
  auto any_entry = [this](std::string_view name) {
    return std::ranges::any_of(regexes_, [&](const user_regex& r) { return r.matches(name); });
  };
  auto functions = list_functions(path, any_entry);  // sorted by name: the first alias of an address wins
  if (!functions)
    return it->second;                         // not ELF, no symbols: nothing to probe there
  std::set<std::pair<size_t, uint64_t>> seen;  // (entry, address)
  for (const elf_function& f : *functions)
    for (size_t e = 0; e < entries_.size(); ++e)
      if (regexes_[e].matches(f.name) && seen.insert({e, f.address}).second)
        it->second.push_back({e, f.name, f.file_offset});
  return it->second;
}

}  // namespace dc
