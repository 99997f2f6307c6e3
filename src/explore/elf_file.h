// An ELF file opened with libelf, for the explorer's readers (symbols, USDT notes): opening
// with one clear error, and virtual address -> file offset through the file's sections.
#pragma once

#include <libelf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace dc {

struct section_span {
  uint64_t addr, size, offset;
};

class elf_file {
 public:
  elf_file() = default;
  elf_file(const elf_file&) = delete;
  elf_file& operator=(const elf_file&) = delete;
  ~elf_file();
  // Errors name the file and the problem (cannot open, not ELF).
  result<> open(const std::string& path);
  Elf* elf() const { return elf_; }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// The sections of code (PROGBITS, executable): where a function's address maps to the file.
std::vector<section_span> executable_sections(Elf* elf);

// The file offset of a virtual address: through the section that holds it (as libbpf does).
bool file_offset_of(const std::vector<section_span>& sections, uint64_t addr, uint64_t* offset);

}  // namespace dc
