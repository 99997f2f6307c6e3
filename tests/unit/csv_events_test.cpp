// Per-event CSV tables: which table each layer's records go to, their columns and values, names
// resolved from FH/HH lines, one file per trace, read back with an independent CSV reader.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "analyze/csv_events.h"
#include "unit/csv_reader.h"

namespace dc::analyze {
namespace {

using records = std::vector<std::map<std::string, std::string>>;

// A record and the storage its spans point into.
struct owned_record {
  record r;
  std::vector<record_arg> args;
  std::vector<record_text> texts;
  owned_record(std::string_view cat, std::string_view name, std::vector<record_arg> a = {},
               std::vector<record_text> t = {}, phase ph = phase::complete)
      : args(std::move(a)), texts(std::move(t))
  {
    r.ph = ph;
    r.cat = cat;
    r.name = name;
    r.pid = 42;
    r.tid = 43;
    r.ts_us = 1000;
    r.dur_us = 7;
    r.hhash = 11;
    r.args = args;
    r.texts = texts;
  }
};

struct csv_events_test : ::testing::Test {
  std::string dir;
  name_map names;
  void SetUp() override
  {
    char tmpl[] = "/tmp/dc_csv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    names.hosts[11] = "node1";
    names.files[5] = "/data/a,b\"c.dat";
    names.files[6] = "/data/new\nname";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  records table(const std::string& path) { return test::csv_records(test::read_csv(dir + "/" + path)); }
};

TEST(csv_event_routing, each_layer_goes_to_its_seed_table)
{
  auto in = [](std::string_view cat, std::string_view name, phase ph = phase::complete) {
    owned_record o(cat, name, {}, {}, ph);
    event_tables t = tables_of(o.r);
    std::vector<std::string> out;
    for (size_t i = 0; i < event_tables::count; ++i)
      if (t.in[i])
        out.emplace_back(table_name(i));
    return out;
  };
  using v = std::vector<std::string>;
  EXPECT_EQ(in("POSIX", "pread64"), v{"syscall"});
  EXPECT_EQ(in("POSIX", "connect"), (v{"nw_conn", "syscall"}));
  EXPECT_EQ(in("POSIX", "epoll_wait"), (v{"nw_epoll", "syscall"}));
  EXPECT_EQ(in("POSIX", "setsockopt"), (v{"nw_sockopt", "syscall"}));
  EXPECT_EQ(in("FS", "buffered_read"), v{"fs"});
  EXPECT_EQ(in("BLOCK", "write"), v{"ds"});
  EXPECT_EQ(in("FAULT", "major_fault"), v{"pagefault"});
  EXPECT_EQ(in("NET", "send"), v{"nw"});
  EXPECT_EQ(in("NET", "state"), v{"nw_conn"});
  EXPECT_EQ(in("NET", "retransmit"), v{"nw_drop"});
  EXPECT_EQ(in("NET", "drop"), v{"nw_drop"});
  EXPECT_EQ(in("STDIO", "fread"), v{"user"});
  EXPECT_EQ(in("HDF5", "H5Dwrite"), v{"user"});
  EXPECT_EQ(in("PAGECACHE", "page_cache", phase::counter), v{"cache"});
  EXPECT_EQ(in("POSIX", "read", phase::counter), v{"profile"});
  EXPECT_EQ(in("dftracer", "FH", phase::metadata), v{});
  EXPECT_EQ(in("dftracer", "start"), v{});  // DFTracer's own span around the run
}

TEST_F(csv_events_test, syscall_rows_have_their_args_and_resolved_paths)
{
  event_csv_writer w(dir, names);
  w.begin_file("/traces/run-1.pfw.gz");
  owned_record pread("POSIX", "pread64", {{"fd", 3}, {"count", 4096}, {"offset", 8192}, {"ret", 4096}});
  pread.r.fhash = 5;
  pread.r.id = 100;
  pread.r.p_idx = -1;
  owned_record rename("POSIX", "renameat2", {{"olddfd", -100}, {"ret", 0}, {"fhash2", 6}});
  rename.r.fhash = 5;
  w.add(pread.r);
  w.add(rename.r);
  ASSERT_TRUE(w.end_file());
  records rows = table("syscall/syscall_run-1.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["ts_us"], "1000");
  EXPECT_EQ(rows[0]["dur_us"], "7");
  EXPECT_EQ(rows[0]["host"], "node1");
  EXPECT_EQ(rows[0]["pid"], "42");
  EXPECT_EQ(rows[0]["tid"], "43");
  EXPECT_EQ(rows[0]["cat"], "POSIX");
  EXPECT_EQ(rows[0]["name"], "pread64");
  EXPECT_EQ(rows[0]["fd"], "3");
  EXPECT_EQ(rows[0]["count"], "4096");
  EXPECT_EQ(rows[0]["offset"], "8192");
  EXPECT_EQ(rows[0]["ret"], "4096");
  EXPECT_EQ(rows[0]["flags"], "");
  EXPECT_EQ(rows[0]["file"], "/data/a,b\"c.dat");
  EXPECT_EQ(rows[0]["file2"], "");
  EXPECT_EQ(rows[0]["id"], "100");
  EXPECT_EQ(rows[0]["parent"], "");
  EXPECT_EQ(rows[0]["other_args"], "");
  EXPECT_EQ(rows[1]["file2"], "/data/new\nname");
  EXPECT_EQ(rows[1]["other_args"], "olddfd=-100");
  EXPECT_EQ(w.rows(), (std::map<std::string, uint64_t>{{"syscall", 2}}));
  EXPECT_EQ(w.unresolved(), 0u);
}

TEST_F(csv_events_test, kernel_layers_fill_their_own_columns)
{
  event_csv_writer w(dir, names);
  w.begin_file("t.pfw.gz");
  owned_record blk("BLOCK", "read",
                   {{"bytes", 16384},
                    {"sector", 99},
                    {"major", 254},
                    {"minor", 0},
                    {"queue_us", 7},
                    {"writeback", 0},
                    {"error", 0}});
  blk.r.fhash = 5;
  owned_record unseen("BLOCK", "write", {{"bytes", 4096}, {"end_unseen", 1}});
  owned_record fs("FS", "buffered_read", {{"ret", 832}, {"offset", 0}, {"first_page", 0}, {"last_page", 0}});
  owned_record fault("FAULT", "major_fault",
                     {{"address", 4096}, {"write", 1}, {"pages_read", 6}, {"major", 1}});
  owned_record send("NET", "send",
                    {{"ret", 65536}, {"family", 2}, {"protocol", 6}, {"lport", 1}, {"rport", 2}},
                    {{"laddr", "127.0.0.1"}, {"raddr", "10.0.0.2"}});
  owned_record state("NET", "state", {{"family", 2}, {"lport", 1}},
                     {{"old_state", "CLOSE"}, {"new_state", "LISTEN"}, {"laddr", "::1"}});
  owned_record drop("NET", "drop", {{"reason", 5}});
  owned_record pc("PAGECACHE", "page_cache", {{"hits", 3}, {"misses", 1}, {"pages_evicted", 2}}, {},
                  phase::counter);
  owned_record prof("POSIX", "read", {{"count", 10}, {"time_us", 55}, {"bytes", 40960}}, {}, phase::counter);
  owned_record fread("STDIO", "fread", {{"ret", 3}, {"count", 8192}, {"size", 1}}, {{"mode", "r"}});
  owned_record dset("HDF5", "H5Dopen2", {{"ret", 7}}, {{"name", "/grid/temp"}});
  for (owned_record* o : {&blk, &unseen, &fs, &fault, &send, &state, &drop, &pc, &prof, &fread, &dset})
    w.add(o->r);
  ASSERT_TRUE(w.end_file());
  EXPECT_EQ(table("ds/ds_t.csv").at(0)["sector"], "99");
  EXPECT_EQ(table("ds/ds_t.csv").at(0)["file"], "/data/a,b\"c.dat");
  EXPECT_EQ(table("ds/ds_t.csv").at(0)["end_unseen"], "");
  EXPECT_EQ(table("ds/ds_t.csv").at(1)["end_unseen"], "1");
  EXPECT_EQ(table("ds/ds_t.csv").at(1)["other_args"], "");
  EXPECT_EQ(table("fs/fs_t.csv").at(0)["first_page"], "0");
  EXPECT_EQ(table("fs/fs_t.csv").at(0)["ret"], "832");
  EXPECT_EQ(table("pagefault/pagefault_t.csv").at(0)["pages_read"], "6");
  EXPECT_EQ(table("nw/nw_t.csv").at(0)["raddr"], "10.0.0.2");
  EXPECT_EQ(table("nw/nw_t.csv").at(0)["ret"], "65536");
  EXPECT_EQ(table("nw_conn/nw_conn_t.csv").at(0)["new_state"], "LISTEN");
  EXPECT_EQ(table("nw_conn/nw_conn_t.csv").at(0)["laddr"], "::1");
  EXPECT_EQ(table("nw_drop/nw_drop_t.csv").at(0)["reason"], "5");
  EXPECT_EQ(table("cache/cache_t.csv").at(0)["pages_evicted"], "2");
  EXPECT_EQ(table("profile/profile_t.csv").at(0)["time_us"], "55");
  EXPECT_EQ(table("user/user_t.csv").at(0)["mode"], "r");
  EXPECT_EQ(table("user/user_t.csv").at(0)["size"], "1");
  // The object's name has a column of its own, apart from the operation's name.
  test::csv_rows user = test::read_csv(dir + "/user/user_t.csv");
  EXPECT_EQ(std::count(user[0].begin(), user[0].end(), "name"), 1);
  EXPECT_EQ(table("user/user_t.csv").at(1)["name"], "H5Dopen2");
  EXPECT_EQ(table("user/user_t.csv").at(1)["arg_name"], "/grid/temp");
  EXPECT_FALSE(std::filesystem::exists(dir + "/syscall"));  // no system calls, no table
}

TEST_F(csv_events_test, one_file_per_trace_and_stems_made_unique)
{
  event_csv_writer w(dir, names);
  owned_record ev("POSIX", "close", {{"fd", 3}, {"ret", 0}});
  for (const char* trace : {"/a/host.pfw.gz", "/b/host.pfw.gz", "/c/other.pfw"}) {
    w.begin_file(trace);
    w.add(ev.r);
    w.add(ev.r);
    ASSERT_TRUE(w.end_file());
  }
  for (const char* f : {"host", "host-2", "other"})
    EXPECT_EQ(table(std::string("syscall/syscall_") + f + ".csv").size(), 2u) << f;
  EXPECT_EQ(w.rows().at("syscall"), 6u);
}

TEST_F(csv_events_test, names_unknown_when_used_are_marked_and_counted)
{
  event_csv_writer w(dir, names);
  w.begin_file("t.pfw.gz");
  owned_record ev("POSIX", "read", {{"ret", 1}});
  ev.r.fhash = 777;
  ev.r.hhash = 0;
  w.add(ev.r);
  ASSERT_TRUE(w.end_file());
  records rows = table("syscall/syscall_t.csv");
  EXPECT_EQ(rows.at(0)["file"], "<unknown:777>");
  EXPECT_EQ(rows.at(0)["host"], "");
  EXPECT_EQ(w.unresolved(), 1u);
}

TEST_F(csv_events_test, an_unwritable_directory_is_reported_at_end_of_file)
{
  std::string blocker = dir + "/file";
  ASSERT_TRUE(csv_file::create(blocker, {"x"})->close());
  event_csv_writer w(blocker, names);
  w.begin_file("t.pfw.gz");
  owned_record ev("POSIX", "read", {{"ret", 1}});
  w.add(ev.r);
  auto ended = w.end_file();
  ASSERT_FALSE(ended);
  EXPECT_NE(ended.error().message.find(blocker), std::string::npos) << ended.error().message;
}

}  // namespace
}  // namespace dc::analyze
