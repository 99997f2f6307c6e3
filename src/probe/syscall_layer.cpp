// The system-call layer's loader: fills the spec map from the syscall table.
#include <bpf/bpf.h>

#include <unistd.h>

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
  std::string_view category() const override { return "POSIX"; }

  // Runs the stage-flushing iterator once over every task: reading it runs the program.
  result<> flush_stages() override
  {
    if (!skel_)
      return {};
    bpf_link* link = bpf_program__attach_iter(skel_->progs.dc_flush_stages, nullptr);
    if (!link)
      return fail(std::string("cannot attach the stage-flushing iterator: ") + std::strerror(errno));
    int fd = bpf_iter_create(bpf_link__fd(link));
    int err = fd < 0 ? errno : 0;
    char buf[64];
    while (fd >= 0) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n > 0 || (n < 0 && errno == EINTR))
        continue;
      if (n < 0)
        err = errno;
      break;
    }
    if (fd >= 0)
      close(fd);
    bpf_link__destroy(link);
    if (err)
      return fail(std::string("cannot flush the staged syscall records: ") + std::strerror(err));
    return {};
  }

 protected:
  result<> after_load(syscall_bpf& skel) override
  {
    skel_ = &skel;
    bpf_program__set_autoattach(skel.progs.dc_flush_stages, false);  // run at the end, by flush_stages
    int specs = bpf_map__fd(skel.maps.dc_specs);
    for (const syscall_info& s : traced_syscalls()) {
      uint32_t nr = static_cast<uint32_t>(s.nr);
      if (bpf_map_update_elem(specs, &nr, &s.spec, BPF_ANY) != 0)
        return fail("cannot fill the syscall spec map: " + std::string(std::strerror(errno)));
    }
    return {};
  }

 private:
  syscall_bpf* skel_ = nullptr;
};

}  // namespace

std::unique_ptr<layer> make_syscall_layer()
{
  return std::make_unique<syscall_layer>();
}

}  // namespace dc
