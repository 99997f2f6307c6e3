// The block layer's loader (bpf/block.bpf.c): nothing to configure beyond the shared maps.
#include "block.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

class block_layer final
    : public skeleton_layer<block_bpf, block_bpf__open, block_bpf__load, block_bpf__destroy> {
 public:
  std::string_view name() const override { return "block"; }
  std::string_view category() const override { return "BLOCK"; }
};

}  // namespace

std::unique_ptr<layer> make_block_layer()
{
  return std::make_unique<block_layer>();
}

}  // namespace dc
