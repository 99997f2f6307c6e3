// Which process of the run a pid stands for, and how much the run keeps of each. Pids wrap
// (pid_max is 32768 on small machines), so a long run sees one pid used by several processes:
// each gets a key of its own (core/names.h), and nothing of one is counted as another's. And a
// run that forks all day must not keep every exited process's detail: past the limit, those
// that moved the fewest bytes are folded together by command, their totals kept exactly.
#include "collect/decoder.h"
#include "sink/event_sink.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"

namespace dc {

process_info& decoder::process_for(uint32_t pid, bool new_process)
{
  pid_state& s = state_.pids[pid];
  process_key current = instance_key(pid, s.processes > 1 ? s.processes - 1 : 0);
  const process_table& table = state_.processes.table();
  auto known = table.find(current);
  // An exec of a process already seen continues it; one whose last process exited (or was
  // folded) is a new process whose fork was not traced.
  if (s.processes == 0) {
    s.processes = 1;
  } else if (new_process || s.fold || known == table.end() || known->second.exit_status != -1) {
    current = instance_key(pid, s.processes++);
    s.fold = 0;
  }
  process_info& p = state_.processes.change()[current];  // the caller changes it too
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
  process_table& table = state_.processes.change();
  auto it = table.find(key);
  if (it == table.end())
    return;
  process_info& p = it->second;
  // A process forked from one the run never saw has only its name.
  const std::string& command = p.command.empty() ? p.comm : p.command;
  auto [fold, added] = fold_of_command_.try_emplace(command, folded_key_bit | fold_of_command_.size());
  process_info& folded = table[fold->second];
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
    state_.pids[pid].fold = static_cast<uint32_t>((fold->second & ~folded_key_bit) + 1);
  table.erase(it);
}

void decoder::process_ended(uint32_t pid, process_key key, const process_info& p, uint64_t ts_ns)
{
  ended_process e{ts_ns, pid, key, {}};
  e.tids.reserve(p.threads.size());
  for (const auto& [tid, info] : p.threads) {
    e.tids.push_back(tid);
    if (sinks_.trace)
      sinks_.trace->thread_ended(tid, key);
  }
  ended_.push_back(std::move(e));
  forget_ended(ts_ns);
}

void decoder::forget_ended(uint64_t now_ns)
{
  while (!ended_.empty() && ended_.front().ts_ns + forget_after_ns <= now_ns) {
    const ended_process& e = ended_.front();
    // Kept in detail (the summary's busiest): no second snapshot if a late event names it again.
    process_table& table = state_.processes.change();
    if (auto it = table.find(e.key); it != table.end())
      it->second.forgotten = true;
    // Its late events after it was folded were named under the fold: they go too. Without
    // this a run whose pids wrapped named every pid for good (the soak: 32,000 of each).
    for (process_key k : {e.key, fold_of_late_events(e.pid, e.key)}) {
      if (!k)
        continue;
      if (sinks_.trace)
        sinks_.trace->forget_process(e.pid, k, e.tids);
      for (event_sink* v : views_) v->forget_process(e.pid, k);
    }
    ended_.pop_front();
  }
}

process_key decoder::fold_of_late_events(uint32_t pid, process_key key) const
{
  const pid_state* s = state_.pids.find(pid);
  if (!s || !s->fold || instance_key(pid, s->processes > 1 ? s->processes - 1 : 0) != key)
    return 0;
  return folded_key_bit | (s->fold - 1);
}

}  // namespace dc
