// The filesystem layer's loader (bpf/fs.bpf.c): nothing to configure beyond the shared maps.
#include "fs.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

class fs_layer final : public skeleton_layer<fs_bpf, fs_bpf__open, fs_bpf__load, fs_bpf__destroy> {
 public:
  std::string_view name() const override { return "fs"; }
  std::string_view category() const override { return "FS"; }
};

}  // namespace

std::unique_ptr<layer> make_fs_layer()
{
  return std::make_unique<fs_layer>();
}

}  // namespace dc
