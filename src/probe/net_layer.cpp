// The network layer's loader (bpf/net.bpf.c): nothing to configure beyond the shared maps.
#include "net.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

class net_layer final : public skeleton_layer<net_bpf, net_bpf__open, net_bpf__load, net_bpf__destroy> {
 public:
  std::string_view name() const override { return "net"; }
  std::string_view category() const override { return "NET"; }
};

}  // namespace

std::unique_ptr<layer> make_net_layer()
{
  return std::make_unique<net_layer>();
}

}  // namespace dc
