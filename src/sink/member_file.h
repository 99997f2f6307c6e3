// One gzip member's way into a trace file (sink/gzip_members.h): compressed from its text, with
// its lines' lengths for the index, then written whole after the members before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sink/gzip_members.h"

namespace dc {

class member_compressor;
class trace_index_builder;

// One member made from text: its compressed bytes (the first `size` of `bytes`) and its span
// but for where it lies in the file, which only the member before it tells; with an index, the
// length of each of its lines.
struct compressed_member {
  std::string bytes;
  gzip_member_span span;
  std::vector<uint32_t> line_lengths;
};

// Compresses `text` into `into` (its span but for where it lies in the file); with `lines`, the
// length of each line too.
result<> compress_member(member_compressor& c, const std::string& path, const std::string& text,
                         compressed_member& into, bool lines);

// Writes a compressed member after the last of spans and appends its span (and its lines to the
// index, if there is one). A member that cannot be written whole is cut off again: its written
// part would be a corrupt tail.
result<> write_member(int fd, const std::string& path, compressed_member& member,
                      std::vector<gzip_member_span>& spans, trace_index_builder* index);

}  // namespace dc
