#include "probe/uprobe_links.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>

namespace dc {

namespace {

// Kernel ABI of uprobe_multi links (Linux 6.6+), which the libbpf of Debian 12 (1.1) predates.
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

// One link for every function of one binary, for one process (pid): a single attach and a
// single detach (detaching one perf-event uprobe waits for an RCU grace period, ~70 ms each
// here). The kernel installs the breakpoints only in that process's memory, now and whenever it
// maps the binary later.
int attach_uprobe_multi(int prog_fd, uint32_t attach_type, const std::string& binary, const probe_set& set,
                        bool ret, uint32_t pid)
{
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  link_create_uprobe_multi l{};
  l.prog_fd = static_cast<uint32_t>(prog_fd);
  l.attach_type = attach_type;
  l.path = reinterpret_cast<uint64_t>(binary.c_str());
  l.offsets = reinterpret_cast<uint64_t>(set.offsets.data());
  l.cookies = reinterpret_cast<uint64_t>(set.cookies.data());
  // The kernel counts a USDT semaphore up in each process it installs the probe in.
  l.ref_ctr_offsets = set.ref_ctrs.empty() ? 0 : reinterpret_cast<uint64_t>(set.ref_ctrs.data());
  l.cnt = static_cast<uint32_t>(set.offsets.size());
  l.multi_flags = ret ? uprobe_multi_return : 0;
  l.pid = pid;
  static_assert(sizeof(l) <= sizeof(attr));
  std::memcpy(&attr, &l, sizeof(l));
  return static_cast<int>(syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr)));
}

}  // namespace

constexpr int kernel_enotsupp = 524;  // ENOTSUPP: an instruction the kernel cannot probe

bool has_lock_prefix(std::ifstream& file, uint64_t offset)
{
  unsigned char code[15] = {};
  file.clear();
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(reinterpret_cast<char*>(code), sizeof(code));
  for (unsigned char b : code) {
    if (b == 0xf0)
      return true;
    bool prefix = b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0x66 ||
                  b == 0x67 || b == 0xf2 || b == 0xf3;
    if (!prefix)
      return false;
  }
  return false;
}

int link_probe_set(int prog_fd, uint32_t attach_type, const std::string& binary, const probe_set& set,
                   bool ret, uint32_t tgid, std::vector<int>& fds, std::vector<uint64_t>& refused)
{
  if (set.offsets.empty())
    return 0;
  int fd = attach_uprobe_multi(prog_fd, attach_type, binary, set, ret, tgid);
  if (fd >= 0) {
    fds.push_back(fd);
    return 0;
  }
  int err = errno;
  if (err != kernel_enotsupp && err != EINVAL)
    return err;
  if (set.offsets.size() == 1) {
    refused.push_back(set.cookies[0]);
    return 0;
  }
  auto half = static_cast<std::ptrdiff_t>(set.offsets.size() / 2);
  auto part = [&](std::ptrdiff_t from, std::ptrdiff_t to) {
    auto slice = [&](const std::vector<uint64_t>& v) {
      return v.empty() ? v : std::vector<uint64_t>(v.begin() + from, v.begin() + to);
    };
    return probe_set{slice(set.offsets), slice(set.cookies), slice(set.ref_ctrs)};
  };
  probe_set low = part(0, half), high = part(half, static_cast<std::ptrdiff_t>(set.offsets.size()));
  if (int e = link_probe_set(prog_fd, attach_type, binary, low, ret, tgid, fds, refused))
    return e;
  return link_probe_set(prog_fd, attach_type, binary, high, ret, tgid, fds, refused);
}

int link_calls(const call_programs& progs, const std::string& binary, const probe_set& set, uint32_t tgid,
               std::vector<int>& fds, std::vector<uint64_t>& refused)
{
  if (progs.session_fd >= 0)
    return link_probe_set(progs.session_fd, trace_uprobe_session, binary, set, false, tgid, fds, refused);
  if (int err = link_probe_set(progs.enter_fd, trace_uprobe_multi, binary, set, false, tgid, fds, refused))
    return err;
  return link_probe_set(progs.return_fd, trace_uprobe_multi, binary, without(set, refused), true, tgid, fds,
                        refused);
}

probe_plan plan_probe_sets(const std::vector<uprobe_target>& targets)
{
  probe_plan plan;
  std::map<std::string, std::ifstream> files;
  for (size_t i = 0; i < targets.size(); ++i) {
    const uprobe_target& t = targets[i];
    auto [file, opened] = files.try_emplace(t.binary);
    if (opened)
      file->second.open(t.binary, std::ios::binary);
    if (t.usdt) {
      probe_set& sites = plan.usdt[t.binary];
      sites.offsets.push_back(t.offset);
      sites.cookies.push_back(i);
      sites.ref_ctrs.push_back(t.semaphore);
      continue;
    }
    probe_set& into =
        has_lock_prefix(file->second, t.offset) ? plan.suspects[t.binary] : plan.per_binary[t.binary];
    into.offsets.push_back(t.offset);
    into.cookies.push_back(i);
  }
  return plan;
}

std::vector<lone_link> link_each_alone(const call_programs& progs,
                                       const std::map<std::string, probe_set>& sets, uint32_t tgid)
{
  std::vector<lone_link> links;
  for (const auto& [binary, set] : sets)
    for (size_t i = 0; i < set.offsets.size(); ++i)
      links.push_back({binary, {{set.offsets[i]}, {set.cookies[i]}, {}}, {}, {}, 0});
  auto run = [&](lone_link& l) { l.err = link_calls(progs, l.binary, l.one, tgid, l.fds, l.refused); };
  constexpr size_t at_once = 16;
  for (size_t first = 0; first < links.size(); first += at_once) {
    std::vector<std::thread> workers;
    for (size_t k = first; k < std::min(links.size(), first + at_once); ++k)
      workers.emplace_back(run, std::ref(links[k]));
    for (auto& w : workers) w.join();
  }
  return links;
}

probe_set without(const probe_set& set, const std::vector<uint64_t>& refused)
{
  probe_set kept;
  for (size_t i = 0; i < set.cookies.size(); ++i) {
    if (std::ranges::find(refused, set.cookies[i]) != refused.end())
      continue;
    kept.offsets.push_back(set.offsets[i]);
    kept.cookies.push_back(set.cookies[i]);
  }
  return kept;
}

}  // namespace dc
