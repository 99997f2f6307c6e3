// The decoders fed with records shaped as the BPF side writes them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "collect/decoder.h"
#include "core/hash.h"
#include "sink/pfw_writer.h"
#include "sink/summary.h"
#include "unit/decoder_fixture.h"
#include "unit/trace_reader.h"

namespace dc {
namespace {

TEST(Paths, JoinsLeafFirstComponents)
{
  EXPECT_EQ(join_components(std::string_view("c\0b\0a\0", 6)), "/a/b/c");
  EXPECT_EQ(join_components(std::string_view("", 0)), "/");
  EXPECT_EQ(join_components(std::string_view("x\0/\0", 4)), "/x");
}

TEST(Paths, ResolvesRelativeToTheBase)
{
  EXPECT_EQ(resolve_path("file", "/home/u"), "/home/u/file");
  EXPECT_EQ(resolve_path("../etc/./passwd", "/home/u"), "/home/etc/passwd");
  EXPECT_EQ(resolve_path("/abs//x/", "/ignored"), "/abs/x");
  EXPECT_EQ(resolve_path("d/", "/"), "/d");
}

constexpr dc_file_ref data_file{1234, (8u << 20) | 1, S_IFREG};

TEST_F(decoder_fixture, OpenNamesTheFileAndLaterCallsUseIt)
{
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("data.bin\0dir\0", 13), data_file);
  feed_syscall(SYS_openat, 11, 3, {uint64_t(-100), 0, 0x241, 0644, 0, 0}, data_file);
  feed_syscall(SYS_pwrite64, 11, 4096, {3, 0, 4096, 8192, 0, 0}, data_file);
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["name"], "openat");
  EXPECT_EQ(ev[0]["args"]["dirfd"], -100);
  EXPECT_EQ(ev[0]["args"]["flags"], 0x241);
  EXPECT_EQ(ev[0]["args"]["fhash"], string_hash("/dir/data.bin"));
  EXPECT_EQ(ev[1]["args"]["fhash"], string_hash("/dir/data.bin"));
  EXPECT_EQ(ev[1]["args"]["offset"], 8192);
  EXPECT_EQ(ev[1]["args"]["ret"], 4096);
  EXPECT_EQ(ev[1]["tid"], 11);
  EXPECT_EQ(ev[1]["pid"], 10);
  EXPECT_EQ(ev[1]["ts"], 5000);
  EXPECT_EQ(ev[1]["dur"], 2);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("pwrite64").bytes, 4096u);
}

TEST_F(decoder_fixture, FailedCallsUseThePathTheyWereGivenOncePerCall)
{
  feed_path(DC_REC_CALL_PATH, 12, std::string_view("missing\0", 8), std::string_view("u\0home\0", 7));
  feed_syscall(SYS_openat, 12, -2, {uint64_t(-100), 0, 0, 0, 0, 0});
  feed_syscall(SYS_read, 12, -9, {uint64_t(-1), 0, 10, 0, 0, 0});  // no path: must not inherit one
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["args"]["ret"], -2);
  EXPECT_EQ(ev[0]["args"]["fhash"], string_hash("/home/u/missing"));
  EXPECT_FALSE(ev[1]["args"].contains("fhash"));
  EXPECT_EQ(ev[1]["args"]["fd"], -1);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("read").bytes, 0u);
}

TEST_F(decoder_fixture, RenameCarriesBothPaths)
{
  feed_path(DC_REC_CALL_PATH, 13, std::string_view("/a/old\0", 7), "", {}, 0);
  feed_path(DC_REC_CALL_PATH, 13, std::string_view("new\0", 4), std::string_view("b\0", 2), {}, 1);
  feed_syscall(SYS_renameat2, 13, 0, {uint64_t(-100), 0, uint64_t(-100), 0, 0, 0});
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["args"]["fhash"], string_hash("/a/old"));
  EXPECT_EQ(ev[0]["args"]["fhash2"], string_hash("/b/new"));
}

