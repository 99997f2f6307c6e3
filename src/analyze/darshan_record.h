// One file's Darshan-style counters, as one process or several processes together saw it: the
// POSIX module's, and those of STDIO, MPIIO, H5F and H5D (analyze/module_counters.h) in the same
// record type. Integer counters keep Darshan's names; times are kept in integer microseconds
// (absolute epoch for timestamps) so merging stays exact, and are turned into Darshan's seconds
// only in the report. Each module reports the counters of its layout (module_layout).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace dc::analyze {

enum counter : uint8_t {
  c_opens,
  c_dups,
  c_reads,
  c_writes,
  c_seeks,
  c_stats,
  c_mmaps,
  c_fsyncs,
  c_fdsyncs,
  c_bytes_read,
  c_bytes_written,
  c_max_byte_read,
  c_max_byte_written,
  c_consec_reads,
  c_consec_writes,
  c_seq_reads,
  c_seq_writes,
  c_rw_switches,
  c_size_read_0,  // ten bins: 0_100 ... 1G_PLUS
  c_size_write_0 = c_size_read_0 + 10,
  c_max_read_time_size = c_size_write_0 + 10,
  c_max_write_time_size,
  // The other modules' own counters (the shared ones above: OPENS, READS, WRITES, SEEKS,
  // BYTES_*, MAX_BYTE_*, RW_SWITCHES; MPIIO_SYNCS is c_fsyncs).
  c_fdopens,
  c_flushes,
  c_indep_opens,
  c_coll_opens,
  c_coll_reads,
  c_coll_writes,
  c_split_reads,
  c_split_writes,
  c_nb_reads,
  c_nb_writes,
  c_views,
  c_mode,       // merged as the largest
  c_use_mpiio,  // flags: merged as the largest
  c_use_mpiio_collective,
  c_use_deprecated,
  // Not Darshan's (reported beside the counters): MPI-IO element counts (args.count: the
  // datatype's size is not in the trace), and the bytes of the POSIX calls made inside the
  // module's calls on the file.
  c_elements_read,
  c_elements_written,
  c_posix_bytes_read,
  c_posix_bytes_written,
  c_count
};

// POSIX names without the module prefix ("READS"); the report adds "POSIX_".
std::string_view counter_name(counter c);

// Darshan's access-size bin (0..9) of a size: 0_100, 100_1K, 1K_10K, 10K_100K, 100K_1M, 1M_4M,
// 4M_10M, 10M_100M, 100M_1G, 1G_PLUS (upper bounds inclusive of 100, 1024, ... as Darshan's).
int size_bin(int64_t size);

enum time_counter : uint8_t {
  t_open_start,  // timestamps: absolute epoch us, 0 = never
  t_read_start,
  t_write_start,
  t_close_start,
  t_open_end,
  t_read_end,
  t_write_end,
  t_close_end,
  t_read_time,  // durations, us
  t_write_time,
  t_meta_time,
  t_max_read_time,
  t_max_write_time,
  t_count
};

std::string_view time_counter_name(time_counter t);  // "F_OPEN_START_TIMESTAMP"

struct darshan_record {
  std::array<int64_t, c_count> c{};
  std::array<int64_t, t_count> t{};
  // Every access size and stride with its count (Darshan keeps the four most common of up to
  // 32 it tracks; the full table keeps the top four exact and merging exact). Zero values are
  // never kept, as in Darshan.
  std::map<int64_t, int64_t> access_sizes;
  std::map<int64_t, int64_t> strides;
  // Not Darshan's: read/write calls of fewer than 4 KiB (the small-I/O rule), and calls whose
  // file offset the trace could not establish (their SEQ/CONSEC/STRIDE/MAX_BYTE are not counted).
  int64_t ops_under_4k = 0;
  int64_t unknown_offset_ops = 0;
  int64_t out_of_order_ops = 0;  // replayed after a later call of the process (see process_stream)

  // Darshan's reduction of a shared file's records: sums, max of MAX_BYTE, earliest non-zero
  // start and latest end timestamps, summed times, the slowest call with its size.
  void merge(const darshan_record& o);

  nlohmann::json partial() const;
  static dc::result<darshan_record> from_partial(const nlohmann::json& j);

  // {"counters": {"POSIX_OPENS": ..}, "fcounters": {"POSIX_F_READ_TIME": ..}} with the
  // counters of the module's layout; timestamps become seconds after start_us, durations
  // seconds.
  nlohmann::json counters_json(std::string_view module, int64_t start_us) const;
};

// What a module reports: its counters with Darshan's names (prefix added), whether it has the
// four most common access sizes and strides, and its time counters.
struct module_layout {
  std::string_view module;  // "POSIX", "STDIO", "MPIIO", "H5F", "H5D"
  std::vector<std::pair<counter, std::string_view>> counters;
  bool access_and_stride = false;
  std::vector<time_counter> times;
};
const module_layout& layout_of(std::string_view module);

// The time of [tm1, tm2] not already counted since `last`: intervals are taken in start order,
// so this sums their union (Darshan's DARSHAN_TIMER_INC_NO_OVERLAP, clamped at zero).
inline void add_time(int64_t& timer, int64_t tm1, int64_t tm2, int64_t& last)
{
  int64_t from = std::max(tm1, last);
  if (tm2 > from)
    timer += tm2 - from;
  last = std::max(last, tm2);
}

// A call's start and end into a record's first-start and last-end timestamps.
inline void stamp(darshan_record& r, time_counter start, time_counter end, int64_t tm1, int64_t tm2)
{
  if (r.t[start] == 0 || r.t[start] > tm1)
    r.t[start] = tm1;
  r.t[end] = std::max(r.t[end], tm2);
}

// The four most common non-zero values, most frequent first, larger value first on ties.
std::array<std::pair<int64_t, int64_t>, 4> top_four(const std::map<int64_t, int64_t>& counts);

}  // namespace dc::analyze
