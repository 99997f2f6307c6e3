// The page-cache layer's loader (bpf/pagecache.bpf.c) and the reader of its in-kernel counts.
#include <cstring>

#include <bpf/bpf.h>

#include "core/bpf_map_keys.h"
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
    for_each_map_key<dc_pagecache_key>(map_fd_, [&](const dc_pagecache_key& key) {
      dc_pagecache_counts c{};
      if (bpf_map_lookup_elem(map_fd_, &key, &c) == 0)
        out.emplace_back(key, c);
    });
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
