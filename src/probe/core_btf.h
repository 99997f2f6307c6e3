// A minimal BTF for CO-RE, cached per kernel and BPF object. libbpf relocates every CO-RE access
// by searching the kernel's BTF (~127,000 types) once per local type; against a BTF holding only
// the types the object uses (~150, made once by `bpftool gen min_core_btf`) that search is a
// few microseconds (docs/performance.md, "A minimal BTF for CO-RE"). Casts need the kernel's own
// type ids, which CO-RE against that file cannot give: they are read from the kernel's BTF once,
// when the cache is made, and kept beside it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"

extern "C" {
#include "cast_types.h"
}

namespace dc {

struct core_btf {
  std::string path;                                // for bpf_object_open_opts.btf_custom_path
  std::array<uint32_t, DC_CAST_COUNT> cast_ids{};  // the kernel's ids of bpf/cast_types.h's types
  bool made = false;                               // made by this call (none was cached)
};

// The cached minimal BTF of `object` (the BPF object's ELF bytes) for the running kernel, made
// in `dir` first when missing; `key` is core_btf_key(object), computed once by the caller (the
// kept object's key starts with it too). The error says why there is none (no bpftool, `dir`
// not the owner's alone, ...); loading then relocates against the kernel's whole BTF, only slower.
result<core_btf> cached_core_btf(std::span<const std::byte> object, const std::string& key,
                                 const std::string& dir);

// Cache files (this one's and probe/refusal_memory.h's) are used only when they are no link and
// only this user can change them (nor the directory holding them).
result<> check_private(const std::string& path, bool directory);
// A temporary file in `dir` (named after `stem`) holding `bytes`, to be renamed into place; its
// path.
result<std::string> write_temp(const std::string& dir, std::string_view stem,
                               std::span<const std::byte> bytes);

// The name of bpf/cast_types.h's type `i` (< DC_CAST_COUNT), as the kernel's BTF spells it.
const char* cast_type_name(size_t i);

// The cache files' name for `object` on this kernel: a hash of the object, the kernel's release
// and version, and its BTF's size and last 4 KiB. Empty when the kernel's BTF cannot be read.
std::string core_btf_key(std::span<const std::byte> object);

}  // namespace dc
