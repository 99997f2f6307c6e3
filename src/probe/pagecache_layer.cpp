// The page-cache layer's loader (bpf/pagecache.bpf.c) and the reader of its in-kernel counts.
#include <cstring>

#include <bpf/bpf.h>

#include "core/category.h"
#include "datacrumbs.skel.h"
#include "probe/layers.h"

namespace dc {

namespace {

class pagecache_layer final : public layer {
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
  result<> after_load(datacrumbs_bpf& skel) override
  {
    map_fd_ = bpf_map__fd(skel.maps.dc_pagecache_files);
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
