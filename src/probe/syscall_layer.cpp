// The system-call layer's loader: fills the spec map from the syscall table.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "core/syscall_table.h"
#include "probe/layers.h"
#include "syscall.skel.h"

namespace dc {

namespace {

class syscall_layer final : public layer {
 public:
  ~syscall_layer() override { syscall_bpf__destroy(skel_); }
  std::string_view name() const override { return "syscall"; }
  std::string_view category() const override { return "POSIX"; }

  result<> load(const shared_maps& maps) override
  {
    skel_ = syscall_bpf__open();
    if (!skel_)
      return fail(std::string("cannot open the syscall BPF object: ") + std::strerror(errno));
    skel_->rodata->dc_wake_mark = maps.wake_mark;
    if (auto shared = reuse_shared_maps(skel_->obj, maps); !shared)
      return shared;
    if (int err = syscall_bpf__load(skel_); err)
      return fail(std::string("cannot load the syscall BPF programs: ") + std::strerror(-err));
    int specs = bpf_map__fd(skel_->maps.dc_specs);
    for (const syscall_info& s : traced_syscalls()) {
      uint32_t nr = static_cast<uint32_t>(s.nr);
      if (bpf_map_update_elem(specs, &nr, &s.spec, BPF_ANY) != 0)
        return fail("cannot fill the syscall spec map: " + std::string(std::strerror(errno)));
    }
    return {};
  }

 protected:
  bpf_object* object() override { return skel_->obj; }

 private:
  syscall_bpf* skel_ = nullptr;
};

}  // namespace

std::unique_ptr<layer> make_syscall_layer()
{
  return std::make_unique<syscall_layer>();
}

}  // namespace dc
