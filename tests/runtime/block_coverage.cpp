#include "runtime/block_coverage.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <vector>

namespace dc::test {

std::string uncovered_blocks(const traced_run& run, const loop_fs& fs, const std::string& path)
{
  std::set<uint64_t> covered;
  for (const auto& e : complete_events(run.trace))
    if (e["cat"] == "BLOCK" && e["name"] == "read" && e["args"]["major"] == fs.device_major() &&
        e["args"]["minor"] == fs.device_minor()) {
      uint64_t at = e["args"]["sector"].get<uint64_t>() * 512, bytes = e["args"]["bytes"];
      for (uint64_t b = at / 4096; b < (at + bytes) / 4096; ++b) covered.insert(b);
    }
  constexpr uint32_t most = 8192;
  std::vector<char> buf(sizeof(fiemap) + most * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buf.data());
  map->fm_length = FIEMAP_MAX_OFFSET;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = most;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  bool mapped = fd >= 0 && ioctl(fd, FS_IOC_FIEMAP, map) == 0;
  if (fd >= 0)
    close(fd);
  if (!mapped)
    return "no FIEMAP of " + path;
  std::string out;
  uint64_t missing = 0, ranges = 0, first = 0, last = 0, first_logical = 0;
  auto end_range = [&] {
    if (last > first && ++ranges <= 8)
      out += " [" + std::to_string(first) + ", " + std::to_string(last) + ") at file offset " +
             std::to_string(first_logical);
  };
  for (uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
    const fiemap_extent& x = map->fm_extents[i];
    if (x.fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_UNKNOWN))
      continue;  // preallocated (xfs fills the holes so), read as zeros: never from the device
    for (uint64_t b = x.fe_physical / 4096; b < (x.fe_physical + x.fe_length) / 4096; ++b) {
      if (covered.contains(b))
        continue;
      ++missing;
      if (b != last) {
        end_range();
        first = b;
        first_logical = x.fe_logical + (b - x.fe_physical / 4096) * 4096;
      }
      last = b + 1;
    }
  }
  end_range();
  out = std::to_string(missing) + " of the file's 4 KiB device blocks (device " +
        std::to_string(fs.device_major()) + ":" + std::to_string(fs.device_minor()) +
        ") read by no traced request, in " + std::to_string(ranges) + " ranges:" + out;
  if (FILE* p = popen("bpftool prog show -j 2>/dev/null", "r")) {
    std::string text;
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, p)) > 0;) text.append(chunk, n);
    pclose(p);
    auto progs = nlohmann::json::parse(text, nullptr, false);
    for (const auto& prog : progs.is_array() ? progs : nlohmann::json::array())
      if (prog.value("name", "").starts_with("dc_block"))
        out += "; " + prog.value("name", "") + " recursion_misses " +
               std::to_string(prog.value("recursion_misses", 0ull));
  }
  return out;
}

}  // namespace dc::test
