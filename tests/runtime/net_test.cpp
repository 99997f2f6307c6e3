// The network layer against a loopback exchange of known size: bytes each way per process,
// exactly, and the connection's lifecycle.
#include <fstream>

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

}  // namespace
}  // namespace dc::test
