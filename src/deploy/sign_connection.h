// One client of the signing service (signing_service.cpp), from accept to the end of its reply:
// its request read, parsed by the worker (sign_worker.h), its binaries checked by a child
// (readable_check.h), its probes signed by the worker, its reply sent; all before its deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "deploy/probe_file.h"
#include "deploy/readable_check.h"
#include "deploy/sign_worker.h"

namespace dc {

// A request is one probe file's content: far below this even for a config probing thousands of
// functions. With the connection limit, it bounds what clients can make the service hold.
constexpr size_t max_request = 16 << 20;

enum class stage {
  reading,   // the request coming in
  queued,    // whole, waiting for the worker: to be parsed, or (checked) to be signed
  working,   // with the worker
  checking,  // parsed: its binaries' readability being checked
  replying,  // the reply going out
};

struct connection {
  uint64_t id = 0;  // names its worker's job
  int fd = -1;
  std::optional<uint32_t> uid;  // SO_PEERCRED, taken at accept
  stage at = stage::reading;
  bool parsed = false;  // queued or working: the job is signing, not parsing
  std::string request, reply;
  size_t sent = 0;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point checking_since;  // its readability check's start
  probe_file probes;                                     // parsed, while its binaries are checked
  readable_check check;
};

void start_reply(connection& c, std::string reply);

// Reads what is there; at EOF the request is queued for the worker, past the limit it is refused.
void take_input(connection& c);

// Sends what the socket takes; true when the connection is done (all sent, or the client gone).
bool give_output(connection& c);

// Why `c`, past its deadline (`limit` from accept), is refused: its open, only when its check has
// waited on one for a second or more; else the stage it reached (busy: others had the worker).
std::string expiry_reason(const connection& c, std::chrono::steady_clock::time_point now,
                          std::chrono::seconds limit);

// Ends a connection before its answer: one try to say why, then closed.
void end_early(connection& c, std::string why);

// The worker's job for a queued connection: its request to parse, or its probes to sign.
sign_job job_for(connection& c);

// The worker did `job` for `c`: its binaries are checked next, or it has its reply.
void job_done(connection& c, sign_job job);

// The check's child reported on every binary (or could not be started): refused, or queued to be
// signed.
void check_done(connection& c);

}  // namespace dc
