// Processes as the decoder keys them: a reused pid is a new process, and exited processes past
// the detail kept are folded by command with their totals intact (collect/process_instances.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "unit/decoder_fixture.h"

namespace dc {
namespace {

constexpr dc_file_ref data_file{1234, (8u << 20) | 1, S_IFREG};

struct process_instances : decoder_fixture {
  // `reads` preads of 100 bytes by process `pid` (its only thread), forked from 1 as `comm`;
  // it exits unless `stays`.
  void process(uint32_t pid, std::string_view comm, int reads, bool stays = false)
  {
    feed_task(DC_TASK_FORK, pid, pid, 1, comm);
    tgid = pid;
    for (int i = 0; i < reads; ++i) feed_syscall(SYS_pread64, pid, 100, {3, 0, 100, 0, 0, 0}, data_file);
    if (!stays)
      feed_task(DC_TASK_EXIT, pid, pid, 0, comm);
  }

  uint64_t reads_of(const nlohmann::json& p)
  {
    return p.at("layers").at("POSIX").at("pread64").at("count").get<uint64_t>();
  }
};

TEST_F(process_instances, AReusedPidIsAnotherProcess)
{
  process(30, "first", 2);
  process(30, "second", 5);
  const auto& table = dec->state().processes.table();
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table.at(30).comm, "first");
  EXPECT_EQ(table.at(instance_key(30, 1)).comm, "second");
  EXPECT_EQ(table.at(instance_key(30, 1)).pid, 30u);
  nlohmann::json j = summary_json(summary, table, dec->state().names, run_facts{});
  EXPECT_EQ(reads_of(j["processes"]["30"]), 2u);
  EXPECT_EQ(reads_of(j["processes"]["30.2"]), 5u);
  EXPECT_EQ(j["processes"]["30.2"]["pid"], 30);
  EXPECT_EQ(j["processes_in_all"], 2);
  // The trace names the pid again, for its second process.
  ASSERT_TRUE(writer->finish({}));
  std::vector<std::string> names;
  for (auto& l : test::parse_trace_text(test::read_gzip_members(path).text).lines)
    if (l["name"] == "process_name" && l["pid"] == 30)
      names.push_back(l["args"]["name"].get<std::string>());
  EXPECT_EQ(names, (std::vector<std::string>{"first", "second"}));
}

TEST_F(process_instances, AnExecContinuesItsProcessButNotAnExitedOne)
{
  process(40, "sh", 1, true);
  feed_task(DC_TASK_EXEC, 40, 40, 1, "cat", std::string_view("cat\0", 4));
  EXPECT_EQ(dec->state().processes.table().size(), 1u);
  feed_task(DC_TASK_EXIT, 40, 40, 0, "cat");
  // The pid came back through a fork the trace did not see.
  feed_task(DC_TASK_EXEC, 40, 40, 1, "ls", std::string_view("ls\0", 3));
  ASSERT_EQ(dec->state().processes.table().size(), 2u);
  EXPECT_EQ(dec->state().processes.table().at(40).command, "cat");
  EXPECT_EQ(dec->state().processes.table().at(instance_key(40, 1)).command, "ls");
  EXPECT_EQ(dec->state().processes.table().at(instance_key(40, 1)).exit_status, -1);
}

// The writer skips naming an event's thread again while its process table is unchanged: an exec
// or a thread's new name between two calls of one thread still names it again before the second.
TEST_F(process_instances, AThreadRenamedBetweenItsCallsIsNamedAgainBeforeTheNext)
{
  process(50, "sh", 2, true);
  feed_task(DC_TASK_EXEC, 50, 50, 1, "cat", std::string_view("cat\0", 4));
  feed_syscall(SYS_pread64, 50, 100, {3, 0, 100, 0, 0, 0}, data_file);
  feed_task(DC_TASK_THREAD, 50, 50, 1, "worker");
  feed_syscall(SYS_pread64, 50, 100, {3, 0, 100, 0, 0, 0}, data_file);
  feed_syscall(SYS_pread64, 50, 100, {3, 0, 100, 0, 0, 0}, data_file);
  ASSERT_TRUE(writer->finish({}));
  std::vector<std::string> seen;
  for (auto& l : test::parse_trace_text(test::read_gzip_members(path).text).lines)
    if (l["pid"] == 50 &&
        (l["name"] == "process_name" || l["name"] == "thread_name" || l["name"] == "pread64"))
      seen.push_back(l["name"] == "pread64" ? "call" : l["args"]["name"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "sh", "call", "call", "cat", "cat", "call", "worker",
                                            "call", "call"}));
}

