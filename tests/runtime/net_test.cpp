// The network layer against a loopback exchange of known size: bytes each way per process,
// exactly, and the connection's lifecycle.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "runtime/runtime_helpers.h"

namespace dc::test {
namespace {

TEST_F(runtime_test, LoopbackTcpBytesArePerProcessExact)
{
  constexpr uint64_t bytes = 1 << 20;
  std::string out = dir / "pids.txt";
  auto run =
      trace_command(dir, std::string(TCP_PAIR_BIN) + " " + std::to_string(bytes) + " > " + shell_quote(out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  uint32_t client = 0, server = 0;
  ASSERT_EQ(std::sscanf(read_file(out).c_str(), "client=%u server=%u", &client, &server), 2);

  std::map<uint32_t, uint64_t> sent, received;
  bool established = false, server_handshake = false;
  for (const auto& e : complete_events(run.trace)) {
    if (e["cat"] != "NET")
      continue;
    uint32_t pid = e["pid"];
    EXPECT_TRUE(pid == client || pid == server) << e;
    EXPECT_EQ(e["args"]["laddr"], "127.0.0.1");
    int64_t ret = e["args"].value("ret", 0);
    if (e["name"] == "send" && ret > 0)
      sent[pid] += ret;
    if (e["name"] == "recv" && ret > 0)
      received[pid] += ret;
    established |= e["name"] == "state" && pid == client && e["args"]["new_state"] == "ESTABLISHED";
    // The server side of the handshake happens in softirq, before accept(): it belongs to the
    // process that listens on the port (tcp_pair's parent listens, then forks the server).
    server_handshake |= e["name"] == "state" && pid == client && e["args"]["old_state"] == "SYN_RECV" &&
                        e["args"]["new_state"] == "ESTABLISHED";
  }
  EXPECT_EQ(sent[client], bytes);
  EXPECT_EQ(received[server], bytes);
  EXPECT_EQ(sent[server], bytes);
  EXPECT_EQ(received[client], bytes);
  EXPECT_TRUE(established);
  EXPECT_TRUE(server_handshake);
  const auto& procs = run.summary["processes"];
  EXPECT_EQ(procs[std::to_string(client)]["layers"]["POSIX"]["connect"]["count"], 1);
  EXPECT_EQ(procs[std::to_string(server)]["layers"]["POSIX"]["accept"]["count"].get<int>() +
                procs[std::to_string(server)]["layers"]["POSIX"]
                    .value("accept4", nlohmann::json{{"count", 0}})["count"]
                    .get<int>(),
            1);
  EXPECT_EQ(procs[std::to_string(server)]["parent"], client);
}

// A socket's owner goes with the socket. Untraced processes open and close loopback connections
// while and after traced ones did: the kernel hands the traced sockets' freed memory to the
// untraced sockets, and none of their bytes or state changes may be charged to a traced process
// (an owner kept by the socket's address was).
TEST_F(runtime_test, AnUntracedSocketAtAFreedTracedSocketsAddressIsNotCharged)
{
  std::string pair = TCP_PAIR_BIN;
  // The untraced loop marks its end however it ends; the traced command waits for it (at most
  // two minutes), so both run at once and the traced sockets' memory is free for the others.
  std::string untraced_done = dir / "untraced.done", untraced_failed = dir / "untraced.failed";
  std::string untraced = "(for i in $(seq 300); do " + pair + " 4096 > /dev/null || { touch " +
                         shell_quote(untraced_failed) + "; break; }; done; touch " +
                         shell_quote(untraced_done) + ") &";
  ASSERT_EQ(run_shell(untraced), 0);
  std::string out = dir / "pids.txt";
  std::string traced_script = "for i in $(seq 30); do " + pair + " 4096 >> " + shell_quote(out) +
                              " || exit 1; done; n=0; while [ ! -e " + shell_quote(untraced_done) +
                              " ] && [ $n -lt 2400 ]; do sleep 0.05; n=$((n + 1)); done";
  auto run = trace_command(dir, "sh -c " + shell_quote(traced_script));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(std::filesystem::exists(untraced_done)) << "the untraced connections did not end in time";
  ASSERT_FALSE(std::filesystem::exists(untraced_failed)) << "an untraced connection failed";

  std::set<uint32_t> traced;
  std::istringstream lines(read_file(out));
  for (std::string line; std::getline(lines, line);) {
    uint32_t client = 0, server = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "client=%u server=%u", &client, &server), 2) << line;
    traced.insert({client, server});
  }
  ASSERT_EQ(traced.size(), 60u);
  // The traced connections, as (local port, remote port) from both ends' sends, which only a
  // traced caller's own call records.
  auto net = complete_events(run.trace);
  std::erase_if(net, [](const nlohmann::json& e) { return e["cat"] != "NET"; });
  std::set<std::pair<int, int>> connections;
  std::set<int> ports;
  std::map<uint32_t, uint64_t> sent;
  for (const auto& e : net) {
    int lport = e["args"]["lport"], rport = e["args"]["rport"];
    if (e["name"] != "send" || !traced.contains(e["pid"].get<uint32_t>()))
      continue;
    sent[e["pid"]] += e["args"]["ret"].get<int64_t>();
    connections.insert({lport, rport});
    ports.insert({lport, rport});
  }
  // Every event charged to a traced process is on one of those sockets (or its listener). A port
  // is 0 before a connect binds it and after a close unbinds it: then the other port decides.
  for (const auto& e : net) {
    uint32_t pid = e["pid"];
    int lport = e["args"]["lport"], rport = e["args"]["rport"];
    bool ours = connections.contains({lport, rport}) ||
                (lport == 0 && (rport == 0 || ports.contains(rport))) ||
                (rport == 0 && ports.contains(lport));
    EXPECT_TRUE(traced.contains(pid) && ours) << e;
  }
  for (uint32_t pid : traced) EXPECT_EQ(sent[pid], 4096u) << pid;
}

}  // namespace
}  // namespace dc::test
