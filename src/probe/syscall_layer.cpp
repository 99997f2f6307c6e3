// The system-call layer's loader: fills the spec map from the syscall table.
#include <bpf/bpf.h>

#include "core/category.h"
#include "core/syscall_table.h"
#include "probe/layers.h"
#include "probe/skeleton_layer.h"
#include "syscall.skel.h"

namespace dc {

namespace {

class syscall_layer final
    : public skeleton_layer<syscall_bpf, syscall_bpf__open, syscall_bpf__load, syscall_bpf__destroy> {
 public:
  std::string_view name() const override { return "syscall"; }
  std::string_view category() const override { return category::posix; }

  result<> flush_stages() override
  {
    return skel() ? run_task_iterator(skel()->progs.dc_flush_stages, "sends staged syscall records")
                  : result<>{};
  }

 protected:
  result<> after_load(syscall_bpf& skel) override
  {
    int specs = bpf_map__fd(skel.maps.dc_specs);
    for (const syscall_info& s : traced_syscalls()) {
      uint32_t nr = static_cast<uint32_t>(s.nr);
      if (bpf_map_update_elem(specs, &nr, &s.spec, BPF_ANY) != 0)
        return fail("cannot fill the syscall spec map: " + std::string(std::strerror(errno)));
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<layer> make_syscall_layer()
{
  return std::make_unique<syscall_layer>();
}

}  // namespace dc
