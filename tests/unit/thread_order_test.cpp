// sink/thread_order: spans are written parents first, whatever order the kernel sent them in;
// sink/lanes: device work on lanes where no two spans overlap.
#include <gtest/gtest.h>

#include <vector>

#include "sink/lanes.h"
#include "sink/thread_order.h"

namespace dc {
namespace {

using parent_of = trace_event::parent_of;

constexpr uint64_t tid = 7;
constexpr uint64_t base = tid << 30;

trace_event span(std::string_view cat, uint64_t seq, int64_t parent_seq, uint32_t level,
                 parent_of kind = parent_of::none)
{
  trace_event ev;
  ev.name = "op";
  ev.category = cat;
  ev.pid = ev.tid = tid;
  ev.id = base + seq;
  ev.parent = parent_seq < 0 ? -1 : static_cast<int64_t>(base + static_cast<uint64_t>(parent_seq));
  ev.level = level;
  ev.parent_kind = parent_seq < 0 ? parent_of::none : kind;
  return ev;
}

// Feeds events as the decoder hands them to the writer; returns the order they are written in
// (sequence numbers).
struct ordering {
  thread_order order;
  std::vector<uint64_t> written;
  void feed(const trace_event& ev)
  {
    if (!order.admit(ev))
      return;
    written.push_back(ev.id - base);
    for (const trace_event& e : order.freed_by(ev)) written.push_back(e.id - base);
  }
  void end()
  {
    for (const trace_event& e : order.drain_all()) written.push_back(e.id - base);
  }
};

TEST(ThreadOrder, AChildOfASystemCallWaitsForItWhenItComesFirst)
{
  ordering o;
  o.feed(span("POSIX", 1, -1, 1));
  o.feed(span("FS", 3, 2, 2, parent_of::syscall));   // direct I/O of call 2, sent at its end
  o.feed(span("NET", 4, 2, 2, parent_of::syscall));  // and a send
  o.feed(span("POSIX", 2, -1, 1));                   // call 2, staged, comes later
  o.feed(span("POSIX", 5, -1, 1));
  o.feed(span("FAULT", 6, 5, 2, parent_of::syscall));  // a fault sent after its call
  o.end();
  EXPECT_EQ(o.written, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ThreadOrder, AUserCallIsWrittenBeforeTheCallsItMade)
{
  ordering o;
  // fwrite (1) makes write (2) with its FS operation (3); fflush (4, nested in 1) makes write
  // (5). The kernel sends each when it ends: 3 and 2 (a staged run), 5, 4, then 1.
  o.feed(span("POSIX", 2, 1, 2, parent_of::call));
  o.feed(span("FS", 3, 2, 3, parent_of::syscall));
  o.feed(span("POSIX", 5, 4, 3, parent_of::call));
  o.feed(span("STDIO", 4, 1, 2, parent_of::call));
  EXPECT_TRUE(o.written.empty());
  o.feed(span("STDIO", 1, -1, 1));
  EXPECT_EQ(o.written, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  // A fault in a call that had already returned is written at once.
  o.feed(span("FAULT", 6, 1, 2, parent_of::call_sent));
  EXPECT_EQ(o.written.back(), 6u);
}

TEST(ThreadOrder, ChildrenOfALostParentAreWrittenWhenALaterSpanShowsItWasSent)
{
  ordering o;
  o.feed(span("POSIX", 2, 1, 2, parent_of::call));  // user call 1 never comes (longjmp)
  o.feed(span("FS", 4, 3, 2, parent_of::syscall));  // system call 3 was lost (ring full)
  EXPECT_TRUE(o.written.empty());
  o.feed(span("POSIX", 5, -1, 1));  // a later top-level call: 1 had ended, 3 was sent
  EXPECT_EQ(o.written, (std::vector<uint64_t>{5, 2, 4}));
}

TEST(ThreadOrder, WhatStillWaitsIsWrittenAtTheEndAndSpansOffTheThreadPass)
{
  ordering o;
  o.feed(span("STDIO", 2, 1, 2, parent_of::call));
  trace_event block = span("BLOCK", 9, 8, 3, parent_of::syscall);
  block.lane = lane_kind::device;
  o.feed(block);
  EXPECT_EQ(o.written, (std::vector<uint64_t>{9}));
  o.end();
  EXPECT_EQ(o.written, (std::vector<uint64_t>{9, 2}));
}

TEST(ThreadOrder, AtMostMaxHeldWaitPerThread)
{
  ordering o;
  for (uint64_t i = 0; i < thread_order::max_held + 3; ++i)
    o.feed(span("POSIX", 2 + i, 1, 2, parent_of::call));
  EXPECT_EQ(o.written.size(), 3u);
  o.feed(span("STDIO", 1, -1, 1));
  EXPECT_EQ(o.written.size(), thread_order::max_held + 4);
}

TEST(Lanes, SpansOnALaneNeverOverlapNotEvenAtAnEnd)
{
  lane_table lanes;
  constexpr uint32_t dev = 8u << 20;
  auto a = lanes.place(1, lane_kind::device, dev, 100, 200);
  auto b = lanes.place(1, lane_kind::device, dev, 150, 160);  // concurrent: a second lane
  auto c = lanes.place(1, lane_kind::device, dev, 200, 200);  // starts where a ends
  auto d = lanes.place(1, lane_kind::device, dev, 201, 300);
  auto other = lanes.place(2, lane_kind::device, dev, 100, 200);  // another process
  EXPECT_TRUE(a.fresh);
  EXPECT_TRUE(b.fresh);
  EXPECT_NE(a.tid, b.tid);
  EXPECT_EQ(c.tid, b.tid);
  EXPECT_EQ(d.tid, a.tid);
  EXPECT_FALSE(d.fresh);
  EXPECT_NE(other.tid, a.tid);
  EXPECT_GE(a.tid, lane_table::first_tid);
  EXPECT_EQ(lane_table::lane_name(lane_kind::device, dev | 1, b.index), "device 8:1 #1");
}

// A process's lanes are dropped once idle for a minute (the writer keeps only the lanes of
// recent work, however many processes a run sees): its next span opens a fresh lane.
TEST(Lanes, LanesIdleForAMinuteAreDroppedAndANewSpanGetsAFreshOne)
{
  lane_table lanes;
  constexpr uint32_t dev = 8u << 20;
  auto first = lanes.place(1, lane_kind::device, dev, 100, 200);
  auto again = lanes.place(1, lane_kind::device, dev, 300, 400);  // not idle: the same lane
  EXPECT_EQ(again.tid, first.tid);
  EXPECT_FALSE(again.fresh);
  // Another process's work a minute and more later, enough of it for a sweep.
  uint64_t later = 400 + lane_table::idle_us + 1;
  for (uint32_t i = 0; i < lane_table::places_per_sweep; ++i)
    lanes.place(2, lane_kind::device, dev, later + 2 * i, later + 2 * i);
  auto after = lanes.place(1, lane_kind::device, dev, later + 3 * lane_table::places_per_sweep,
                           later + 3 * lane_table::places_per_sweep);
  EXPECT_TRUE(after.fresh);
  EXPECT_NE(after.tid, first.tid);
  EXPECT_EQ(after.index, 0u);
}

}  // namespace
}  // namespace dc
