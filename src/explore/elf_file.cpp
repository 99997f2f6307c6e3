#include "explore/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc {

elf_file::~elf_file()
{
  if (elf_)
    elf_end(elf_);
  if (fd_ >= 0)
    close(fd_);
}

result<> elf_file::open(const std::string& path)
{
  if (elf_version(EV_CURRENT) == EV_NONE)
    return fail("libelf is too old");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    return fail("cannot open '" + path + "': " + std::strerror(errno));
  // A file only root can change is mapped: its symbol tables are then read from the page cache
  // in place, many pages per fault, where ELF_C_READ copies each into fresh heap (a page fault
  // per 4 KiB, 12-20 us each in some guests: docs/performance.md, session 34). Any other file
  // is copied: its owner could truncate it while mapped, and a read past the end would kill
  // this process with SIGBUS.
  struct stat st {};
  bool root_only = fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 022) == 0;
  elf_ = elf_begin(fd_, root_only ? ELF_C_READ_MMAP : ELF_C_READ, nullptr);
  if (!elf_ || elf_kind(elf_) != ELF_K_ELF)
    return fail("'" + path + "' is not an ELF file", 2);
  return {};
}

std::vector<section_span> executable_sections(Elf* elf)
{
  std::vector<section_span> out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR))
      out.push_back({sh.sh_addr, sh.sh_size, sh.sh_offset});
  }
  return out;
}

bool file_offset_of(const std::vector<section_span>& sections, uint64_t addr, uint64_t* offset)
{
  for (const auto& s : sections)
    if (addr >= s.addr && addr < s.addr + s.size) {
      *offset = addr - s.addr + s.offset;
      return true;
    }
  return false;
}

}  // namespace dc
