// The collector alone: replays a recording of a real run's ring (DATACRUMBS_RECORD_RING, see
// collect/ring_recording.h) through the decoder, the trace writer and the summary into a real
// .pfw.gz, batch by batch as the formatter thread gets them, and reports events per second of
// wall and CPU time, and the end of the run (held spans, end record, last member, line index)
// on its own. The line index is built by the writer as it writes (as a run does), or with
// --reread-index by inflating the closed trace again (as runs did before), or not at all.
// bench/run_collector.sh records the runs and writes docs/benchmarks.md.
//
// usage: collector_bench RECORDING OUT.pfw.gz [--threads N] [--level L] [--rounds R]
//                        [--no-index | --reread-index] [--clock-offset NS]
// --clock-offset fixes the REALTIME-MONOTONIC offset (else measured, so two replays' ts and
// ts+dur may differ by 1 us): two builds' traces of one recording can then be compared byte
// for byte (but for the HH and end lines, which carry the time of the replay).
// prints one line per round: key=value pairs (events, wall_s, cpu_s, ...).
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "collect/decoder.h"
#include "collect/ring_recording.h"
#include "core/clock.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "sink/trace_index.h"

namespace {

struct options {
  std::string recording, out;
  int threads = 0;
  int level = -1;  // the tool's own
  int rounds = 1;
  enum class index_mode { writer, reread, none } index = index_mode::writer;
  std::optional<dc::clock_offset> offset;
};

double cpu_seconds()
{
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

// The calling thread's CPU time: the formatter's (decode, summary, format), the replay's critical
// path while the compression and index threads keep up.
double thread_cpu_seconds()
{
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int usage(const char* why)
{
  std::fprintf(stderr,
               "collector_bench: %s\nusage: collector_bench RECORDING OUT.pfw.gz [--threads N] [--level L] "
               "[--rounds R] [--no-index | --reread-index] [--clock-offset NS]\n",
               why);
  return 2;
}

// One replay; prints its line. False on an error (printed).
bool replay(const options& o, const std::vector<std::string>& batches)
{
  using clock = std::chrono::steady_clock;
  auto file = dc::gzip_member_writer::create(
      o.out, o.level >= 0 ? o.level : dc::gzip_member_writer::default_level, o.threads);
  if (!file) {
    std::fprintf(stderr, "collector_bench: %s\n", file.error().message.c_str());
    return false;
  }
  if (o.index == options::index_mode::writer)
    file->index_to(o.out + ".zindex");
  dc::pfw_writer writer(std::move(*file), "bench", 1);
  dc::summary_builder summary;
  dc::decoder dec(o.offset ? *o.offset : dc::measure_clock_offset(), {&writer, &summary});
  double cpu0 = cpu_seconds(), format0 = thread_cpu_seconds();
  auto t0 = clock::now();
  for (const std::string& batch : batches) {
    dc::decode_batch(dec, batch);
    if (auto flushed = writer.maybe_flush(clock::now()); !flushed) {
      std::fprintf(stderr, "collector_bench: %s\n", flushed.error().message.c_str());
      return false;
    }
  }
  auto t1 = clock::now();
  double cpu1 = cpu_seconds(), format1 = thread_cpu_seconds();
  dec.finish_trace();
  dec.write_page_cache_counters(0);
  auto finished = writer.finish({});
  auto t2 = clock::now();
  double cpu2 = cpu_seconds();
  if (finished && o.index == options::index_mode::writer)
    finished = writer.file().index_status();
  if (finished && o.index == options::index_mode::reread)
    finished = dc::write_trace_index(writer.file().path(), writer.file().members(),
                                     writer.file().path() + ".zindex");
  auto t3 = clock::now();
  if (!finished) {
    std::fprintf(stderr, "collector_bench: %s\n", finished.error().message.c_str());
    return false;
  }
  auto secs = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
  uint64_t events = writer.events_written() + writer.counters_written();
  uint64_t text = 0, gz = 0;
  for (const auto& m : writer.file().members()) {
    text += m.text_size;
    gz += m.compressed_size;
  }
  // Events per second over the whole replay up to a closed trace: the run's drain and its end.
  double wall = secs(t2 - t0), cpu = cpu2 - cpu0;
  std::printf(
      "events=%llu batches=%zu wall_s=%.3f cpu_s=%.3f events_per_s_wall=%.0f events_per_s_cpu=%.0f "
      "stream_wall_s=%.3f stream_cpu_s=%.3f format_cpu_s=%.3f finish_s=%.3f index_s=%.3f end_s=%.3f "
      "text_bytes=%llu "
      "gz_bytes=%llu "
      "malformed=%llu\n",
      static_cast<unsigned long long>(events), batches.size(), wall, cpu, events / wall, events / cpu,
      secs(t1 - t0), cpu1 - cpu0, format1 - format0, secs(t2 - t1), secs(t3 - t2), secs(t3 - t1),
      static_cast<unsigned long long>(text), static_cast<unsigned long long>(gz),
      static_cast<unsigned long long>(dec.malformed()));
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv)
{
  options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto number = [&](int& into) {
      if (i + 1 >= argc)
        return false;
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 1000)
        return false;
      into = static_cast<int>(v);
      return true;
    };
    if (a == "--threads" || a == "--level" || a == "--rounds") {
      if (!number(a == "--threads" ? o.threads : a == "--level" ? o.level : o.rounds))
        return usage((a + " needs a number").c_str());
    } else if (a == "--clock-offset") {
      char* end = nullptr;
      long long v = i + 1 < argc ? std::strtoll(argv[++i], &end, 10) : 0;
      if (!end || *end != '\0')
        return usage("--clock-offset needs a number of nanoseconds");
      o.offset = dc::clock_offset{v};
    } else if (a == "--no-index" || a == "--reread-index") {
      o.index = a == "--no-index" ? options::index_mode::none : options::index_mode::reread;
    } else if (a.starts_with("-")) {
      return usage(("unknown option " + a).c_str());
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2)
    return usage("needs RECORDING and OUT.pfw.gz");
  o.recording = positional[0];
  o.out = positional[1];
  auto batches = dc::read_ring_recording(o.recording);
  if (!batches) {
    std::fprintf(stderr, "collector_bench: %s\n", batches.error().message.c_str());
    return 1;
  }
  for (int r = 0; r < o.rounds; ++r)
    if (!replay(o, *batches))
      return 1;
  return 0;
}
