// The signing service's worker (signing_service.cpp): parses a request, or signs its probes, on
// a thread of its own, one job at a time. A large request (100,000 probes) takes about a second
// of the two together; done on the service's own thread, it stopped every other client's reads,
// replies and accepts for that long, and several such requests ready in one round of the loop stopped them
// for all of them together. The job owns its input and output: the service's thread touches neither while the
// job runs, and learns of its end on a pipe it polls.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "deploy/probe_file.h"

namespace dc {

struct sign_job {
  uint64_t id = 0;  // the connection's: it may be gone (its deadline, or displaced) by the end
  uint32_t uid = 0;
  bool sign = false;  // false: parse `request`; true: sign `probes`
  std::string request;
  probe_file probes;                  // parsing's output (stamped with uid), signing's input
  std::vector<std::string> binaries;  // parsing's output: the distinct binaries to check
  std::string reply;                  // set when the job ends the request: why not, or the signed file
  std::chrono::steady_clock::duration took{};
};

// Does what `job` says (on the worker's thread; also directly testable).
void run_sign_job(sign_job& job, const std::string& secret);

class sign_worker {
 public:
  explicit sign_worker(const std::string& secret) : secret_(secret) {}
  ~sign_worker();
  sign_worker(const sign_worker&) = delete;
  sign_worker& operator=(const sign_worker&) = delete;

  result<> open();                     // the pipe the end of a job is told on
  int fd() const { return done_[0]; }  // readable once the job under way is done
  bool busy() const { return job_.has_value(); }
  void start(sign_job job);  // when not busy
  sign_job finish();         // when fd() is readable: the job, done

 private:
  const std::string& secret_;
  int done_[2] = {-1, -1};
  std::optional<sign_job> job_;
  std::thread thread_;
};

}  // namespace dc
