#include "explore/usdt_notes.h"

#include <gelf.h>

#include <cstring>

#include "explore/elf_file.h"

namespace dc {

namespace {

constexpr uint32_t nt_stapsdt = 3;

// A NUL-terminated string at `at` within [at, end); advances `at` past it.
std::string take_string(const char*& at, const char* end)
{
  const char* nul = static_cast<const char*>(std::memchr(at, '\0', static_cast<size_t>(end - at)));
  if (!nul)
    nul = end;
  std::string s(at, nul);
  at = nul < end ? nul + 1 : end;
  return s;
}

}  // namespace

result<std::vector<usdt_probe>> list_usdt(const std::string& path)
{
  elf_file f;
  if (auto opened = f.open(path); !opened)
    return std::unexpected(opened.error());
  std::vector<section_span> mapped;
  Elf_Scn* notes = nullptr;
  uint64_t base_addr = 0;  // .stapsdt.base as linked: a prelinked binary moves probe addresses
  bool has_base = false;
  size_t shstrndx = 0;
  elf_getshdrstrndx(f.elf(), &shstrndx);
  for (Elf_Scn* scn = elf_nextscn(f.elf(), nullptr); scn; scn = elf_nextscn(f.elf(), scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char* name = elf_strptr(f.elf(), shstrndx, sh.sh_name);
    if (sh.sh_type == SHT_NOTE && name && std::strcmp(name, ".note.stapsdt") == 0)
      notes = scn;
    if (name && std::strcmp(name, ".stapsdt.base") == 0) {
      base_addr = sh.sh_addr;
      has_base = true;
    }
    if ((sh.sh_flags & SHF_ALLOC) && sh.sh_type != SHT_NOBITS)
      mapped.push_back({sh.sh_addr, sh.sh_size, sh.sh_offset});
  }
  std::vector<usdt_probe> out;
  if (!notes)
    return out;
  Elf_Data* data = elf_getdata(notes, nullptr);
  size_t at = 0, name_at = 0, desc_at = 0;
  GElf_Nhdr nh;
  while (data && (at = gelf_getnote(data, at, &nh, &name_at, &desc_at)) != 0) {
    if (nh.n_type != nt_stapsdt || nh.n_descsz < 3 * sizeof(uint64_t))
      continue;
    const char* desc = static_cast<const char*>(data->d_buf) + desc_at;
    uint64_t pc, base, semaphore;
    std::memcpy(&pc, desc, 8);
    std::memcpy(&base, desc + 8, 8);
    std::memcpy(&semaphore, desc + 16, 8);
    if (has_base) {  // the note records where .stapsdt.base was at link time
      pc += base_addr - base;
      if (semaphore)
        semaphore += base_addr - base;
    }
    const char* strings = desc + 24;
    const char* end = desc + nh.n_descsz;
    usdt_probe p;
    p.provider = take_string(strings, end);
    p.name = take_string(strings, end);
    p.args = take_string(strings, end);
    if (!file_offset_of(mapped, pc, &p.file_offset))
      continue;
    if (semaphore && !file_offset_of(mapped, semaphore, &p.semaphore_offset))
      continue;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace dc
