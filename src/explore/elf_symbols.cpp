#include "explore/elf_symbols.h"

#include "explore/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

namespace dc {

result<std::vector<elf_function>> list_functions(const std::string& path, const name_filter& wanted)
{
  elf_file f;
  if (auto opened = f.open(path); !opened)
    return std::unexpected(opened.error());

  std::vector<section_span> exec_sections = executable_sections(f.elf());
  std::vector<Elf_Scn*> symtabs;  // .dynsym first: its names are the exported ones
  for (Elf_Scn* scn = elf_nextscn(f.elf(), nullptr); scn; scn = elf_nextscn(f.elf(), scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    if (sh.sh_type == SHT_DYNSYM)
      symtabs.insert(symtabs.begin(), scn);
    else if (sh.sh_type == SHT_SYMTAB)
      symtabs.push_back(scn);
  }
  if (symtabs.empty())
    return fail("'" + path + "' has no symbol table");

  std::map<std::string, elf_function> by_name;
  for (Elf_Scn* scn : symtabs) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    Elf_Data* data = elf_getdata(scn, nullptr);
    size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym))
        continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
        continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
        continue;
      const char* name = elf_strptr(f.elf(), sh.sh_link, sym.st_name);
      uint64_t offset = 0;
      if (!name || !*name || (wanted && !wanted(name)) ||
          !file_offset_of(exec_sections, sym.st_value, &offset))
        continue;
      if (by_name.count(name))
        continue;
      by_name.emplace(name, elf_function{name, sym.st_value, sym.st_size, offset});
    }
  }
  std::vector<elf_function> out;
  out.reserve(by_name.size());
  for (auto& [name, fn] : by_name) out.push_back(std::move(fn));
  return out;
}

result<uint64_t> entry_point_offset(const std::string& path)
{
  elf_file f;
  if (auto opened = f.open(path); !opened)
    return std::unexpected(opened.error());
  GElf_Ehdr header;
  uint64_t offset = 0;
  if (!gelf_getehdr(f.elf(), &header) ||
      !file_offset_of(executable_sections(f.elf()), header.e_entry, &offset))
    return fail("'" + path + "' has no entry point in its code");
  return offset;
}

result<std::string> resolve_binary(std::string_view name_or_path)
{
  namespace fs = std::filesystem;
  std::string name(name_or_path);
  if (name.find('/') != std::string::npos) {
    std::error_code ec;
    auto st = fs::status(name, ec);
    if (!fs::exists(st))
      return fail("'" + name + "' does not exist", 2);
    if (!fs::is_regular_file(st))
      return fail("'" + name + "' is not a file", 2);
    return fs::canonical(name, ec).string();
  }
  // The multiarch and classic library directories, in the loader's order.
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                          "/lib", "/usr/lib", "/usr/local/lib"}) {
    std::error_code ec;
    fs::path candidate = fs::path(dir) / name;
    if (fs::is_regular_file(candidate, ec))
      return fs::canonical(candidate, ec).string();
  }
  return fail("cannot find '" + name + "' (give a path, or a library name in the standard directories)", 2);
}

}  // namespace dc
