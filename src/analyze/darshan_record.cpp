#include "analyze/darshan_record.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dc::analyze {

namespace {

constexpr std::string_view bin_names[10] = {"0_100", "100_1K", "1K_10K",   "10K_100K", "100K_1M",
                                            "1M_4M", "4M_10M", "10M_100M", "100M_1G",  "1G_PLUS"};

// Names of the bins in both directions, built once: "SIZE_READ_0_100", ...
const std::array<std::string, 20>& size_names()
{
  static const std::array<std::string, 20> names = [] {
    std::array<std::string, 20> n;
    for (int i = 0; i < 10; ++i) {
      n[static_cast<size_t>(i)] = "SIZE_READ_" + std::string(bin_names[i]);
      n[static_cast<size_t>(i + 10)] = "SIZE_WRITE_" + std::string(bin_names[i]);
    }
    return n;
  }();
  return names;
}

void add_counts(std::map<int64_t, int64_t>& into, const std::map<int64_t, int64_t>& from)
{
  for (const auto& [v, n] : from) into[v] += n;
}

nlohmann::json counts_json(const std::map<int64_t, int64_t>& m)
{
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [v, n] : m) j.push_back({v, n});
  return j;
}

dc::result<std::map<int64_t, int64_t>> counts_from(const nlohmann::json& j)
{
  std::map<int64_t, int64_t> m;
  if (!j.is_array())
    return dc::fail("partial: a value table is not an array");
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer())
      return dc::fail("partial: a value table entry is not [value, count]");
    m[e[0].get<int64_t>()] += e[1].get<int64_t>();
  }
  return m;
}

}  // namespace

std::string_view counter_name(counter c)
{
  static constexpr std::string_view fixed[] = {"OPENS",
                                               "DUPS",
                                               "READS",
                                               "WRITES",
                                               "SEEKS",
                                               "STATS",
                                               "MMAPS",
                                               "FSYNCS",
                                               "FDSYNCS",
                                               "BYTES_READ",
                                               "BYTES_WRITTEN",
                                               "MAX_BYTE_READ",
                                               "MAX_BYTE_WRITTEN",
                                               "CONSEC_READS",
                                               "CONSEC_WRITES",
                                               "SEQ_READS",
                                               "SEQ_WRITES",
                                               "RW_SWITCHES"};
  if (c < c_size_read_0)
    return fixed[c];
  if (c < c_max_read_time_size)
    return size_names()[c - c_size_read_0];
  return c == c_max_read_time_size ? "MAX_READ_TIME_SIZE" : "MAX_WRITE_TIME_SIZE";
}

std::string_view time_counter_name(time_counter t)
{
  static constexpr std::string_view names[] = {"F_OPEN_START_TIMESTAMP",
                                               "F_READ_START_TIMESTAMP",
                                               "F_WRITE_START_TIMESTAMP",
                                               "F_CLOSE_START_TIMESTAMP",
                                               "F_OPEN_END_TIMESTAMP",
                                               "F_READ_END_TIMESTAMP",
                                               "F_WRITE_END_TIMESTAMP",
                                               "F_CLOSE_END_TIMESTAMP",
                                               "F_READ_TIME",
                                               "F_WRITE_TIME",
                                               "F_META_TIME",
                                               "F_MAX_READ_TIME",
                                               "F_MAX_WRITE_TIME"};
  return names[t];
}

int size_bin(int64_t size)
{
  static constexpr int64_t upper[] = {100,     1024,     10240,     102400,    1048576,
                                      4194304, 10485760, 104857600, 1073741824};
  for (int i = 0; i < 9; ++i)
    if (size <= upper[i])
      return i;
  return 9;
}

std::array<std::pair<int64_t, int64_t>, 4> top_four(const std::map<int64_t, int64_t>& counts)
{
  std::vector<std::pair<int64_t, int64_t>> all;  // (count, value)
  for (const auto& [v, n] : counts)
    if (v != 0 && n > 0)
      all.emplace_back(n, v);
  std::sort(all.rbegin(), all.rend());
  std::array<std::pair<int64_t, int64_t>, 4> top{};  // (value, count)
  for (size_t i = 0; i < std::min<size_t>(4, all.size()); ++i) top[i] = {all[i].second, all[i].first};
  return top;
}

