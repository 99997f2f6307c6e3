// The page-fault layer's loader (bpf/fault.bpf.c). Faults stay open in the kernel until the
// thread's next fault; at the end of a run an iterator closes the ones still open.
#include "core/category.h"
#include "fault.skel.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"

namespace dc {

namespace {

class fault_layer final
    : public skeleton_layer<fault_bpf, fault_bpf__open, fault_bpf__load, fault_bpf__destroy> {
 public:
  std::string_view name() const override { return "fault"; }
  std::string_view category() const override { return category::fault; }

  result<> flush_stages() override
  {
    return skel() ? run_task_iterator(skel()->progs.dc_flush_faults, "closes open page faults") : result<>{};
  }
};

}  // namespace

std::unique_ptr<layer> make_fault_layer()
{
  return std::make_unique<fault_layer>();
}

}  // namespace dc
