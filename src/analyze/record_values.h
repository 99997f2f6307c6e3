// Readings of a record shared by every section, so the rules live in one place.
#pragma once

#include <cstdint>
#include <string_view>

#include "analyze/record.h"
#include "core/event.h"

namespace dc::analyze {

// The hash a FH/HH/SH metadata line defines: args.value, a number, or a string in hexadecimal.
uint64_t defined_hash(const record& r);

// A span of a traced layer ("ph":"X"), not DFTracer's own start/end spans.
inline bool is_span(const record& r)
{
  return r.ph == phase::complete && r.cat != "dftracer";
}
// A profile-mode counter sample standing for calls (args.count, time_us, bytes); page-cache
// counter samples (hits, misses, ...) are not calls.
inline bool is_call_sample(const record& r)
{
  return r.ph == phase::counter && r.arg("count").has_value();
}
// Calls of a layer: what the layer breakdown counts.
inline bool is_call(const record& r)
{
  return is_span(r) || is_call_sample(r);
}

// Which way a POSIX call (ours, or DFTracer's libc wrapper) moves data: the syscall table's
// direction, plus DFTracer's libc names that are not kernel names.
io_dir posix_direction(std::string_view name);
// Whether a POSIX call moves data between two files (copy_file_range, sendfile, splice, tee): its
// bytes were read from its fhash (args.fd) and written to its args.fhash2 (args.out_fd).
bool posix_copies(std::string_view name);

// Calls the event stands for: a profile-mode counter sample's args.count, else 1.
uint64_t call_count(const record& r);
// Time spent in them (µs): a counter sample's args.time_us, else dur.
uint64_t call_time_us(const record& r);
// Bytes moved, by the rule of docs/analyze.md ("What is counted"); 0 for calls that move none.
uint64_t io_bytes(const record& r);

// The readings above that the run, the layer breakdown and the timeline each take of every
// record: read once per record (analysis::add) and handed to the three.
struct call_facts {
  bool call = false;     // is_call
  uint64_t count = 0;    // call_count
  uint64_t bytes = 0;    // io_bytes
  uint64_t time_us = 0;  // call_time_us
};
inline call_facts facts_of(const record& r)
{
  return {is_call(r), call_count(r), io_bytes(r), call_time_us(r)};
}

}  // namespace dc::analyze