const module_layout& layout_of(std::string_view module)
{
  static const std::vector<module_layout> layouts = [] {
    std::vector<time_counter> all_times;
    for (int i = 0; i < t_count; ++i) all_times.push_back(static_cast<time_counter>(i));
    module_layout posix{"POSIX", {}, true, all_times};
    for (int i = 0; i <= c_max_write_time_size; ++i)
      posix.counters.emplace_back(static_cast<counter>(i), counter_name(static_cast<counter>(i)));
    // Darshan 3.5.0's names (darshan-*-log-format.h); counters the trace cannot give (sizes of
    // MPI datatypes and HDF5 selections, hints, ranks' extremes) are not listed.
    module_layout stdio{"STDIO",
                        {{c_opens, "OPENS"},
                         {c_fdopens, "FDOPENS"},
                         {c_reads, "READS"},
                         {c_writes, "WRITES"},
                         {c_seeks, "SEEKS"},
                         {c_flushes, "FLUSHES"},
                         {c_bytes_written, "BYTES_WRITTEN"},
                         {c_bytes_read, "BYTES_READ"},
                         {c_max_byte_read, "MAX_BYTE_READ"},
                         {c_max_byte_written, "MAX_BYTE_WRITTEN"}},
                        false,
                        {t_meta_time, t_write_time, t_read_time, t_open_start, t_close_start, t_write_start,
                         t_read_start, t_open_end, t_close_end, t_write_end, t_read_end}};
    module_layout mpiio{"MPIIO",
                        {{c_indep_opens, "INDEP_OPENS"},
                         {c_coll_opens, "COLL_OPENS"},
                         {c_reads, "INDEP_READS"},
                         {c_writes, "INDEP_WRITES"},
                         {c_coll_reads, "COLL_READS"},
                         {c_coll_writes, "COLL_WRITES"},
                         {c_split_reads, "SPLIT_READS"},
                         {c_split_writes, "SPLIT_WRITES"},
                         {c_nb_reads, "NB_READS"},
                         {c_nb_writes, "NB_WRITES"},
                         {c_fsyncs, "SYNCS"},
                         {c_views, "VIEWS"},
                         {c_mode, "MODE"},
                         {c_rw_switches, "RW_SWITCHES"}},
                        false,
                        all_times};
    module_layout h5f{"H5F",
                      {{c_opens, "OPENS"}, {c_flushes, "FLUSHES"}, {c_use_mpiio, "USE_MPIIO"}},
                      false,
                      {t_open_start, t_close_start, t_open_end, t_close_end, t_meta_time}};
    module_layout h5d{"H5D",
                      {{c_opens, "OPENS"},
                       {c_reads, "READS"},
                       {c_writes, "WRITES"},
                       {c_flushes, "FLUSHES"},
                       {c_rw_switches, "RW_SWITCHES"},
                       {c_use_mpiio_collective, "USE_MPIIO_COLLECTIVE"},
                       {c_use_deprecated, "USE_DEPRECATED"}},
                      false,
                      all_times};
    return std::vector<module_layout>{posix, stdio, mpiio, h5f, h5d};
  }();
  for (const module_layout& l : layouts)
    if (l.module == module)
      return l;
  return layouts.front();
}