// The decoder builds each call's event in one it keeps: a call has its own args and files only,
// none of the call before (a rename's two paths, then a read of no file).
TEST_F(decoder_fixture, ACallsLineHasOnlyItsOwnArgsAndFiles)
{
  feed_path(DC_REC_CALL_PATH, 13, std::string_view("/a/old\0", 7), "", {}, 0);
  feed_path(DC_REC_CALL_PATH, 13, std::string_view("new\0", 4), std::string_view("b\0", 2), {}, 1);
  feed_syscall(SYS_renameat2, 13, 0, {uint64_t(-100), 0, uint64_t(-100), 0, 0, 0});
  feed_syscall(SYS_read, 13, 7, {4, 0, 7, 0, 0, 0});
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1]["name"], "read");
  EXPECT_FALSE(ev[1]["args"].contains("fhash"));
  EXPECT_FALSE(ev[1]["args"].contains("fhash2"));
  EXPECT_EQ(ev[1]["args"]["ret"], 7);
  // Each key once in each line: a parser keeps the last of a repeated key, so count the text.
  std::string text = test::read_gzip_members(path).text;
  for (size_t at = text.find("\"ph\":\"X\""); at != std::string::npos;
       at = text.find("\"ph\":\"X\"", at + 1)) {
    size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
    std::string line = text.substr(begin, end - begin);
    size_t rets = 0;
    for (size_t r = line.find("\"ret\":"); r != std::string::npos; r = line.find("\"ret\":", r + 1)) ++rets;
    EXPECT_EQ(rets, 1u) << line;
  }
}

TEST_F(decoder_fixture, SocketsArePseudoFilesNamedLikeProc)
{
  dc_file_ref sock{777, 9, S_IFSOCK};
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("", 0), sock);
  feed_syscall(SYS_socket, 11, 5, {2, 1, 0, 0, 0, 0}, sock);
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["args"]["fhash"], string_hash("socket:[777]"));
}

TEST_F(decoder_fixture, SocketBytesAreNotFileIoInAmplification)
{
  dc_file_ref sock{777, 9, S_IFSOCK};
  feed_syscall(SYS_write, 11, 100, {5, 0, 100, 0, 0, 0}, sock);
  feed_syscall(SYS_write, 11, 40, {3, 0, 40, 0, 0, 0}, data_file);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("write").bytes, 140u);
  EXPECT_EQ(summary.totals().flows.at("POSIX").write_bytes, 40u);
}

// A copy reads its input (fhash) and writes its output (fhash2), as an event and as a counter;
// a socket or pipe end moves no file data. sendfile's output is its first argument.
TEST_F(decoder_fixture, CopiesReadTheirInputAndWriteTheirOutput)
{
  dc_file_ref out{99, (8u << 20) | 1, S_IFREG}, sock{777, 9, S_IFSOCK};
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("data.bin\0dir\0", 13), data_file);
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("out\0dir\0", 8), out);
  feed_syscall(SYS_copy_file_range, 11, 5000, {3, 0, 4, 0, 8192, 0}, data_file, out);
  feed_syscall(SYS_sendfile, 11, 700, {5, 3, 0, 700, 0, 0}, data_file, sock);
  dc_profile_key key{};
  key.epoch = 1;
  key.file = data_file;
  key.file2 = out;
  key.tgid = 10;
  key.layer = DC_PROF_POSIX;
  key.op = SYS_copy_file_range;
  dec->decode_profile(key, {2, 10'000, 300, 1}, 1'000'000);
  auto files = summary.files().json(dec->state().names);
  EXPECT_EQ(files["/dir/data.bin"]["POSIX"]["read_bytes"], 6000);
  EXPECT_EQ(files["/dir/data.bin"]["POSIX"]["reads"], 4);
  EXPECT_EQ(files["/dir/data.bin"]["POSIX"]["write_bytes"], 0);
  EXPECT_EQ(files["/dir/out"]["POSIX"]["write_bytes"], 5300);
  EXPECT_EQ(files["/dir/out"]["POSIX"]["writes"], 3);
  EXPECT_EQ(files["/dir/out"]["POSIX"]["read_bytes"], 0);
  EXPECT_EQ(summary.totals().flows.at("POSIX").read_bytes, 6000u);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("copy_file_range").count, 3u);  // calls, not files
  ASSERT_TRUE(writer->finish({}));
  auto lines = test::parse_trace_text(test::read_gzip_members(path).text).lines;
  std::vector<nlohmann::json> spans, samples;
  for (auto& j : lines) (j["ph"] == "X" ? spans : samples).push_back(j);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["args"]["fhash"], string_hash("/dir/data.bin"));
  EXPECT_EQ(spans[0]["args"]["fhash2"], string_hash("/dir/out"));
  EXPECT_EQ(spans[1]["args"]["fd"], 3);  // sendfile(out_fd 5, in_fd 3)
  EXPECT_EQ(spans[1]["args"]["out_fd"], 5);
  EXPECT_EQ(spans[1]["args"]["fhash2"], string_hash("socket:[777]"));
  auto sample = std::ranges::find(samples, "C", [](const auto& j) { return j["ph"]; });
  ASSERT_NE(sample, samples.end());
  EXPECT_EQ((*sample)["fhash2"], string_hash("/dir/out"));
  EXPECT_EQ((*sample)["id"], "POSIX /dir/data.bin -> /dir/out");
}

