// Which process of the run a pid stands for, and how much the run keeps of each. Pids wrap
// (pid_max is 32768 on small machines), so a long run sees one pid used by several processes:
// each gets a key of its own (core/names.h), and nothing of one is counted as another's. And a
// run that forks all day must not keep every exited process's detail: past the limit, those
// that moved the fewest bytes are folded together by command, their totals kept exactly.
#include "collect/decoder.h"
#include "sink/summary.h"

namespace dc {

process_info& decoder::process_for(uint32_t pid, bool new_process)
{
  process_instance current{process_of(pid), 0};
  if (auto it = state_.instances.find(pid); it != state_.instances.end())
    current = it->second;
  auto known = state_.processes.find(current.key);
  // An exec of a process already seen continues it; one whose last process exited (or was
  // folded) is a new process whose fork was not traced.
  bool earlier = known != state_.processes.end() || (current.key & folded_key_bit);
  if (earlier && (new_process || current.key & folded_key_bit || known->second.exit_status != -1)) {
    process_instance next{instance_key(pid, current.generation + 1), current.generation + 1};
    state_.instances[pid] = next;
    current = next;
  }
  process_info& p = state_.processes[current.key];
  p.pid = pid;
  return p;
}

void decoder::process_exited(process_key key)
{
  if (!sinks_.summary)
    return;
  exited_detail_.emplace(sinks_.summary->moved_bytes(key), key);
  while (exited_detail_.size() > detail_limit_) {
    process_key least = exited_detail_.begin()->second;
    exited_detail_.erase(exited_detail_.begin());
    fold_process(least);
  }
}

void decoder::fold_process(process_key key)
{
  auto it = state_.processes.find(key);
  if (it == state_.processes.end())
    return;
  process_info& p = it->second;
  // A process forked from one the run never saw has only its name.
  const std::string& command = p.command.empty() ? p.comm : p.command;
  auto [fold, added] = fold_of_command_.try_emplace(command, folded_key_bit | fold_of_command_.size());
  process_info& folded = state_.processes[fold->second];
  if (added) {
    folded.command = command;
    folded.comm = p.comm;
  }
  ++folded.folded;
  folded.folded_threads += p.threads.size();
  sinks_.summary->fold(key, fold->second);
  // Late events of the pid (a write-back of what it dirtied) count where it went, unless the
  // pid has a newer process by now.
  uint32_t pid = p.pid;
  if (process_of(pid) == key)
    state_.instances[pid] = {fold->second, generation_of(key)};
  state_.processes.erase(it);
}

}  // namespace dc
