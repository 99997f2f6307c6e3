// A filesystem of its own for a test: an image file on a loop device, formatted and mounted,
// so that nothing else touches the device and /proc/diskstats tells exactly what hit it.
#pragma once

#include <cstdint>
#include <string>

namespace dc::test {

struct disk_counters {
  uint64_t sectors_read = 0;
  uint64_t sectors_written = 0;
  uint64_t reads = 0;  // read requests completed
};

class loop_fs {
 public:
  // fs_type: "ext4" or "xfs", or "raw": the device alone, neither formatted nor mounted.
  // Throws when a step fails (the test then fails).
  loop_fs(const std::string& dir, const std::string& fs_type, uint64_t size_mib = 512);
  ~loop_fs();
  loop_fs(const loop_fs&) = delete;
  loop_fs& operator=(const loop_fs&) = delete;

  const std::string& mount_point() const { return mount_; }
  const std::string& device() const { return device_; }
  disk_counters counters() const;  // this device's line of /proc/diskstats
  unsigned device_major() const;
  unsigned device_minor() const;
  void drop_caches() const;
  void set_scheduler(const std::string& name) const;  // the device's I/O scheduler, e.g. mq-deadline

 private:
  std::string image_, device_, mount_;
};

}  // namespace dc::test
