#include "probe/uprobe_layer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "core/function_table.h"
#include "core/user_regex.h"
#include "explore/elf_symbols.h"
#include "probe/skeleton_layer.h"
#include "uprobe.skel.h"

extern "C" {
#include "events.h"
}

namespace dc {

std::vector<uprobe_target> plan_uprobes(const probe_config& config, std::vector<std::string>& notes)
{
  std::vector<uprobe_target> targets;
  std::set<std::pair<std::string, uint64_t>> attached;  // (binary, address): aliases once
  for (const probe_entry& e : config.entries) {
    if (e.kind == probe_kind::kprobe || e.kind == probe_kind::usdt || e.kind == probe_kind::custom) {
      notes.push_back("probe entry '" + e.name + "' skipped: this probe kind is not supported yet");
      continue;
    }
    if (e.kind != probe_kind::uprobe)
      continue;
    auto path = resolve_binary(e.file);
    if (!path) {
      notes.push_back("probe entry '" + e.name + "' skipped: " + path.error().message);
      continue;
    }
    auto functions = list_functions(*path);
    if (!functions) {
      notes.push_back("probe entry '" + e.name + "' skipped: " + functions.error().message);
      continue;
    }
    auto regex = compile_user_regex(e.regex, e.name);
    size_t before = targets.size();
    for (const elf_function& f : *functions)
      if (regex && std::regex_match(f.name, *regex) && attached.insert({*path, f.address}).second)
        targets.push_back({e.name, f.name, *path, f.file_offset});
    if (targets.size() == before)
      notes.push_back("probe entry '" + e.name + "': no function of " + *path + " matches '" + e.regex + "'");
  }
  return targets;
}

namespace {

// Kernel ABI of uprobe_multi links (Linux 6.6+), which the libbpf of Debian 12 (1.1) predates.
constexpr uint32_t trace_uprobe_multi = 48;  // enum bpf_attach_type BPF_TRACE_UPROBE_MULTI
constexpr uint32_t uprobe_multi_return = 1;  // BPF_F_UPROBE_MULTI_RETURN

struct link_create_uprobe_multi {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t multi_flags;
  uint32_t pid;
  uint32_t pad;
};

// One link for every function of one binary: a single attach and a single detach (detaching
// one perf-event uprobe waits for an RCU grace period, ~70 ms each here).
int attach_uprobe_multi(int prog_fd, const std::string& binary, const std::vector<uint64_t>& offsets,
                        const std::vector<uint64_t>& cookies, bool ret)
{
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  link_create_uprobe_multi l{};
  l.prog_fd = static_cast<uint32_t>(prog_fd);
  l.attach_type = trace_uprobe_multi;
  l.path = reinterpret_cast<uint64_t>(binary.c_str());
  l.offsets = reinterpret_cast<uint64_t>(offsets.data());
  l.cookies = reinterpret_cast<uint64_t>(cookies.data());
  l.cnt = static_cast<uint32_t>(offsets.size());
  l.multi_flags = ret ? uprobe_multi_return : 0;
  static_assert(sizeof(l) <= sizeof(attr));
  std::memcpy(&attr, &l, sizeof(l));
  return static_cast<int>(syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr)));
}

class uprobe_layer final
    : public skeleton_layer<uprobe_bpf, uprobe_bpf__open, uprobe_bpf__load, uprobe_bpf__destroy> {
 public:
  explicit uprobe_layer(std::vector<uprobe_target> targets) : targets_(std::move(targets)) {}
  std::string_view name() const override { return "uprobe"; }
  std::string_view category() const override { return "USER"; }

  layer_report attach() override
  {
    layer_report r{std::string(name()), std::string(category()), !targets_.empty(), {}, {}};
    if (targets_.empty())
      r.why = "no function to probe";
    // Per binary: the offsets of its functions, the cookie of each its index in targets_.
    std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> per_binary;
    for (size_t i = 0; i < targets_.size(); ++i) {
      per_binary[targets_[i].binary].first.push_back(targets_[i].offset);
      per_binary[targets_[i].binary].second.push_back(i);
    }
    for (const auto& [binary, probes] : per_binary) {
      const auto& [offsets, cookies] = probes;
      for (bool ret : {false, true}) {
        bpf_program* prog = ret ? skel()->progs.dc_uprobe_return : skel()->progs.dc_uprobe_enter;
        int fd = attach_uprobe_multi(bpf_program__fd(prog), binary, offsets, cookies, ret);
        if (fd < 0) {
          r.live = false;
          r.why += (r.why.empty() ? "" : "; ") + binary + ": " + std::strerror(errno);
          break;
        }
        add_link_fd(fd);
      }
      r.hooks.push_back(std::to_string(offsets.size()) + " functions in " + binary + " (uprobe_multi)");
    }
    return r;
  }

 protected:
  result<> before_load(uprobe_bpf& skel) override
  {
    for (bpf_program* p : {skel.progs.dc_uprobe_enter, skel.progs.dc_uprobe_return})
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(trace_uprobe_multi));
    return {};
  }

  result<> after_load(uprobe_bpf& skel) override
  {
    int specs = bpf_map__fd(skel.maps.dc_uprobe_specs);
    if (targets_.size() > bpf_map__max_entries(skel.maps.dc_uprobe_specs))
      return fail("too many functions to probe: " + std::to_string(targets_.size()));
    for (uint32_t i = 0; i < targets_.size(); ++i) {
      const function_info* info = find_function(targets_[i].function);
      dc_uprobe_spec spec{};
      spec.str_arg = info ? info->str_arg : -1;
      spec.item_size_arg = info ? info->item_size_arg : -1;
      if (bpf_map_update_elem(specs, &i, &spec, BPF_ANY) != 0)
        return fail(std::string("cannot fill the uprobe spec map: ") + std::strerror(errno));
    }
    return {};
  }

 private:
  std::vector<uprobe_target> targets_;
};

}  // namespace

std::unique_ptr<layer> make_uprobe_layer(std::vector<uprobe_target> targets)
{
  return std::make_unique<uprobe_layer>(std::move(targets));
}

}  // namespace dc
