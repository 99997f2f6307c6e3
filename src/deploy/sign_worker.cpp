#include "deploy/sign_worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace dc {

void run_sign_job(sign_job& job, const std::string& secret)
{
  auto started = std::chrono::steady_clock::now();
  if (job.sign) {
    auto signed_bytes = sign_probe_file(job.probes, secret);
    job.reply = signed_bytes ? "OK\n" + *signed_bytes : "ERR " + signed_bytes.error().message + "\n";
  } else if (auto probes = parse_probe_file_content(job.request); !probes) {
    job.reply = "ERR " + probes.error().message + "\n";
  } else {
    job.probes = std::move(*probes);
    job.probes.uid = job.uid;  // whoever asked, as the kernel says: never the request's own claim
    std::set<std::string> distinct;
    for (const auto& t : job.probes.uprobes)
      if (distinct.insert(t.binary).second)
        job.binaries.push_back(t.binary);
  }
  std::string().swap(job.request);
  job.took = std::chrono::steady_clock::now() - started;
}

sign_worker::~sign_worker()
{
  if (thread_.joinable())
    thread_.join();
  for (int fd : done_)
    if (fd >= 0)
      close(fd);
}

result<> sign_worker::open()
{
  if (pipe2(done_, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(std::string("pipe: ") + std::strerror(errno));
  return {};
}

// A thread per job (its start costs microseconds; a job, up to about a second), made with the
// service's signal mask (SIGINT and SIGTERM blocked), so a stop signal always reaches the
// service's ppoll.
void sign_worker::start(sign_job job)
{
  job_ = std::move(job);
  thread_ = std::thread([this] {
    run_sign_job(*job_, secret_);
    char done = 1;
    ssize_t n;
    do n = write(done_[1], &done, 1);
    while (n < 0 && errno == EINTR);
  });
}

sign_job sign_worker::finish()
{
  thread_.join();
  char done = 0;
  ssize_t n;
  do n = read(done_[0], &done, 1);
  while (n < 0 && errno == EINTR);
  sign_job job = std::move(*job_);
  job_.reset();
  return job;
}

}  // namespace dc
