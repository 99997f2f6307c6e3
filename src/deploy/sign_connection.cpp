#include "deploy/sign_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

namespace dc {

void start_reply(connection& c, std::string reply)
{
  c.reply = std::move(reply);
  c.at = stage::replying;
}

void take_input(connection& c)
{
  char buf[65536];
  ssize_t n = read(c.fd, buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n < 0)
    return start_reply(c, "");  // the client is gone: nothing to say, the connection just ends
  if (n == 0) {
    if (!c.uid)
      return start_reply(c, "ERR no peer credentials\n");
    c.at = stage::queued;
    return;
  }
  if (c.request.size() + static_cast<size_t>(n) > max_request)
    return start_reply(c, "ERR request larger than the limit of " + std::to_string(max_request) + " bytes\n");
  c.request.append(buf, static_cast<size_t>(n));
}

bool give_output(connection& c)
{
  while (c.sent < c.reply.size()) {
    ssize_t n = send(c.fd, c.reply.data() + c.sent, c.reply.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return false;
    if (n <= 0)
      return true;
    c.sent += static_cast<size_t>(n);
  }
  return true;
}

// The deadline runs from accept: a check begun just before it ran out says nothing of the open.
// A check's child opens each binary once, in microseconds; one pending a second is hung (FUSE,
// NFS). The path named is the one it was at (end_early kills it after).
std::string expiry_reason(const connection& c, std::chrono::steady_clock::time_point now,
                          std::chrono::seconds limit)
{
  constexpr double slow_open = 1.0;
  if (c.at == stage::checking) {
    double checking = std::chrono::duration<double>(now - c.checking_since).count();
    if (checking >= slow_open)
      return "ERR cannot tell whether uid " + std::to_string(c.probes.uid) + " can read " +
             checked_path(c.check) + ": opening it did not return within " +
             std::to_string(std::lround(checking)) + " s\n";
  }
  std::string within = "within " + std::to_string(limit.count()) + " s";
  if (c.at == stage::reading || c.at == stage::replying)
    return "ERR request not complete " + within + "\n";
  return "ERR request not answered " + within + ": the service is busy, try again\n";
}

// No line when a reply is already going out: inside it, a line would only corrupt it. A client
// that cannot take the line is dropped anyway. A job with the worker runs on; its end finds no
// connection and is dropped.
void end_early(connection& c, std::string why)
{
  if (c.at == stage::checking)
    abandon_readable_check(c.check);
  if (c.at != stage::replying) {
    start_reply(c, std::move(why));
    (void)give_output(c);
  }
  close(c.fd);
}

sign_job job_for(connection& c)
{
  sign_job job;
  job.id = c.id;
  job.uid = c.uid.value_or(0);  // queued only with a uid (take_input)
  job.sign = c.parsed;
  if (job.sign)
    job.probes = std::move(c.probes);
  else
    job.request = std::move(c.request);
  c.at = stage::working;
  return job;
}

// Parsed: its binaries are checked, each distinct one once, by one child beside the other
// clients (one fork per probe made 10,000 probes hold the service 10 s).
void job_done(connection& c, sign_job job)
{
  if (!job.reply.empty())  // signed, or not parsed
    return start_reply(c, std::move(job.reply));
  c.probes = std::move(job.probes);
  c.parsed = true;
  c.check = start_readable_check(c.probes.uid, std::move(job.binaries));
  c.checking_since = std::chrono::steady_clock::now();
  c.at = stage::checking;
  if (c.check.fd < 0)  // nothing to check, or no child
    check_done(c);
}

void check_done(connection& c)
{
  if (auto unreadable = finish_readable_check(c.check))
    return start_reply(c, "ERR uid " + std::to_string(c.probes.uid) + " cannot read " + *unreadable + "\n");
  c.at = stage::queued;
}

}  // namespace dc