TEST_F(decoder_fixture, TasksBuildTheProcessTable)
{
  feed_task(DC_TASK_EXEC, 10, 10, 1, "app", std::string_view("app\0-x\0", 7));
  feed_task(DC_TASK_THREAD, 10, 14, 10, "worker");
  feed_task(DC_TASK_FORK, 20, 20, 10, "app");
  feed_task(DC_TASK_EXIT, 20, 20, 0, "app");
  const auto& p = dec->state().processes.table();
  EXPECT_EQ(p.at(10).command, "app -x");
  EXPECT_EQ(p.at(10).parent, 1u);
  EXPECT_EQ(p.at(10).threads.at(14).comm, "worker");
  EXPECT_EQ(p.at(20).parent, 10u);
  EXPECT_EQ(p.at(20).command, "app -x");
  EXPECT_EQ(p.at(20).exit_status, 0);
}

TEST_F(decoder_fixture, BlockRequestsAreChargedToTheirProcessAndFile)
{
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("data.bin\0dir\0", 13), data_file);
  dc_block_event b{};
  b.hdr = header(DC_REC_BLOCK, 10, 9'000'000);
  b.service_ns = 250'000;
  b.queue_ns = 40'000;
  b.sector = 2048;
  b.file = data_file;
  b.bytes = 1 << 20;
  b.dev = (7u << 20) | 3;
  b.op = DC_BLOCK_WRITE;
  b.cause = DC_BLOCK_WRITEBACK;
  dec->decode(&b, sizeof(b));
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["cat"], "BLOCK");
  EXPECT_EQ(ev[0]["name"], "write");
  EXPECT_EQ(ev[0]["ts"], 9000);
  EXPECT_EQ(ev[0]["dur"], 250);
  EXPECT_EQ(ev[0]["args"]["bytes"], 1 << 20);
  EXPECT_EQ(ev[0]["args"]["queue_us"], 40);
  EXPECT_EQ(ev[0]["args"]["major"], 7);
  EXPECT_EQ(ev[0]["args"]["minor"], 3);
  EXPECT_EQ(ev[0]["args"]["writeback"], 1);
  EXPECT_EQ(ev[0]["args"]["fhash"], string_hash("/dir/data.bin"));
  EXPECT_EQ(summary.totals().flows.at("BLOCK").write_bytes, 1u << 20);
  EXPECT_FALSE(ev[0]["args"].contains("end_unseen"));
}

// The kernel ran no program for this request's completion: it is written when its address starts
// another request, with its bytes, and counted in the layer's bytes but not in its latencies.
TEST_F(decoder_fixture, ABlockRequestWhoseEndWentUnseenCountsWithoutALatency)
{
  dc_block_event b{};
  b.hdr = header(DC_REC_BLOCK, 10, 9'000'000);
  b.service_ns = 120'000;
  b.bytes = 8192;
  b.op = DC_BLOCK_READ;
  dec->decode(&b, sizeof(b));
  b.service_ns = 0;
  b.end = DC_BLOCK_END_UNSEEN;
  b.bytes = 4096;
  dec->decode(&b, sizeof(b));
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_FALSE(ev[0]["args"].contains("end_unseen"));
  EXPECT_EQ(ev[1]["args"]["end_unseen"], 1);
  EXPECT_EQ(ev[1]["dur"], 0);
  EXPECT_EQ(ev[1]["args"]["bytes"], 4096);
  const op_stats& reads = summary.totals().ops.at("BLOCK").at("read");
  EXPECT_EQ(reads.count, 2u);
  EXPECT_EQ(reads.bytes, 8192u + 4096u);
  EXPECT_EQ(reads.latency.count, 1u);
}

