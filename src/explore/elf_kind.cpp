#include "explore/elf_kind.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dc {

result<> check_dynamic_elf(const std::string& path)
{
  if (elf_version(EV_CURRENT) == EV_NONE)
    return fail("libelf is too old");
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot open '" + path + "': " + std::strerror(errno), 2);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  bool is_elf = elf && elf_kind(elf) == ELF_K_ELF;
  bool dynamic = false;
  size_t phnum = 0;
  if (is_elf && elf_getphdrnum(elf, &phnum) == 0)
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_DYNAMIC)
        dynamic = true;
    }
  if (elf)
    elf_end(elf);
  close(fd);
  if (!is_elf)
    return fail("'" + path + "' is not an ELF file", 2);
  if (!dynamic)
    return fail("'" + path +
                    "' is statically linked: it cannot load the client library "
                    "(a static binary loads no shared library)",
                2);
  return {};
}

}  // namespace dc
