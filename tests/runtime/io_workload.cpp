// A workload that knows exactly what it did: threads doing pwrite/pread on one file, and a
// forked child doing writes on another. It brackets its work with reads of /proc/self/io (the
// kernel's own count) and writes both to a result file for the test to compare with the trace.
//
// usage: io_workload DIR THREADS OPS SIZE CHILD_WRITES RESULT_FILE
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct proc_io {
  long long rchar = 0, wchar = 0, syscr = 0, syscw = 0;
};

// One open, one read, one close: the read is what the next snapshot counts.
proc_io read_proc_io()
{
  char buf[1024] = {};
  int fd = open("/proc/self/io", O_RDONLY);
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  proc_io io;
  if (n <= 0)
    return io;
  std::sscanf(std::strstr(buf, "rchar:"), "rchar: %lld", &io.rchar);
  std::sscanf(std::strstr(buf, "wchar:"), "wchar: %lld", &io.wchar);
  std::sscanf(std::strstr(buf, "syscr:"), "syscr: %lld", &io.syscr);
  std::sscanf(std::strstr(buf, "syscw:"), "syscw: %lld", &io.syscw);
  return io;
}

std::string delta_json(const proc_io& a, const proc_io& b)
{
  char out[256];
  std::snprintf(out, sizeof(out), "{\"rchar\":%lld,\"wchar\":%lld,\"syscr\":%lld,\"syscw\":%lld}",
                b.rchar - a.rchar, b.wchar - a.wchar, b.syscr - a.syscr, b.syscw - a.syscw);
  return out;
}

void write_all(const std::string& path, const std::string& text)
{
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0)
    std::exit(3);
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 7) {
    std::fprintf(stderr, "usage: io_workload DIR THREADS OPS SIZE CHILD_WRITES RESULT_FILE\n");
    return 2;
  }
  std::string dir = argv[1];
  int threads = std::atoi(argv[2]);
  int ops = std::atoi(argv[3]);
  size_t size = std::strtoull(argv[4], nullptr, 10);
  int child_writes = std::atoi(argv[5]);
  std::string result = argv[6];

  proc_io before = read_proc_io();
  int fd = open((dir + "/data.bin").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return 4;
  std::vector<long> tids(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      tids[static_cast<size_t>(t)] = syscall(SYS_gettid);
      std::vector<char> buf(size, static_cast<char>('a' + t));
      for (int k = 0; k < ops; ++k)
        if (pwrite(fd, buf.data(), size, static_cast<off_t>((t * ops + k) * size)) !=
            static_cast<ssize_t>(size))
          std::exit(5);
      for (int k = 0; k < ops; ++k)
        if (pread(fd, buf.data(), size, static_cast<off_t>((t * ops + k) * size)) !=
            static_cast<ssize_t>(size))
          std::exit(6);
    });
  for (auto& w : workers) w.join();

  pid_t child = fork();
  if (child == 0) {
    proc_io a = read_proc_io();
    int cfd = open((dir + "/child.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char> buf(size, 'c');
    for (int k = 0; k < child_writes; ++k)
      if (write(cfd, buf.data(), size) != static_cast<ssize_t>(size))
        _exit(7);
    close(cfd);
    proc_io b = read_proc_io();
    write_all(result + ".child", delta_json(a, b));
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(fd);
  proc_io after = read_proc_io();

  std::string tid_list;
  for (long t : tids) {
    // Appended in two steps: `"," + std::to_string(t)` trips GCC 12's -Wrestrict at -O3 (a false
    // positive inside libstdc++, GCC bug 105329).
    tid_list += tid_list.empty() ? "" : ",";
    tid_list += std::to_string(t);
  }
  write_all(result, "{\"pid\":" + std::to_string(getpid()) + ",\"child_pid\":" + std::to_string(child) +
                        ",\"tids\":[" + tid_list + "],\"io\":" + delta_json(before, after) + "}\n");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