TEST_F(decoder_fixture, ARunOfStagedSyscallRecordsIsEveryCallInOrder)
{
  std::vector<dc_staged_record> run(3);
  for (size_t i = 0; i < run.size(); ++i) {
    dc_syscall_event& s = run[i].syscall;
    s.hdr = header(DC_REC_SYSCALL, 11, 5'000'000 + i * 1'000);
    s.ret = static_cast<int64_t>(100 + i);
    s.args[2] = 100 + i;
    s.file_a = data_file;
    s.nr = SYS_read;
    s.level = 1;
    s.parent = -1;
    s.id = (11ull << 30) + 2 * i + 1;
  }
  // The FS operation that ended with the second read is staged just before it; it is written
  // after it, so viewers that nest by time nest it inside (same start, same end).
  dc_fs_event fs{};
  fs.hdr = header(DC_REC_FS, 11, 5'001'000);
  fs.nest = {
      .id = run[1].syscall.id + 1, .parent = static_cast<int64_t>(run[1].syscall.id), .level = 2, .flags = 0};
  fs.op = DC_FS_BUFFERED_READ;
  fs.file = data_file;
  fs.ret = 101;
  fs.first_page = 2;
  fs.last_page = 3;
  run.insert(run.begin() + 1, dc_staged_record{.fs = fs});
  feed_staged(run);
  // A run cut inside a record is not trusted at all.
  feed_staged(run, 8);
  EXPECT_EQ(dec->malformed(), 1u);
  auto ev = events();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[2]["cat"], "FS");
  EXPECT_EQ(ev[2]["name"], "buffered_read");
  EXPECT_EQ(ev[2]["args"]["first_page"], 2);
  EXPECT_EQ(ev[2]["args"]["last_page"], 3);
  EXPECT_EQ(ev[2]["args"]["p_idx"], ev[1]["id"]);
  ev.erase(ev.begin() + 2);
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i]["name"], "read");
    EXPECT_EQ(ev[i]["ts"], 5'000 + i);
    EXPECT_EQ(ev[i]["args"]["ret"], 100 + i);
  }
}

// One event per call: a buffered read or write the kernel folded into its call's record is
// written as args of the call, and counted in the FS layer as its own event was (a read at the
// end of the file moves nothing: none of the read before it is counted again).
TEST_F(decoder_fixture, AFoldedBufferedReadIsArgsOfItsCallAndCountedInTheFsLayer)
{
  feed_path(DC_REC_FILE_NAME, 11, "", std::string_view("data.bin\0dir\0", 13), data_file);
  std::vector<dc_staged_record> run(3);
  for (size_t i = 0; i < run.size(); ++i) {
    dc_syscall_event& s = run[i].syscall;
    s.hdr = header(DC_REC_SYSCALL, 11, 5'000'000 + i * 10'000);
    s.dur_ns = 3'000;
    s.file_a = data_file;
    s.level = 1;
    s.parent = -1;
    s.id = (11ull << 30) + i + 1;
  }
  run[0].syscall.nr = SYS_pread64;
  run[0].syscall.ret = 8192;
  run[0].syscall.args[2] = 8192;
  run[0].syscall.args[3] = 4096;
  run[0].syscall.fs = {.first = 1, .page_span = 1, .op = DC_FS_BUFFERED_READ};
  run[1].syscall.nr = SYS_write;
  run[1].syscall.ret = 100;
  run[1].syscall.args[2] = 100;
  run[1].syscall.fs = {.first = 12'345, .page_span = 0, .op = DC_FS_BUFFERED_WRITE};
  run[2].syscall.nr = SYS_pread64;
  run[2].syscall.ret = 0;
  run[2].syscall.args[2] = 4096;
  run[2].syscall.args[3] = 1 << 20;
  run[2].syscall.fs = {.first = 256, .page_span = 0, .op = DC_FS_BUFFERED_READ};
  feed_staged(run);
  auto ev = events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0]["name"], "pread64");
  EXPECT_EQ(ev[0]["args"]["fs"], "buffered_read");
  EXPECT_EQ(ev[0]["args"]["first_page"], 1);
  EXPECT_EQ(ev[0]["args"]["last_page"], 2);
  EXPECT_FALSE(ev[0]["args"].contains("fhash2"));
  EXPECT_EQ(ev[1]["name"], "write");
  EXPECT_EQ(ev[1]["args"]["fs"], "buffered_write");
  EXPECT_EQ(ev[1]["args"]["fs_offset"], 12'345);
  const auto& fs = summary.totals().ops.at("FS");
  EXPECT_EQ(fs.at("buffered_read").count, 2u);
  EXPECT_EQ(fs.at("buffered_read").bytes, 8192u);
  EXPECT_EQ(fs.at("buffered_read").time_us, 6u);
  EXPECT_EQ(fs.at("buffered_write").bytes, 100u);
  EXPECT_EQ(summary.totals().flows.at("FS").read_bytes, 8192u);
  EXPECT_EQ(summary.totals().flows.at("FS").write_bytes, 100u);
}

TEST_F(decoder_fixture, ShortRecordsAreCountedNotTrusted)
{
  dc_record_header h = header(DC_REC_SYSCALL, 1);
  dec->decode(&h, sizeof(h));
  dec->decode(&h, 3);
  EXPECT_EQ(dec->malformed(), 2u);
  EXPECT_TRUE(events().empty());
}

}  // namespace
}  // namespace dc
