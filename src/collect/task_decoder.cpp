// Decoder of process records: who runs which command, whose child each process is, which
// threads it has. Feeds the names in the trace and the per-process summary.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "collect/decoder.h"
#include "collect/mpi_rank.h"
#include "sink/pfw_writer.h"

namespace dc {

namespace {

std::string comm_of(const dc_task_event& ev)
{
  return std::string(ev.comm, strnlen(ev.comm, sizeof(ev.comm)));
}

std::string command_of(const dc_task_event& ev)
{
  size_t len = std::min<size_t>(ev.argv_len, sizeof(ev.argv));
  std::string cmd(ev.argv, len);
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0')
      c = ' ';
  return cmd;
}

}  // namespace

void decoder::decode_task(const dc_task_event& ev)
{
  uint32_t pid = ev.hdr.tgid;
  process_info& p = process_for(pid, ev.op == DC_TASK_FORK);
  if (ev.op == DC_TASK_EXEC || ev.op == DC_TASK_FORK)
    ++p.names_version;
  switch (ev.op) {
    case DC_TASK_EXEC:
      if (p.parent == 0)
        p.parent = ev.ppid;
      p.comm = comm_of(ev);
      p.command = command_of(ev);
      if (p.command.empty())
        p.command = p.comm;
      p.threads.clear();
      p.threads[ev.hdr.tid].comm = p.comm;
      {
        // The launcher variables it execs with, copied by the kernel at the exec (a rank may be
        // gone by now); none: no rank, even if the process it was forked from was one.
        mpi_rank r =
            mpi_rank_from_environ(std::string_view(ev.env, std::min<size_t>(ev.env_len, sizeof(ev.env))));
        p.rank = r.rank;
        p.size = r.size;
      }
      break;
    case DC_TASK_FORK: {
      p.parent = ev.ppid;
      const process_table& table = state_.processes.table();
      auto parent = table.find(process_of(ev.ppid));
      if (parent != table.end()) {
        p.command = parent->second.command;
        p.rank = parent->second.rank;  // a fork shares its parent's environment
        p.size = parent->second.size;
      }
      p.comm = comm_of(ev);
      p.threads[ev.hdr.tid].comm = p.comm;
      break;
    }
    case DC_TASK_THREAD: p.threads[ev.hdr.tid].comm = comm_of(ev); break;
    case DC_TASK_EXIT:
      p.exit_status = static_cast<int>(ev.exit_code);
      process_ended(pid, process_of(pid), p, ev.hdr.ts_ns);  // before process_exited may fold p
      process_exited(process_of(pid));
      break;
    default: ++malformed_;
  }
}

}  // namespace dc