void darshan_record::merge(const darshan_record& o)
{
  for (int i = 0; i < c_count; ++i) {
    if (i == c_max_byte_read || i == c_max_byte_written || i == c_mode || i == c_use_mpiio ||
        i == c_use_mpiio_collective || i == c_use_deprecated)
      c[i] = std::max(c[i], o.c[i]);
    else if (i != c_max_read_time_size && i != c_max_write_time_size)
      c[i] += o.c[i];
  }
  for (int i = t_open_start; i <= t_close_start; ++i)
    if (o.t[i] != 0 && (t[i] == 0 || o.t[i] < t[i]))
      t[i] = o.t[i];
  for (int i = t_open_end; i <= t_close_end; ++i) t[i] = std::max(t[i], o.t[i]);
  for (int i = t_read_time; i <= t_meta_time; ++i) t[i] += o.t[i];
  if (o.t[t_max_read_time] > t[t_max_read_time]) {
    t[t_max_read_time] = o.t[t_max_read_time];
    c[c_max_read_time_size] = o.c[c_max_read_time_size];
  }
  if (o.t[t_max_write_time] > t[t_max_write_time]) {
    t[t_max_write_time] = o.t[t_max_write_time];
    c[c_max_write_time_size] = o.c[c_max_write_time_size];
  }
  add_counts(access_sizes, o.access_sizes);
  add_counts(strides, o.strides);
  ops_under_4k += o.ops_under_4k;
  unknown_offset_ops += o.unknown_offset_ops;
  out_of_order_ops += o.out_of_order_ops;
}

nlohmann::json darshan_record::partial() const
{
  return {{"c", c},
          {"t", t},
          {"access", counts_json(access_sizes)},
          {"stride", counts_json(strides)},
          {"small", ops_under_4k},
          {"unknown_offset", unknown_offset_ops},
          {"out_of_order", out_of_order_ops}};
}

dc::result<darshan_record> darshan_record::from_partial(const nlohmann::json& j)
{
  darshan_record r;
  if (!j.is_object() || !j.contains("c") || !j["c"].is_array() || j["c"].size() != c_count ||
      !j.contains("t") || !j["t"].is_array() || j["t"].size() != t_count)
    return dc::fail("partial: a file record lacks its counters");
  for (size_t i = 0; i < c_count; ++i) {
    if (!j["c"][i].is_number_integer())
      return dc::fail("partial: a counter is not an integer");
    r.c[i] = j["c"][i].get<int64_t>();
  }
  for (size_t i = 0; i < t_count; ++i) {
    if (!j["t"][i].is_number_integer())
      return dc::fail("partial: a time counter is not an integer");
    r.t[i] = j["t"][i].get<int64_t>();
  }
  auto access = counts_from(j.value("access", nlohmann::json::array()));
  auto stride = counts_from(j.value("stride", nlohmann::json::array()));
  if (!access)
    return std::unexpected(access.error());
  if (!stride)
    return std::unexpected(stride.error());
  r.access_sizes = std::move(*access);
  r.strides = std::move(*stride);
  r.ops_under_4k = j.value("small", int64_t{0});
  r.unknown_offset_ops = j.value("unknown_offset", int64_t{0});
  r.out_of_order_ops = j.value("out_of_order", int64_t{0});
  return r;
}

nlohmann::json darshan_record::counters_json(std::string_view module, int64_t start_us) const
{
  const module_layout& layout = layout_of(module);
  std::string prefix = std::string(layout.module) + "_";
  nlohmann::json counters = nlohmann::json::object(), fcounters = nlohmann::json::object();
  for (const auto& [i, name] : layout.counters) counters[prefix + std::string(name)] = c[i];
  auto put_top = [&](const std::map<int64_t, int64_t>& m, std::string_view kind,
                     std::string_view value_name) {
    auto top = top_four(m);
    for (size_t i = 0; i < 4; ++i) {
      std::string n = prefix + std::string(kind) + std::to_string(i + 1) + "_";
      counters[n + std::string(value_name)] = top[i].first;
      counters[n + "COUNT"] = top[i].second;
    }
  };
  if (layout.access_and_stride) {
    put_top(strides, "STRIDE", "STRIDE");
    put_top(access_sizes, "ACCESS", "ACCESS");
  }
  for (time_counter i : layout.times) {
    double v;
    if (i <= t_close_end)
      v = t[i] == 0 ? 0.0 : static_cast<double>(t[i] - start_us) / 1e6;
    else
      v = static_cast<double>(t[i]) / 1e6;
    fcounters[prefix + std::string(time_counter_name(i))] = v;
  }
  return {{"counters", std::move(counters)}, {"fcounters", std::move(fcounters)}};
}

}  // namespace dc::analyze
