#include "runtime/loop_fs.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runtime/runtime_helpers.h"

namespace dc::test {

namespace {

void must(const std::string& command)
{
  if (run_shell(command) != 0)
    throw std::runtime_error("failed: " + command);
}

}  // namespace

loop_fs::loop_fs(const std::string& dir, const std::string& fs_type, uint64_t size_mib)
    : image_(dir + "/" + fs_type + ".img"), mount_(dir + "/mnt-" + fs_type)
{
  must("truncate -s " + std::to_string(size_mib) + "M " + shell_quote(image_));
  std::string dev_file = dir + "/" + fs_type + ".dev";
  // Direct I/O on the image: the loop device's requests reach the disk below as requests of
  // their own (a stacked device, as in production), not through the host's page cache.
  must("losetup --direct-io=on -f --show " + shell_quote(image_) + " > " + shell_quote(dev_file));
  device_ = read_file(dev_file);
  while (!device_.empty() && device_.back() == '\n') device_.pop_back();
  if (fs_type == "raw")
    return;
  must("mkfs." + fs_type + " -q " + (fs_type == "xfs" ? "-f " : "") + shell_quote(device_) +
       " >/dev/null 2>&1");
  must("mkdir -p " + shell_quote(mount_) + " && mount " + shell_quote(device_) + " " + shell_quote(mount_));
}

loop_fs::~loop_fs()
{
  run_shell("umount " + shell_quote(mount_) + " 2>/dev/null");
  run_shell("losetup -d " + shell_quote(device_) + " 2>/dev/null");
}

void loop_fs::set_scheduler(const std::string& name) const
{
  must("echo " + name + " > /sys/block/" + device_.substr(device_.rfind('/') + 1) + "/queue/scheduler");
}

disk_counters loop_fs::counters() const
{
  std::string name = device_.substr(device_.rfind('/') + 1);
  std::ifstream in("/proc/diskstats");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string major, minor, dev;
    uint64_t v[10] = {};
    f >> major >> minor >> dev;
    for (auto& x : v) f >> x;
    if (dev == name)
      return {v[2], v[6], v[0]};  // sectors read, sectors written, reads completed
  }
  throw std::runtime_error("no /proc/diskstats line for " + device_);
}

namespace {
dev_t device_number(const std::string& device)
{
  struct stat st {};
  if (stat(device.c_str(), &st) != 0)
    throw std::runtime_error("cannot stat " + device);
  return st.st_rdev;
}
}  // namespace

unsigned loop_fs::device_major() const
{
  return ::major(device_number(device_));
}
unsigned loop_fs::device_minor() const
{
  return ::minor(device_number(device_));
}

void loop_fs::drop_caches() const
{
  must("sync && echo 3 > /proc/sys/vm/drop_caches");
}

}  // namespace dc::test
