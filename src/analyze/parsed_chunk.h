// A piece of trace text (an inflated gzip member, or a block of a plain file) parsed into
// records on a worker thread, kept whole until the applying thread has handed its records to
// the accumulators in line order. The text may start or end in the middle of a line: its first
// and last pieces are joined with the neighbouring chunks by the applying thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/record.h"

namespace dc::analyze {

// Why a line was skipped; the names are the keys of the report's inputs.skipped.
enum class skip_reason : uint8_t { not_json, not_an_event, unknown_ph, negative_ts, negative_dur, truncated };
std::string_view skip_name(skip_reason r);

struct line_problem {
  uint64_t line = 0;  // 0-based index of the line within the chunk
  skip_reason reason = skip_reason::not_json;
  std::string detail;  // the message, without file and line
};

// Copies of the strings records keep (the parser's own buffer is reused line after line), in
// blocks that never move.
struct string_arena {
  static constexpr size_t block = 64 << 10;
  std::vector<std::unique_ptr<char[]>> blocks;
  size_t used = block;
  std::string_view keep(std::string_view s)
  {
    if (s.size() > block / 4) {
      blocks.insert(blocks.begin(), std::make_unique<char[]>(s.size()));
      std::copy(s.begin(), s.end(), blocks.front().get());
      return {blocks.front().get(), s.size()};
    }
    if (used + s.size() > block) {
      blocks.push_back(std::make_unique<char[]>(block));
      used = 0;
    }
    char* at = blocks.back().get() + used;
    std::copy(s.begin(), s.end(), at);
    used += s.size();
    return {at, s.size()};
  }
};

// Names (operations, layers, argument keys) copied once per chunk into its arena: the applying
// thread then reads a few hot copies instead of each line's text, which was last in another
// core's cache. Direct-mapped: a name that collides is copied again, which costs only bytes.
struct name_pool {
  std::array<std::string_view, 64> slots{};
  std::string_view intern(std::string_view s, string_arena& arena)
  {
    if (s.empty())
      return s;
    size_t slot =
        (s.size() * 31 + static_cast<unsigned char>(s.front()) * 7 + static_cast<unsigned char>(s.back())) %
        slots.size();
    std::string_view& at = slots[slot];
    if (!same_text(at, s))
      at = arena.keep(s);
    return at;
  }
};

struct parsed_chunk {
  std::string text;  // with room for simdjson's padding after size()
  std::vector<record> records;
  std::vector<uint64_t> record_lines;  // each record's 0-based line within the chunk
  std::vector<record_arg> args;
  std::vector<record_text> texts;
  std::vector<std::pair<uint32_t, uint32_t>> arg_ranges, text_ranges;  // per record: first, count
  string_arena arena;
  name_pool names;
  std::vector<line_problem> problems;
  uint64_t lines = 0;     // counted lines (not blank, not [ or ]), head and tail excluded
  uint64_t newlines = 0;  // '\n' in text
  std::string_view head;  // text before the first '\n' (whole text when there is none)
  std::string_view tail;  // text after the last '\n' (empty when text ends with one)
  int head_outcome = 0;   // what the head line gave alone: 0 blank, 1 record, 2 problem
};

}  // namespace dc::analyze
