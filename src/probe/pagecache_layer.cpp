// The page-cache layer's loader (bpf/pagecache.bpf.c) and the reader of its in-kernel counts.
#include <bpf/bpf.h>

#include "pagecache.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

// Must match bpf/pagecache.bpf.c.
struct pagecache_key {
  uint32_t tgid;
  uint32_t dev;
  uint64_t ino;
};
struct pagecache_counts {
  uint64_t added;
  uint64_t dirtied;
  uint64_t written_back;
  uint64_t evicted;
};

class pagecache_layer final
    : public skeleton_layer<pagecache_bpf, pagecache_bpf__open, pagecache_bpf__load, pagecache_bpf__destroy> {
 public:
  std::string_view name() const override { return "pagecache"; }
  std::string_view category() const override { return "PAGECACHE"; }

  std::vector<counter_sample> counters() override
  {
    std::vector<counter_sample> out;
    int fd = map_fd_;
    pagecache_key key{}, next{};
    pagecache_key* prev = nullptr;
    while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
      pagecache_counts c{};
      if (bpf_map_lookup_elem(fd, &next, &c) == 0) {
        out.push_back({category(), "added", next.tgid, next.dev, next.ino, c.added});
        out.push_back({category(), "dirtied", next.tgid, next.dev, next.ino, c.dirtied});
        out.push_back({category(), "written_back", next.tgid, next.dev, next.ino, c.written_back});
        out.push_back({category(), "evicted", next.tgid, next.dev, next.ino, c.evicted});
      }
      key = next;
      prev = &key;
    }
    return out;
  }

 protected:
  result<> after_load(pagecache_bpf& skel) override
  {
    map_fd_ = bpf_map__fd(skel.maps.dc_pagecache);
    return {};
  }

 private:
  int map_fd_ = -1;
};

}  // namespace

std::unique_ptr<layer> make_pagecache_layer()
{
  return std::make_unique<pagecache_layer>();
}

}  // namespace dc
