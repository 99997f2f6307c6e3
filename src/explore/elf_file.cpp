#include "explore/elf_file.h"

#include <fcntl.h>
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
  elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
  if (!elf_ || elf_kind(elf_) != ELF_K_ELF)
    return fail("'" + path + "' is not an ELF file", 2);
  return {};
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
