#include "sink/pfw_writer.h"

#include "core/clock.h"
#include "core/hash.h"
#include "core/json.h"

#include <utility>

namespace dc {

pfw_writer::pfw_writer(gzip_member_writer out, std::string host, uint32_t root_pid)
    : out_(std::move(out)),
      host_(std::move(host)),
      hhash_(string_hash(host_)),
      root_pid_(root_pid),
      last_flush_(std::chrono::steady_clock::now())
{
  span_args_ = ",\"ph\":\"X\",\"args\":{\"hhash\":" + std::to_string(hhash_);
  std::string& b = out_.buffer();
  b.append("[\n");
  begin_metadata("HH", root_pid_, root_pid_, epoch_now_us());
  append_string_field(b, "name", host_);
  append_field(b, "value", hhash_);
  b.append("}}\n");
}

// Every line has a ts: Chrome's trace model sorts all lines by it (a line without one sorts as
// NaN and scrambles the order). A metadata line's is when it starts to apply.
void pfw_writer::begin_metadata(std::string_view name, uint32_t pid, uint32_t tid, uint64_t ts_us)
{
  std::string& b = out_.buffer();
  b.push_back('{');
  append_field(b, "id", next_id_++, true);
  b.append(",\"name\":\"");
  b.append(name);
  b.append("\",\"cat\":\"dftracer\"");
  append_field(b, "pid", pid);
  append_field(b, "tid", tid);
  append_field(b, "ts", ts_us);
  b.append(",\"ph\":\"M\",\"args\":{");
  append_field(b, "hhash", hhash_, true);
}

void pfw_writer::write_clock(const host_clock& clock)
{
  begin_metadata("clock", root_pid_, root_pid_, epoch_now_us());
  std::string& b = out_.buffer();
  append_string_field(b, "host", host_);
  append_field(b, "realtime_minus_monotonic_ns", clock.realtime_minus_monotonic_ns);
  append_field(b, "ntp_synchronized", clock.ntp_synchronized ? 1 : 0);
  append_field(b, "ntp_offset_ns", clock.ntp_offset_ns);
  append_field(b, "ntp_est_error_us", clock.ntp_est_error_us);
  append_field(b, "ntp_max_error_us", clock.ntp_max_error_us);
  append_string_field(b, "ntp_source", clock.ntp_source);
  b.append("}}\n");
}

void pfw_writer::write_snapshot(std::string_view name, uint32_t pid, uint64_t ts_us, std::string_view label,
                                std::string_view value_json)
{
  if (!status_)
    return;
  std::string& b = out_.buffer();
  b.push_back('{');
  append_field(b, "id", next_id_++, true);
  append_string_field(b, "name", name);
  b.append(",\"cat\":\"dftracer\"");
  append_field(b, "pid", pid);
  append_field(b, "tid", pid);
  append_field(b, "ts", ts_us);
  b.append(",\"ph\":\"M\",\"args\":{");
  append_field(b, "hhash", hhash_, true);
  append_string_field(b, "name", label);
  append_string_field(b, "value", value_json);
  b.append("}}\n");
}

void pfw_writer::write_event(const trace_event& ev, const trace_names& names)
{
  if (!order_.admit(ev))
    return;
  write_now(ev, names);
  for (const trace_event& freed : order_.freed_by(ev)) write_now(freed, names);
}

void pfw_writer::flush_held(const trace_names& names)
{
  for (const trace_event& held : order_.drain_all()) write_now(held, names);
}

void pfw_writer::write_now(const trace_event& ev, const trace_names& names)
{
  // A member ends before its text outgrows member_bytes: maybe_flush() alone, once per batch of
  // the ring, let a burst's text grow past it, and the text's buffer (kept for the next member)
  // doubled and stayed so.
  if (out_.buffered() >= member_bytes - line_room)
    (void)flush();
  if (!status_) {
    ++(ev.counter ? unwritten_counters_ : unwritten_events_);
    return;
  }
  write_names_for(ev, names);
  if (ev.counter) {
    write_counter(ev, names);
    return;
  }
  uint32_t tid = track_of(ev);
  // The line is written in place into room for its longest form: its fixed keys and up to nine
  // numbers, its strings escaped at worst, and its args.
  size_t most = 320 + span_args_.size() + json_string_bound(ev.name) + json_string_bound(ev.category);
  most += ev.arg_key_bytes + ev.arg_count * (4 + json_int_bound);
  for (uint8_t i = 0; i < ev.text_count; ++i)
    most += ev.texts[i].key.size() + 4 + json_string_bound(ev.texts[i].value());
  // Kernel ids are >= 2^30 (tid << 30), so they never meet the writer's own small ids.
  uint64_t id = ev.level ? ev.id : next_id_++;
  std::string_view who = who_text(ev, tid);
  append_line(out_.buffer(), most, [&](char* p) {
    auto key = [&](std::string_view k) {  // ,"k":
      *p++ = ',';
      *p++ = '"';
      p = put_raw(p, k);
      *p++ = '"';
      *p++ = ':';
    };
    p = id_text_.put(put_raw(p, "{\"id\":"), id);
    p = ts_text_.put(put_raw(p, who), ev.ts_us);
    p = put_int(put_raw(p, ",\"dur\":"), ev.dur_us);
    p = put_raw(p, span_args_);
    if (tid != ev.tid) {
      // On a lane: the thread it was done for, and the call that asked for it (on that thread's
      // track), in place of level and p_idx, which name a parent on the track they are drawn on.
      p = put_int(put_raw(p, ",\"submit_tid\":"), ev.tid);
      if (ev.level)
        p = put_int(put_raw(p, ",\"submit_id\":"), ev.parent);
    } else if (ev.level) {
      p = put_int(put_raw(p, ",\"level\":"), ev.level);
      p = put_int(put_raw(p, ",\"p_idx\":"), ev.parent);
    }
    for (uint8_t i = 0; i < ev.arg_count; ++i) {
      key(ev.args[i].key());
      p = put_int(p, ev.args[i].value);
    }
    for (uint8_t i = 0; i < ev.text_count; ++i) {
      const event_text& t = ev.texts[i];
      key(t.key);
      bool seen_plain = t.fixed.data() == plain_fixed_.data() && t.fixed.size() == plain_fixed_.size();
      if (!t.fixed.empty() && (seen_plain || json_plain(t.fixed))) {
        plain_fixed_ = t.fixed;
        p = put_plain_json_string(p, t.fixed);
      } else {
        p = put_json_string(p, t.value());
      }
    }
    if (ev.fhash)
      p = fhash_text_.put(put_raw(p, ",\"fhash\":"), ev.fhash);
    if (ev.fhash2)
      p = put_int(put_raw(p, ",\"fhash2\":"), ev.fhash2);
    return put_raw(p, "}}\n");
  });
  ++events_;
  ++pending_events_;
}

// A profile counter sample. Viewers draw every numeric arg of a "ph":"C" line as a series named
// by the line's name and id, per process: the id names the layer and file, so the samples of
// one interval (one per file) land on series of their own, and the file and host hashes sit
// beside args, not in them, so they are not drawn as values. dur is the calls' summed time, so a
// reader that adds up dur (dfanalyzer's I/O time) gets their time.
void pfw_writer::write_counter(const trace_event& ev, const trace_names& names)
{
  series_.assign(ev.category);
  auto name_file = [&](uint64_t fhash, std::string_view sep) {
    if (fhash == 0)
      return;
    // Counters of one file come together (profile_reader's order): its path is looked up once.
    if (fhash != series_path_.first || !series_path_.second)  // a file not named yet may be later
      series_path_ = {fhash, names.names.find(fhash)};
    const std::string* path = series_path_.second;
    series_.append(sep);
    series_.append(path ? *path : std::to_string(fhash));
  };
  name_file(ev.fhash, " ");
  name_file(ev.fhash2, " -> ");  // a copy's series names the file it wrote too
  std::string& b = out_.buffer();
  b.push_back('{');
  append_string_field(b, "id", series_, true);
  append_string_field(b, "name", ev.name);
  append_string_field(b, "cat", ev.category);
  append_field(b, "pid", ev.pid);
  append_field(b, "tid", ev.tid);
  append_field(b, "ts", ev.ts_us);
  append_field(b, "dur", ev.dur_us);
  b.append(",\"ph\":\"C\"");
  append_field(b, "hhash", hhash_);
  if (ev.fhash)
    append_field(b, "fhash", ev.fhash);
  if (ev.fhash2)
    append_field(b, "fhash2", ev.fhash2);
  b.append(",\"args\":{");
  for (uint8_t i = 0; i < ev.arg_count; ++i) append_field(b, ev.args[i].key(), ev.args[i].value, i == 0);
  b.append("}}\n");
  ++counters_;
  ++pending_counters_;
}

void pfw_writer::write_totals(const trace_event& ev, const trace_names& names)
{
  if (!status_)
    return;
  write_names_for(ev, names);
  std::string& b = out_.buffer();
  b.push_back('{');
  append_field(b, "id", next_id_++, true);
  append_string_field(b, "name", ev.name);
  append_string_field(b, "cat", ev.category);
  append_field(b, "pid", ev.pid);
  append_field(b, "tid", ev.tid);
  append_field(b, "ts", ev.ts_us);
  b.append(",\"ph\":\"M\",\"args\":{");
  append_field(b, "hhash", hhash_, true);
  for (uint8_t i = 0; i < ev.arg_count; ++i) append_field(b, ev.args[i].key(), ev.args[i].value);
  if (ev.fhash)
    append_field(b, "fhash", ev.fhash);
  b.append("}}\n");
}

void pfw_writer::give_up(result<> why)
{
  status_ = std::move(why);
  // What reached the file is what the members written whole held (with compression workers, a
  // member handed over before the failure may not have been written).
  out_.abandon();
  member_tally in_file = out_.written();
  unwritten_events_ += events_ - in_file.events;
  unwritten_counters_ += counters_ - in_file.counters;
  events_ = in_file.events;
  counters_ = in_file.counters;
  pending_events_ = pending_counters_ = 0;
}

result<> pfw_writer::flush()
{
  if (!status_)
    return status_;
  if (auto flushed = out_.flush_member({pending_events_, pending_counters_}); !flushed) {
    give_up(flushed);
    return status_;
  }
  pending_events_ = pending_counters_ = 0;
  return {};
}

result<> pfw_writer::flush_through()
{
  if (auto flushed = flush(); !flushed)
    return flushed;
  if (auto drained = out_.drain(); !drained) {
    give_up(drained);
    return status_;
  }
  return {};
}

result<> pfw_writer::maybe_flush(std::chrono::steady_clock::time_point now)
{
  if (out_.buffered() < member_bytes && (out_.buffered() == 0 || now - last_flush_ < member_age))
    return {};
  last_flush_ = now;
  return flush();
}

result<> pfw_writer::finish(const loss_counts& lost)
{
  if (status_ && out_.removed()) {
    give_up(fail("the trace file '" + out_.path() + "' was removed while it was written: its " +
                 std::to_string(events_) + " events are gone"));
    unwritten_events_ += std::exchange(events_, 0);
    unwritten_counters_ += std::exchange(counters_, 0);
  }
  if (!status_) {
    (void)out_.close();
    return status_;
  }
  begin_metadata("end", root_pid_, root_pid_, epoch_now_us());
  std::string& b = out_.buffer();
  append_field(b, "events_written", events_);
  append_field(b, "counters_written", counters_);
  append_field(b, "events_lost", lost.total());
  lost.for_each([&](std::string_view kind, uint64_t n) { append_field(b, "lost_" + std::string(kind), n); });
  b.append("}}\n]\n");
  if (auto closed = out_.close({pending_events_, pending_counters_}); !closed) {
    give_up(closed);
    return status_;
  }
  pending_events_ = pending_counters_ = 0;
  return {};
}

}  // namespace dc
