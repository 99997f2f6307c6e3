#include "sink/event_print.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace dc {

namespace {

const int64_t* arg_of(const trace_event& ev, std::string_view key)
{
  for (uint8_t i = 0; i < ev.arg_count; ++i)
    if (ev.args[i].key() == key)
      return &ev.args[i].value;
  return nullptr;
}

// "HH:MM:SS.uuuuuu" in local time; the seconds part is formatted once per second.
void append_time(std::string& out, uint64_t ts_us)
{
  static thread_local time_t last_second = -1;
  static thread_local char hms[16] = {};
  auto second = static_cast<time_t>(ts_us / 1000000);
  if (second != last_second) {
    std::tm tm{};
    localtime_r(&second, &tm);
    std::strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
    last_second = second;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s.%06" PRIu64, hms, ts_us % 1000000);
  out += buf;
}

std::string_view name_of(uint64_t hash, const name_table& names)
{
  if (!hash)
    return "-";
  const std::string* s = names.find(hash);
  return s ? std::string_view(*s) : std::string_view("?");
}

}  // namespace

std::string event_print_header()
{
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%-15s %-10s %-16s %-8s %-8s %-16s %10s %12s %10s %10s %-9s %s\n", "TIME",
                "SYSTEM", "EVENT_TYPE", "PID", "TID", "COMM", "SIZE", "OFFSET", "LAT(us)", "RET", "LAYER",
                "FILE");
  return buf;
}

void append_event_line(std::string& out, const trace_event& ev, const trace_names& names,
                       std::string_view system)
{
  append_time(out, ev.ts_us);
  std::string_view comm = "-";
  if (auto p = names.processes.find(ev.instance()); p != names.processes.end()) {
    auto t = p->second.threads.find(ev.tid);
    comm = t != p->second.threads.end() && !t->second.comm.empty() ? t->second.comm : p->second.comm;
  }
  char offset[24] = "-", ret[24] = "-";
  if (const int64_t* v = arg_of(ev, "offset"))
    std::snprintf(offset, sizeof(offset), "%" PRId64, *v);
  if (const int64_t* v = arg_of(ev, "ret"))
    std::snprintf(ret, sizeof(ret), "%" PRId64, *v);
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                " %-10.*s %-16.*s %-8u %-8u %-16.*s %10" PRIu64 " %12s %10" PRIu64 " %10s %-9.*s ",
                static_cast<int>(system.size()), system.data(), static_cast<int>(ev.name.size()),
                ev.name.data(), ev.pid, ev.tid, static_cast<int>(comm.size()), comm.data(), ev.bytes, offset,
                ev.dur_us, ret, static_cast<int>(ev.category.size()), ev.category.data());
  out += buf;
  out += name_of(ev.fhash, names.names);
  if (ev.fhash2) {
    out += " -> ";
    out += name_of(ev.fhash2, names.names);
  }
  out += '\n';
}

event_printer::event_printer(std::unique_ptr<async_output> out, std::set<std::string, std::less<>> layers,
                             std::function<std::string(const process_info&)> label)
    : out_(std::move(out)), layers_(std::move(layers)), label_(std::move(label))
{
  chunk_ = event_print_header();
  chunk_.reserve(chunk_bytes + 512);
}

const std::string& event_printer::system_of(const process_info* p)
{
  static const std::string none = "-";
  if (!p || !label_)
    return none;
  // The label follows the process's name (it changes at exec); the regexes run once per name.
  auto& [comm, label] = systems_[p->pid];
  if (label.empty() || comm != p->comm) {
    comm = p->comm;
    std::string found = label_(*p);
    label = found.empty() ? none : std::move(found);
  }
  return label;
}

void event_printer::add(const trace_event& ev, const trace_names& names)
{
  if (ev.counter || ev.folded || (!layers_.empty() && !layers_.contains(ev.category)))
    return;
  auto p = names.processes.find(ev.instance());
  append_event_line(chunk_, ev, names, system_of(p == names.processes.end() ? nullptr : &p->second));
  ++chunk_lines_;
  if (chunk_.size() >= chunk_bytes)
    hand_over();
}

void event_printer::hand_over()
{
  if (out_->write(std::move(chunk_)))
    printed_ += chunk_lines_;
  else
    dropped_ += chunk_lines_;
  chunk_lines_ = 0;
  chunk_ = std::string();
  chunk_.reserve(chunk_bytes + 512);
}

void event_printer::tick(std::chrono::steady_clock::time_point, const trace_names&)
{
  // Lines reach the reader within one collector pass (100 ms), not only when a chunk is full.
  if (!chunk_.empty())
    hand_over();
}

void event_printer::finish(const trace_names&)
{
  if (!chunk_.empty())
    hand_over();
  status_ = out_->finish();
}

}  // namespace dc
