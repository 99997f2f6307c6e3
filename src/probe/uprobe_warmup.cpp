#include "probe/uprobe_warmup.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <utility>

#include "core/link_closer.h"
#include "explore/elf_symbols.h"
#include "probe/uprobe_links.h"

namespace dc {

namespace {

constexpr const char* self_exe = "/proc/self/exe";
// Short against a grace period (5-30 ms here), so the lock never goes quiet for one.
constexpr auto period = std::chrono::milliseconds(4);
// Links made at most (~200 ms of loading); a load that takes longer ends with the lock cold.
constexpr unsigned most_links = 48;

}  // namespace

int load_empty_uprobe_program()
{
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts,
              .expected_attach_type = static_cast<bpf_attach_type>(trace_uprobe_multi));
  return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "dc_uprobe_warm", "GPL", insns, 2, &opts);
}

int link_at_entry(int prog_fd)
{
  // Its entry point runs once, at exec: never again in this process.
  static const result<uint64_t> offset = entry_point_offset(self_exe);
  if (!offset)
    return -ENOEXEC;
  std::vector<int> made;
  std::vector<uint64_t> refused;
  int err = link_probe_set(prog_fd, trace_uprobe_multi, self_exe, probe_set{{*offset}, {0}, {}}, false,
                           static_cast<uint32_t>(::getpid()), made, refused);
  if (err != 0)
    return -err;
  return made.empty() ? -ENOTSUP : made.front();
}

uprobe_warmup::uprobe_warmup()
{
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    error_ = std::string("no thread: ") + e.what();
  }
}

uprobe_warmup::~uprobe_warmup()
{
  {
    link_closer closer;  // together: their releases share grace periods
    closer.close_later(take_links());
  }
  if (prog_fd_ >= 0)
    ::close(prog_fd_);
}

void uprobe_warmup::stop()
{
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

std::vector<int> uprobe_warmup::take_links()
{
  stop();
  return std::exchange(links_, {});
}

std::string uprobe_warmup::error() const
{
  std::lock_guard lock(mutex_);
  return error_;
}

void uprobe_warmup::run()
{
  int prog = load_empty_uprobe_program();
  std::unique_lock lock(mutex_);
  if (prog < 0) {
    error_ = std::string("the kernel refuses an empty uprobe program: ") + std::strerror(errno);
    return;
  }
  prog_fd_ = prog;
  while (!stopping_ && made_ < most_links) {
    lock.unlock();
    int link = link_at_entry(prog);
    lock.lock();
    if (link < 0) {
      error_ = std::string("the kernel refuses a uprobe on this executable's entry point: ") +
               std::strerror(-link);
      return;
    }
    links_.push_back(link);
    ++made_;
    wake_.wait_for(lock, period, [this] { return stopping_; });
  }
}

}  // namespace dc
