// The system-call layer's loader: fills the spec map from the syscall table.
#include <cstring>

#include <bpf/bpf.h>

#include "core/category.h"
#include "core/syscall_table.h"
#include "probe/layers.h"
#include "datacrumbs.skel.h"

namespace dc {

namespace {

class syscall_layer final : public layer {
 public:
  std::string_view name() const override { return "syscall"; }
  std::string_view category() const override { return category::posix; }

  result<> flush_stages() override
  {
    return skel() ? run_task_iterator(fd_of(skel()->progs.dc_syscall_flush), "sends staged syscall records")
                  : result<>{};
  }

 protected:
  result<> after_load(datacrumbs_bpf& skel) override
  {
    int specs = bpf_map__fd(skel.maps.dc_syscall_specs);
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
