// The page-fault layer's loader (bpf/fault.bpf.c). Faults stay open in the kernel until the
// thread's next fault; at the end of a run an iterator closes the ones still open.
#include <cstring>

#include "core/category.h"
#include "datacrumbs.skel.h"
#include "probe/layers.h"

namespace dc {

namespace {

class fault_layer final : public layer {
 public:
  std::string_view name() const override { return "fault"; }
  std::string_view category() const override { return category::fault; }

  result<> flush_stages() override
  {
    return skel() ? run_task_iterator(fd_of(skel()->progs.dc_fault_flush), "closes open page faults")
                  : result<>{};
  }
};

}  // namespace

std::unique_ptr<layer> make_fault_layer()
{
  return std::make_unique<fault_layer>();
}

}  // namespace dc
