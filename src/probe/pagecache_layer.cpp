// The page-cache layer's loader (bpf/pagecache.bpf.c) and the reader of its in-kernel counts.
#include <bpf/bpf.h>

#include "core/category.h"
#include "pagecache.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

class pagecache_layer final
    : public skeleton_layer<pagecache_bpf, pagecache_bpf__open, pagecache_bpf__load, pagecache_bpf__destroy> {
 public:
  std::string_view name() const override { return "pagecache"; }
  std::string_view category() const override { return category::pagecache; }

  std::vector<page_cache_entry> page_cache_counts() override
  {
    std::vector<page_cache_entry> out;
    int fd = map_fd_;
    dc_pagecache_key key{}, next{};
    dc_pagecache_key* prev = nullptr;
    while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
      dc_pagecache_counts c{};
      if (bpf_map_lookup_elem(fd, &next, &c) == 0)
        out.emplace_back(next, c);
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
