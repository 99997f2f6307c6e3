// The explorer's view of a binary: the functions its ELF symbol tables (.dynsym and .symtab)
// define, with the file offsets uprobes attach at. Read with libelf.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace dc {

struct elf_function {
  std::string name;
  uint64_t address = 0;      // st_value
  uint64_t size = 0;         // st_size
  uint64_t file_offset = 0;  // where a uprobe on it attaches
};

// Names a caller wants; an empty one wants every name.
using name_filter = std::function<bool(std::string_view)>;

// Every defined function of the binary whose name `wanted` keeps, sorted by name. Aliases
// (fwrite and _IO_fwrite, MPI_X and PMPI_X) are separate entries with one address: a prober
// attaches once per address. The filter runs before anything is kept: a library's thousands of
// functions are not copied to find the few a probe entry names (each copy is heap, and a fresh
// page costs 12-20 us in some guests: docs/performance.md, session 34). Errors name the file
// and the problem (not found, not ELF, no symbol tables).
result<std::vector<elf_function>> list_functions(const std::string& path, const name_filter& wanted = {});

// The file offset of the program's entry point (e_entry), where a uprobe attaches; stripped
// programs have one too.
result<uint64_t> entry_point_offset(const std::string& path);

// A library name ("libc.so.6") as the dynamic loader would find it in the standard
// directories, or a path as given; an error if neither exists.
result<std::string> resolve_binary(std::string_view name_or_path);

}  // namespace dc
