// The trace's naming lines (sink/pfw_writer.h): the metadata lines that name what a span line
// refers to, written before the first line that needs them (a process and its command, a
// thread, a file, a lane), and the name and layer text of span lines. Kept per pid and tid so
// that a renamed process or thread is named again.
#include "sink/pfw_writer.h"

#include "core/hash.h"
#include "core/json.h"
#include "core/short_text.h"

namespace dc {

namespace {

// The entry of `key` in `map`, through `last` (the entry found the call before, which the map's
// nodes keep valid until an erase), and whether it was made now.
template <class Map>
std::pair<typename Map::mapped_type*, bool> entry_through(
    Map& map, std::pair<uint32_t, typename Map::mapped_type*>& last, uint32_t key)
{
  if (last.second && last.first == key)
    return {last.second, false};
  auto [entry, made] = map.try_emplace(key);
  last = {key, &entry->second};
  return {last.second, made};
}

}  // namespace

void pfw_writer::write_file_hash(uint64_t hash, const trace_names& names, uint32_t pid, uint32_t tid,
                                 uint64_t ts_us)
{
  last_hash_ = hash;
  if (!written_hashes_.insert(hash).second)
    return;
  const std::string* path = names.names.find(hash);
  begin_metadata("FH", pid, tid, ts_us);
  std::string& b = out_.buffer();
  append_string_field(b, "name", path ? *path : std::string_view("<unknown>"));
  append_field(b, "value", hash);
  b.append("}}\n");
}

void pfw_writer::forget_process(uint32_t pid, process_key process, std::span<const uint32_t> tids)
{
  last_pid_ = {0, nullptr};
  last_tid_ = {0, nullptr};
  if (auto it = named_pids_.find(pid); it != named_pids_.end() && it->second.process == process)
    named_pids_.erase(it);
  for (uint32_t tid : tids) {
    if (auto it = named_tids_.find(tid); it != named_tids_.end() && it->second.process == process)
      named_tids_.erase(it);
    order_.forget(tid, process);
  }
  if (process_forgotten_)
    process_forgotten_(pid, process);
}

void pfw_writer::name_process_and_thread(const trace_event& ev, const trace_names& names)
{
  named_version_ = names.processes_version;
  std::string& b = out_.buffer();
  auto proc = names.processes.find(ev.instance());
  bool known = proc != names.processes.end();
  // Named again when it changed: a process seen before its exec is renamed by it. Versions are
  // compared, not command lines: hashing one per event cost 3 %, and keeping a copy of each
  // grew the writer with every process of a long run.
  auto [named_at, added] = entry_through(named_pids_, last_pid_, ev.pid);
  named_process& named = *named_at;
  if (added || named.process != ev.instance() || named.known != known ||
      (known && named.version != proc->second.names_version)) {
    named = {ev.instance(), known, known ? proc->second.names_version : 0};
    uint64_t cmd_hash = known ? string_hash(proc->second.command) : 0;
    // The command line goes in an SH (string hash) line; process_name refers to it.
    if (known) {
      begin_metadata("SH", ev.pid, ev.pid, ev.ts_us);
      append_string_field(b, "name", proc->second.command);
      append_field(b, "value", cmd_hash);
      b.append("}}\n");
    }
    begin_metadata("process_name", ev.pid, ev.pid, ev.ts_us);
    append_string_field(b, "name", known ? std::string_view(proc->second.comm) : std::string_view("?"));
    if (known) {
      append_field(b, "cmd_hash", cmd_hash);
      append_field(b, "ppid", proc->second.parent);
      if (proc->second.rank >= 0) {
        append_field(b, "rank", proc->second.rank);
        append_field(b, "size", proc->second.size);
      }
      if (std::string label = labeler_ ? labeler_(proc->second) : std::string(); !label.empty())
        append_string_field(b, "system", label);
    }
    b.append("}}\n");
    if (known && process_named_)
      process_named_(ev.instance(), proc->second, ev.ts_us);
  }
  std::string_view comm = "?";
  if (known) {
    auto t = proc->second.threads.find(ev.tid);
    comm = t != proc->second.threads.end() ? std::string_view(t->second.comm)
                                           : std::string_view(proc->second.comm);
  }
  auto [thread_at, added_tid] = entry_through(named_tids_, last_tid_, ev.tid);
  named_thread& thread = *thread_at;
  thread.process = ev.instance();
  if (added_tid || thread.name != comm) {
    thread.name = comm;
    begin_metadata("thread_name", ev.pid, ev.tid, ev.ts_us);
    append_string_field(b, "name", comm);
    b.append("}}\n");
  }
}

uint32_t pfw_writer::track_of(const trace_event& ev)
{
  if (ev.lane == lane_kind::none)
    return ev.tid;
  lane_table::placement p = lanes_.place(ev.pid, ev.lane, ev.lane_dev, ev.ts_us, ev.ts_us + ev.dur_us);
  if (p.fresh) {
    begin_metadata("thread_name", ev.pid, p.tid, ev.ts_us);
    std::string& b = out_.buffer();
    append_string_field(b, "name", lane_table::lane_name(ev.lane, ev.lane_dev, p.index));
    // Marks the line as a lane's, not a thread's (readers that count threads skip it).
    append_string_field(b, "lane", lane_table::group_name(ev.lane, ev.lane_dev));
    b.append("}}\n");
  }
  return p.tid;
}

std::string_view pfw_writer::who_text(const trace_event& ev, uint32_t tid)
{
  for (size_t i : {last_who_, 1 - last_who_}) {
    const who_line& w = whos_[i];
    if (w.pid == ev.pid && w.tid == tid && same_text(w.name, ev.name) && same_text(w.category, ev.category) &&
        !w.text.empty()) {
      last_who_ = i;
      return w.text;
    }
  }
  last_who_ = 1 - last_who_;
  who_line& w = whos_[last_who_];
  w.name = ev.name;
  w.category = ev.category;
  w.pid = ev.pid;
  w.tid = tid;
  w.text = ",\"name\":";
  append_json_string(w.text, ev.name);
  w.text += ",\"cat\":";
  append_json_string(w.text, ev.category);
  append_field(w.text, "pid", ev.pid);
  append_field(w.text, "tid", tid);
  w.text += ",\"ts\":";
  return w.text;
}

}  // namespace dc