TEST_F(process_instances, PastTheDetailKeptTheLeastBusyAreFoldedByCommandExactly)
{
  dec->keep_process_detail(2);
  process(50, "tiny", 1);
  process(51, "big", 9);
  process(52, "tiny", 2);
  process(53, "mid", 5);
  process(54, "live", 3, true);  // running processes are never folded
  const auto& table = dec->state().processes.table();
  nlohmann::json j = summary_json(summary, table, dec->state().names, run_facts{});
  ASSERT_EQ(j["processes"].size(), 3u) << j["processes"].dump();
  ASSERT_TRUE(j.contains("processes_folded")) << j.dump();
  EXPECT_EQ(reads_of(j["processes"]["51"]), 9u);
  EXPECT_EQ(reads_of(j["processes"]["53"]), 5u);
  EXPECT_EQ(reads_of(j["processes"]["54"]), 3u);
  EXPECT_EQ(reads_of(j["processes_folded"]["tiny"]), 3u);
  EXPECT_EQ(j["processes_folded"]["tiny"]["processes"], 2);
  EXPECT_EQ(j["processes_folded"]["tiny"]["files"].size(), 1u);
  EXPECT_EQ(j["processes_in_all"], 5);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("pread64").count, 20u);
  // A late event of a folded pid counts with its fold; a new process with the pid is its own.
  tgid = 50;
  feed_syscall(SYS_pread64, 50, 100, {3, 0, 100, 0, 0, 0}, data_file);
  process(50, "tiny", 4, true);
  j = summary_json(summary, table, dec->state().names, run_facts{});
  EXPECT_EQ(reads_of(j["processes_folded"]["tiny"]), 4u);
  EXPECT_EQ(reads_of(j["processes"]["50.2"]), 4u);
  EXPECT_EQ(j["processes_in_all"], 6);
}

// A run that forks all day keeps, per pid and tid, only the processes that ended in the last
// minute (collect/decoder.h: forget_after_ns): 3,000 short processes over 300 s of kernel time,
// ~10 a second on 3,000 distinct pids, leave the writer naming at most the last minute's.
TEST_F(process_instances, WhatIsKeptPerPidIsTheLastMinutesProcessesNotEveryPid)
{
  constexpr uint64_t second = 1'000'000'000;
  for (uint32_t i = 0; i < 3000; ++i) {
    ts_ns = 5'000'000 + i * second / 10;
    process(1000 + i, "short", 1);
  }
  EXPECT_LE(writer->pids_named(), 601u);
  EXPECT_GE(writer->pids_named(), 590u);  // the last minute's, still named
  EXPECT_LE(writer->tids_named(), 601u);
  EXPECT_LE(writer->threads_ordered(), 601u);
  // Every process is still counted, and a late event of a forgotten one names it again: the
  // trace stays whole, each of its events under its process.
  ts_ns += second;
  tgid = 1000;
  feed_syscall(SYS_pread64, 1000, 100, {3, 0, 100, 0, 0, 0}, data_file);
  nlohmann::json j = summary_json(summary, dec->state().processes, dec->state().names, run_facts{});
  EXPECT_EQ(j["processes_in_all"], 3000);
  EXPECT_EQ(summary.totals().ops.at("POSIX").at("pread64").count, 3001u);
  // A pid used again after its first process was forgotten is its second process, not the first.
  process(1000, "again", 2, true);
  ASSERT_TRUE(dec->state().processes.table().contains(instance_key(1000, 1)));
  EXPECT_EQ(dec->state().processes.table().at(instance_key(1000, 1)).comm, "again");
  ASSERT_TRUE(writer->finish({}));
  size_t names_of_1000 = 0, spans_of_1000 = 0;
  for (auto& l : test::parse_trace_text(test::read_gzip_members(path).text).lines) {
    names_of_1000 += l["name"] == "process_name" && l["pid"] == 1000;
    spans_of_1000 += l["ph"] == "X" && l["pid"] == 1000;
  }
  EXPECT_EQ(names_of_1000, 3u);  // its first process, again for the late event, its second process
  EXPECT_EQ(spans_of_1000, 4u);
}

// A late event of a process folded by command (written under the fold) is forgotten with the
// process: the soak lost this once its pids wrapped, and the writer then named every pid.
TEST_F(process_instances, ALateEventOfAFoldedProcessIsForgottenWithIt)
{
  constexpr uint64_t second = 1'000'000'000;
  dec->keep_process_detail(1);
  process(60, "tiny", 1);
  process(61, "big", 9);  // 60 is folded
  ASSERT_NE(dec->process_of(60) & folded_key_bit, 0u);
  tgid = 60;
  feed_syscall(SYS_pread64, 60, 100, {3, 0, 100, 0, 0, 0}, data_file);
  ts_ns += 61 * second;
  process(62, "later", 1);
  EXPECT_EQ(writer->pids_named(), 1u);  // 62's, for a minute after its exit
  EXPECT_EQ(writer->tids_named(), 1u);
  EXPECT_EQ(writer->threads_ordered(), 0u);  // a thread's span order goes at its exit
}

}  // namespace
}  // namespace dc
