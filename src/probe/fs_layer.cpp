// The filesystem layer's loader (bpf/fs.bpf.c): the syscall numbers it tells apart come from the
// syscall table.
#include <bpf/libbpf.h>

#include <cstring>
#include <string_view>

#include "core/category.h"
#include "core/syscall_table.h"
#include "datacrumbs.skel.h"
#include "probe/layers.h"

namespace dc {

namespace {

class fs_layer final : public layer {
 public:
  std::string_view name() const override { return "fs"; }
  std::string_view category() const override { return category::fs; }

  result<> before_load(datacrumbs_bpf& skel) override
  {
    skel.rodata->dc_nr_fdatasync = number_of("fdatasync");
    skel.rodata->dc_nr_fallocate = number_of("fallocate");
    return {};
  }

  // jbd2_run_stats only gives a commit's record its journal blocks; no profile counter holds them.
  bool trace_only(const bpf_program* prog) const override
  {
    return std::string_view(bpf_program__name(prog)) == "dc_fs_commit_stats";
  }

 private:
  // An untraced call's number is one no system call has.
  static uint32_t number_of(std::string_view name)
  {
    const syscall_info* s = find_syscall(name);
    return s ? static_cast<uint32_t>(s->nr) : ~0u;
  }
};

}  // namespace

std::unique_ptr<layer> make_fs_layer()
{
  return std::make_unique<fs_layer>();
}

}  // namespace dc
