// The daemon's beacon (bpf/beacon.bpf.c): one uprobe on the client library's
// datacrumbs_client_start, which adds a registering process of the signed uid to the traced set.
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/category.h"
#include "datacrumbs.skel.h"
#include "explore/elf_symbols.h"
#include "probe/layers.h"

namespace dc {

namespace {

class beacon_layer final : public layer {
 public:
  explicit beacon_layer(beacon_target target) : target_(std::move(target)) {}
  std::string_view name() const override { return "beacon"; }
  std::string_view category() const override { return category::registration; }

  layer_report attach() override
  {
    layer_report r{std::string(name()), std::string(category()), false, {}, {}};
    auto functions = list_functions(target_.library,
                                    [](std::string_view name) { return name == "datacrumbs_client_start"; });
    if (!functions) {
      r.why = functions.error().message;
      return r;
    }
    auto start = std::ranges::find(*functions, "datacrumbs_client_start", &elf_function::name);
    if (start == functions->end()) {
      r.why = target_.library + " has no datacrumbs_client_start";
      return r;
    }
    bpf_link* link = bpf_program__attach_uprobe_opts(skel()->progs.dc_beacon_start, -1,
                                                     target_.library.c_str(), start->file_offset, nullptr);
    if (!link) {
      r.why = "uprobe on " + target_.library + ": " + std::strerror(errno);
      return r;
    }
    add_link(link);
    r.live = true;
    r.hooks.push_back("uprobe:" + target_.library + ":datacrumbs_client_start (uid " +
                      std::to_string(target_.uid) + ")");
    return r;
  }

  result<> before_load(datacrumbs_bpf& skel) override
  {
    skel.rodata->dc_register_uid = target_.uid;
    return {};
  }

 private:
  beacon_target target_;
};

}  // namespace

std::unique_ptr<layer> make_beacon_layer(beacon_target target)
{
  return std::make_unique<beacon_layer>(std::move(target));
}

}  // namespace dc
