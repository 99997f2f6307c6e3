// The live views on hand-made events: --print's line fields, the live view's interval and
// run-so-far sums, its frame's JSON round trip, and an output whose reader went away.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include "core/category.h"
#include "sink/event_print.h"
#include "sink/live_view.h"

namespace dc {
namespace {

struct tables {
  name_table names;
  process_table processes;
  trace_names view() const { return {names, processes}; }
};

trace_event read_event(tables& t, uint32_t pid, std::string_view path, uint64_t bytes, int64_t offset)
{
  trace_event ev;
  ev.name = "pread64";
  ev.category = category::posix;
  ev.pid = ev.tid = pid;
  ev.ts_us = 1'700'000'000'123'456;
  ev.dur_us = 17;
  ev.bytes = bytes;
  ev.dir = io_dir::read;
  ev.fhash = t.names.add(path);
  ev.add_arg("offset", offset);
  ev.add_arg("ret", static_cast<int64_t>(bytes));
  return ev;
}

TEST(event_print, ALineHasTheSeedsColumnsThenLayerAndFile)
{
  tables t;
  t.processes[42].pid = 42;
  t.processes[42].comm = "reader";
  t.processes[42].threads[42].comm = "reader";
  std::string line;
  append_event_line(line, read_event(t, 42, "/data/a b", 4096, 8192), t.view(), "MinIO");
  std::istringstream s(line);
  std::string time, system, name, pid, tid, comm, size, offset, lat, ret, layer, file;
  s >> time >> system >> name >> pid >> tid >> comm >> size >> offset >> lat >> ret >> layer;
  std::getline(s >> std::ws, file);
  EXPECT_EQ(time.substr(time.find('.')), ".123456");
  EXPECT_EQ(system, "MinIO");
  EXPECT_EQ(name, "pread64");
  EXPECT_EQ(pid + tid + comm, "4242reader");
  EXPECT_EQ(size + "/" + offset + "/" + lat + "/" + ret, "4096/8192/17/4096");
  EXPECT_EQ(layer, "POSIX");
  EXPECT_EQ(file, "/data/a b");
  // Columns line up with the header's.
  EXPECT_EQ(line.find(" 4096 "), event_print_header().find(" SIZE "));
}

TEST(live_view, AFrameSumsItsIntervalAndTheRunSoFar)
{
  tables t;
  t.processes[7].pid = 7;
  t.processes[7].comm = "app";
  std::vector<live_frame> frames;
  live_view view([] { return live_kernel_facts{3, 1}; }, [&](const live_frame& f) { frames.push_back(f); });
  view.add(read_event(t, 7, "/a", 8192, 0), t.view());  // 2 pages
  view.add(read_event(t, 7, "/b", 100, 0), t.view());   // 1 page
  trace_event device = read_event(t, 7, "/a", 8192, 0);
  device.category = category::block;  // the device's side of the first read
  view.add(device, t.view());
  view.tick(std::chrono::steady_clock::now() + std::chrono::seconds(2), t.view());
  view.add(read_event(t, 7, "/a", 4096, 4096), t.view());
  view.finish(t.view());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].events, 3u);
  EXPECT_EQ(frames[0].processes[0].read_bytes, 8192u + 100) << "a process's bytes are its application's";
  EXPECT_EQ(frames[0].processes[0].ops, 3u);
  ASSERT_EQ(frames[0].layers.size(), 2u);
  EXPECT_EQ(frames[0].layers[0].read_bytes + frames[0].layers[1].read_bytes, 8192u + 100 + 8192);
  ASSERT_EQ(frames[0].files.size(), 2u);
  EXPECT_EQ(frames[0].files[0].name, "/a");
  EXPECT_EQ(frames[0].files[0].read_bytes, 8192u);
  EXPECT_EQ(frames[0].processes[0].name, "7 app");
  const live_frame& last = frames[1];
  EXPECT_TRUE(last.ended);
  EXPECT_EQ(last.events, 4u);
  EXPECT_EQ(last.interval_events, 1u);
  EXPECT_EQ(last.lost, 3u);
  ASSERT_EQ(last.totals.size(), 2u);
  EXPECT_EQ(last.totals[0].name, "POSIX");
  EXPECT_EQ(last.totals[0].read_bytes, 8192u + 100 + 4096);
  EXPECT_EQ(last.totals[0].ops, 3u);
  EXPECT_EQ(last.pages_read, 4u);
  EXPECT_DOUBLE_EQ(*live_hit_ratio(last), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(*live_amplification(last, true), 8192.0 / (8192 + 100 + 4096));
  EXPECT_FALSE(live_amplification(last, false)) << "the app wrote nothing: no ratio";
  auto back = live_frame_from_json(live_frame_json(last));
  ASSERT_TRUE(back);
  EXPECT_EQ(live_text(*back), live_text(last));
  EXPECT_FALSE(live_frame_from_json(nlohmann::json{{"seq", 1}}));
}

TEST(live_view, ACopyReadsItsInputAndWritesItsOutput)
{
  tables t;
  std::vector<live_frame> frames;
  live_view view(nullptr, [&](const live_frame& f) { frames.push_back(f); });
  trace_event copy = read_event(t, 7, "/in", 1'000'000, 0);  // copy_file_range(in -> out)
  copy.name = "copy_file_range";
  copy.fhash2 = t.names.add("/out");
  copy.dir2 = io_dir::write;
  view.add(copy, t.view());
  view.finish(t.view());
  ASSERT_EQ(frames.size(), 1u);
  const live_frame& f = frames[0];
  ASSERT_EQ(f.files.size(), 2u);
  std::map<std::string, live_row> files;
  for (const live_row& r : f.files) files[r.name] = r;
  EXPECT_EQ(files["/in"].read_bytes, 1'000'000u);
  EXPECT_EQ(files["/in"].write_bytes, 0u);
  EXPECT_EQ(files["/out"].read_bytes, 0u);
  EXPECT_EQ(files["/out"].write_bytes, 1'000'000u) << "the output is written, not its input";
  EXPECT_EQ(files["/out"].ops, 1u);
  EXPECT_EQ(f.processes[0].read_bytes, 1'000'000u);
  EXPECT_EQ(f.processes[0].write_bytes, 1'000'000u);
  ASSERT_EQ(f.totals.size(), 1u);
  EXPECT_EQ(f.totals[0].read_bytes + f.totals[0].write_bytes, 2'000'000u)
      << "as the summary's flows count it";
}

TEST(async_output, AReaderThatWentAwayIsAnErrorNotASignal)
{
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  async_output out(fds[1], "the pipe", true);
  EXPECT_TRUE(out.write("line\n"));
  auto done = out.finish();
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("the pipe"), std::string::npos);
}

}  // namespace
}  // namespace dc
