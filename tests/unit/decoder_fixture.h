// A decoder writing to a trace file and a summary, fed with records shaped as the BPF side
// writes them (collect_unit_tests).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "collect/decoder.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "unit/trace_reader.h"

namespace dc {

struct decoder_fixture : ::testing::Test {
  std::string path =
      (std::filesystem::temp_directory_path() / ("d." + std::to_string(getpid()) + ".pfw.gz")).string();
  summary_builder summary;
  std::optional<pfw_writer> writer;
  std::optional<decoder> dec;

  void SetUp() override
  {
    auto out = gzip_member_writer::create(path);
    ASSERT_TRUE(out);
    writer.emplace(std::move(*out), "host", 10);
    dec.emplace(clock_offset{0}, event_sinks{&*writer, &summary});
  }
  void TearDown() override { std::filesystem::remove(path); }

  std::vector<nlohmann::json> events()
  {
    EXPECT_TRUE(writer->finish({}));
    std::vector<nlohmann::json> out;
    for (auto& j : test::parse_trace_text(test::read_gzip_members(path).text).lines)
      if (j["ph"] == "X")
        out.push_back(j);
    return out;
  }

  uint32_t tgid = 10;          // the process of the records made next
  uint64_t ts_ns = 5'000'000;  // and their kernel time

  dc_record_header header(uint32_t kind, uint32_t tid) const { return header(kind, tid, ts_ns); }
  dc_record_header header(uint32_t kind, uint32_t tid, uint64_t ts) const { return {kind, tgid, tid, 0, ts}; }

  void feed_syscall(long nr, uint32_t tid, int64_t ret, std::array<uint64_t, 6> args, dc_file_ref a = {},
                    dc_file_ref b = {})
  {
    dc_syscall_event ev{};
    ev.hdr = header(DC_REC_SYSCALL, tid);
    ev.dur_ns = 2'500;
    ev.ret = ret;
    std::memcpy(ev.args, args.data(), sizeof(ev.args));
    ev.file_a = a;
    ev.file_b = b;
    ev.nr = static_cast<uint32_t>(nr);
    feed_staged({dc_staged_record{.syscall = ev}});
  }

  // A DC_REC_STAGED ring record: the run header, then the records; `cut` bytes short.
  void feed_staged(const std::vector<dc_staged_record>& records, size_t cut = 0)
  {
    std::vector<char> buf(sizeof(dc_record_header) + records.size() * sizeof(dc_staged_record));
    dc_record_header run{DC_REC_STAGED, 0, 0, 0, 0};
    std::memcpy(buf.data(), &run, sizeof(run));
    std::memcpy(buf.data() + sizeof(run), records.data(), records.size() * sizeof(dc_staged_record));
    dec->decode(buf.data(), buf.size() - cut);
  }

  void feed_path(uint32_t kind, uint32_t tid, std::string_view raw, std::string_view components,
                 dc_file_ref f = {}, uint8_t slot = 0)
  {
    dc_path_record rec{};
    rec.hdr = header(kind, tid);
    rec.file = f;
    std::memcpy(rec.data, raw.data(), raw.size());
    std::memcpy(rec.data + raw.size(), components.data(), components.size());
    rec.raw_len = static_cast<uint16_t>(raw.size());
    rec.len = static_cast<uint16_t>(raw.size() + components.size());
    rec.slot = slot;
    dec->decode(&rec, offsetof(dc_path_record, data) + rec.len);
  }

  void feed_task(uint32_t op, uint32_t task_tgid, uint32_t tid, uint32_t ppid, std::string_view comm,
                 std::string_view argv = {})
  {
    dc_task_event ev{};
    ev.hdr = header(DC_REC_TASK, tid);
    ev.hdr.tgid = task_tgid;
    ev.op = op;
    ev.ppid = ppid;
    std::memcpy(ev.comm, comm.data(), std::min(comm.size(), sizeof(ev.comm) - 1));
    std::memcpy(ev.argv, argv.data(), argv.size());
    ev.argv_len = static_cast<uint16_t>(argv.size());
    dec->decode(&ev, sizeof(ev));
  }
};

}  // namespace dc
