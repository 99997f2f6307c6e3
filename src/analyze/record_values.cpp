#include "analyze/record_values.h"

#include <charconv>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/category.h"
#include "core/function_table.h"
#include "core/syscall_table.h"

namespace dc::analyze {

namespace {

bool ends_with_read_or_write(std::string_view name)
{
  return name.ends_with("_read") || name.ends_with("_write");
}

}  // namespace

io_dir posix_direction(std::string_view name)
{
  static const std::unordered_map<std::string_view, io_dir> dirs = [] {
    std::unordered_map<std::string_view, io_dir> m;
    for (const syscall_info& s : traced_syscalls())
      if (s.dir != io_dir::none)
        m.emplace(s.name, s.dir);
    // libc names DFTracer intercepts that are not kernel names.
    for (std::string_view n : {"pread", "preadv64", "preadv64v2"}) m.emplace(n, io_dir::read);
    for (std::string_view n : {"pwrite", "pwritev64", "pwritev64v2"}) m.emplace(n, io_dir::write);
    return m;
  }();
  // Lines of one operation come in runs: the last name read is asked again far more often than
  // any other, and comparing it is cheaper than hashing.
  thread_local char last[24];
  thread_local size_t last_size = 0;
  thread_local bool cached = false;
  thread_local io_dir last_dir = io_dir::none;
  if (cached && same_text(name, std::string_view(last, last_size)))
    return last_dir;
  auto it = dirs.find(name);
  io_dir dir = it == dirs.end() ? io_dir::none : it->second;
  if (name.size() <= sizeof(last)) {
    if (!name.empty())  // an empty view may have no data at all (memcpy's source must not be null)
      std::memcpy(last, name.data(), name.size());
    last_size = name.size();
    last_dir = dir;
    cached = true;
  }
  return dir;
}

bool posix_copies(std::string_view name)
{
  static const std::unordered_set<std::string_view> copies = [] {
    std::unordered_set<std::string_view> c;
    for (const syscall_info& s : traced_syscalls())
      if (moves_between_files(s))
        c.insert(s.name);
    return c;
  }();
  return copies.contains(name);
}

uint64_t defined_hash(const record& r)
{
  std::string_view text = r.text("value");
  if (!text.empty()) {
    if (text.starts_with("0x"))
      text.remove_prefix(2);
    uint64_t h = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h, 16);
    return ec == std::errc() && end == text.data() + text.size() ? h : 0;
  }
  return static_cast<uint64_t>(r.arg("value").value_or(0));
}

uint64_t call_count(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("count").value_or(0)));
  return 1;
}

uint64_t call_time_us(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("time_us").value_or(0)));
  return static_cast<uint64_t>(r.dur_us);
}

uint64_t io_bytes(const record& r)
{
  if (r.ph == phase::counter)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("bytes").value_or(0)));
  if (r.ph != phase::complete)
    return 0;
  if (r.cat == category::block)
    return static_cast<uint64_t>(std::max<int64_t>(0, r.arg("bytes").value_or(0)));
  int64_t ret = r.arg("ret").value_or(0);
  if (ret <= 0)
    return 0;
  if (r.cat == category::posix)
    return posix_direction(r.name) != io_dir::none ? static_cast<uint64_t>(ret) : 0;
  if (r.cat == category::fs)
    return ends_with_read_or_write(r.name) ? static_cast<uint64_t>(ret) : 0;
  if (r.cat == category::net)
    return r.name == "send" || r.name == "recv" ? static_cast<uint64_t>(ret) : 0;
  // User-space layers: fread/fwrite return items; bytes = items × item size.
  if (const function_info* f = find_function(r.name); f && f->item_size_arg >= 0)
    return static_cast<uint64_t>(ret) *
           static_cast<uint64_t>(std::max<int64_t>(0, r.arg("size").value_or(0)));
  return 0;
}

}  // namespace dc::analyze
