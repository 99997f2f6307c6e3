#include "analyze/trace_reader.h"

#include <glob.h>
#include <malloc.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "analyze/chunk_source.h"
#include "analyze/file_reader.h"

namespace dc::analyze {

namespace fs = std::filesystem;

namespace {

bool is_trace_name(const std::string& name)
{
  return name.ends_with(".pfw") || name.ends_with(".pfw.gz");
}

// Workers that inflate and parse chunks; with none, a chunk is worked on where it is submitted
// (one thread reads, parses and applies, with the chunk still in its cache).
class worker_pool {
 public:
  explicit worker_pool(unsigned n)
  {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
  }
  ~worker_pool()
  {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  void submit(std::function<void()> task)
  {
    if (threads_.empty()) {
      task();
      return;
    }
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void run()
  {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty())
          return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::jthread> threads_;  // last: joined before the queue is destroyed
};

struct chunk_result {
  bool inflated = false;  // false: the applier streams this member itself
  parsed_chunk chunk;
};

// One gzip member inflated whole with libdeflate, its size taken from its trailer; false when
// the bytes are not exactly one member (a header lookalike cut it, or it is cut short).
bool inflate_member(const std::string& in, std::string& out)
{
  if (in.size() < 18)
    return false;
  const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
  size_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (static_cast<size_t>(t[3]) << 24);
  if (isize > in.size() * 1032 + 1024)  // beyond DEFLATE's largest ratio: not a trailer
    return false;
  out.reserve(isize + simdjson::SIMDJSON_PADDING);
  out.resize_and_overwrite(isize, [](char*, size_t n) { return n; });  // inflated over next
  thread_local std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  size_t in_used = 0, out_used = 0;
  auto rc =
      libdeflate_gzip_decompress_ex(d.get(), in.data(), in.size(), out.data(), isize, &in_used, &out_used);
  return rc == LIBDEFLATE_SUCCESS && in_used == in.size() && out_used == isize;
}

chunk_result work(chunk_piece& piece)
{
  chunk_result r;
  if (piece.what == chunk_piece::kind::member) {
    if (!inflate_member(piece.bytes, r.chunk.text))
      return r;
  } else if (piece.what == chunk_piece::kind::text) {
    r.chunk.text = std::move(piece.bytes);
    reserve_padding(r.chunk.text);
  } else {
    return r;
  }
  r.inflated = true;
  thread_local line_parser parser;
  parser.parse_chunk(r.chunk);
  return r;
}

struct open_file {
  std::string path;
  chunk_source source;
  file_reader reader;
  uint64_t pos = 0;              // gzip: where the next member starts
  bool resync = false;           // after corrupt data: the next piece's start is taken as a member start
  uint64_t resync_from = 0;      // where the bytes not read began (counted when resync ends)
  bool corrupt_pending = false;  // a corrupt member skipped whole: reported when its end is known
  uint64_t corrupt_lines = 0;    // the lines it decoded to before its damage
  bool begun = false;            // sink.begin_file called
  uint64_t lines_before = 0, problems_before = 0;  // inputs' counts when the file began
};

struct in_flight {
  open_file* file = nullptr;
  chunk_piece::kind what = chunk_piece::kind::text;
  uint64_t start = 0, end = 0;
  bool end_of_file = false;
  std::future<chunk_result> result;
};

class progress_bar {
 public:
  progress_bar(bool on, uint64_t total) : on_(on && total >= (16ull << 20)), total_(total) {}
  void update(uint64_t done)
  {
    if (!on_)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250))
      return;
    last_ = now;
    std::fprintf(stderr, "\ranalyze: %3d%%  %.1f of %.1f MB", static_cast<int>(100.0 * done / total_),
                 done / 1e6, total_ / 1e6);
  }
  ~progress_bar()
  {
    if (on_)
      std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool on_;
  uint64_t total_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& paths, inputs_section& inputs)
{
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (!ec && fs::is_directory(st)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && is_trace_name(it->path().filename().string()))
          found.push_back(it->path().string());
      std::sort(found.begin(), found.end());
      if (found.empty())
        inputs.problem(p + ": no traces (*.pfw, *.pfw.gz) found");
      out.insert(out.end(), found.begin(), found.end());
    } else if (!ec && fs::exists(st)) {
      out.push_back(p);
    } else if (p.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      if (glob(p.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
      else
        inputs.problem(p + ": no file matches");
      globfree(&g);
    } else {
      inputs.problem(p + ": no such file");
    }
  }
  return out;
}

void read_traces(const std::vector<std::string>& files, const reader_options& options, inputs_section& inputs,
                 record_sink& sink)
{
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  // Chunks are a few MiB each: keep them in the heap for reuse instead of a fresh mmap (and its
  // page faults) per chunk.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  // --threads 1: no workers, each chunk is applied as soon as it is parsed; more: the workers
  // parse ahead while this thread applies in line order.
  unsigned workers = threads > 1 ? threads : 0;
  const size_t max_in_flight = workers ? 2 * workers + 2 : 1;
  uint64_t total = 0, done = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    auto n = fs::file_size(f, ec);
    total += ec ? 0 : n;
  }
  progress_bar bar(options.progress, total);
  worker_pool pool(workers);
  std::deque<std::unique_ptr<open_file>> open;  // files with pieces in flight, in order
  std::deque<in_flight> queue;
  size_t next_file = 0;
  open_file* producing = nullptr;

  auto produce = [&]() -> bool {
    while (true) {
      if (!producing) {
        if (next_file == files.size())
          return false;
        const std::string& path = files[next_file++];
        auto src = chunk_source::open(path);
        if (!src) {
          inputs.problem(src.error().message);
          continue;
        }
        ++inputs.files;
        inputs.bytes += src->size();
        int fd = src->fd();
        open.push_back(std::make_unique<open_file>(
            open_file{path, std::move(*src), file_reader(path, fd, inputs, sink)}));
        producing = open.back().get();
        producing->lines_before = inputs.lines;
        producing->problems_before = inputs.problems_total;
      }
      auto piece = std::make_shared<chunk_piece>();
      if (producing->source.next(*piece)) {
        auto task = std::make_shared<std::packaged_task<chunk_result()>>([piece] { return work(*piece); });
        in_flight item{producing, piece->what, piece->start, piece->end, false, task->get_future()};
        pool.submit([task] { (*task)(); });
        queue.push_back(std::move(item));
        return true;
      }
      queue.push_back(in_flight{producing, chunk_piece::kind::text, 0, 0, true, {}});
      producing = nullptr;
    }
  };

  // Streams the member at f.pos; moves f.pos past what it read. A member that fits in memory
  // is first inflated without applying: when zlib finds it damaged, none of its text is read
  // (damaged deflate data can decode into plausible copies of earlier lines).
  auto skip_from = [&](open_file& f, uint64_t from) {  // bytes from `from` to the next header
    f.resync = true;
    f.resync_from = from;
  };
  // The bytes from resync_from to `to` were not read: counted, and a corrupt member skipped
  // whole is reported now that its size is known.
  auto end_skip = [&](open_file& f, uint64_t to) {
    inputs.unreadable_bytes += to - f.resync_from;
    f.resync = false;
    if (!f.corrupt_pending)
      return;
    f.corrupt_pending = false;
    inputs.problem(f.path + ": corrupt gzip member at byte " + std::to_string(f.resync_from) +
                   " (skipped: " + std::to_string(to - f.resync_from) + " bytes, which decode to at least " +
                   std::to_string(f.corrupt_lines) +
                   " lines before the damage; damaged data cannot be trusted, so none is read)");
  };
  auto stream = [&](open_file& f, uint64_t next_start, bool verify) {
    uint64_t at = f.pos;
    using st = file_reader::stream_status;
    file_reader::stream_result res;
    if (verify) {
      res = f.reader.stream_member(at, false);
      if (res.status == st::corrupt && res.produced > 0) {
        f.reader.finish(true);
        ++inputs.corrupt_members;
        inputs.corrupt_lines_at_least += res.newlines;
        f.corrupt_pending = true;
        f.corrupt_lines = res.newlines;
        f.pos = res.end;
        skip_from(f, at);
        return;
      }
    }
    if (!verify || res.status != st::corrupt)
      res = f.reader.stream_member(at);
    if (res.status == st::complete) {
      f.pos = res.end;
      f.source.resume_at(f.pos);
      return;
    }
    bool line_cut = f.reader.finish(true);
    if (res.produced == 0 && res.status == st::corrupt) {
      uint64_t stop = next_start > at ? next_start : f.source.size();
      inputs.problem(f.path + ": " + std::to_string(stop - at) + " bytes at byte " + std::to_string(at) +
                     " are not gzip (skipped)");
      inputs.unreadable_bytes += stop - at;
      f.pos = stop;
      return;
    }
    // Lines count from 1 with the "[" line, as in every FILE:LINE message.
    uint64_t last = f.reader.lines();
    std::string where = ": read up to line " + std::to_string(last) + " (its last complete line" +
                        (line_cut ? "; line " + std::to_string(last + 1) + " was cut short)" : ")");
    if (res.status == st::cut) {
      inputs.problem(f.path + ": truncated gzip member at byte " + std::to_string(at) + where);
      f.pos = f.source.size();
    } else {
      ++inputs.corrupt_members;
      inputs.problem(f.path + ": corrupt gzip member at byte " + std::to_string(at) + where +
                     "; the rest of the member is not read");
      f.pos = res.end;
      skip_from(f, res.end);
    }
  };

  auto consume = [&] {
    in_flight item = std::move(queue.front());
    queue.pop_front();
    open_file& f = *item.file;
    if (!f.begun) {
      f.begun = true;
      if (sink.begin_file)
        sink.begin_file(f.path);
    }
    if (item.end_of_file) {
      if (f.source.gzip() && f.pos < f.source.size() && !f.resync)
        stream(f, f.source.size(), true);
      if (f.resync)  // corrupt data up to the end of the file
        end_skip(f, f.source.size());
      f.reader.finish(false);
      if (inputs.lines == f.lines_before && inputs.problems_total == f.problems_before)
        inputs.problem(f.path + (f.source.size() == 0
                                     ? ": empty file (0 bytes)"
                                     : ": no trace lines in it (only blank, [ and ] lines)"));
      done += f.source.size();
      if (sink.end_file)
        sink.end_file();
      open.pop_front();
      return;
    }
    chunk_result r = item.result.get();
    if (f.source.gzip()) {
      auto settle = [&] {
        if (f.resync && item.start > f.pos) {  // corrupt data ended at the next header
          end_skip(f, item.start);
          f.pos = item.start;
        }
      };
      settle();
      while (item.start > f.pos) {  // bytes no piece starts at: stream them (garbage is reported)
        stream(f, item.start, true);
        settle();
      }
      if (item.start < f.pos)
        return;  // inside a member the reader streamed
      if (r.inflated) {
        f.reader.apply(r.chunk);
        f.pos = item.end;
      } else {
        stream(f, item.end, item.what != chunk_piece::kind::stream_only);
      }
    } else {
      f.reader.apply(r.chunk);
      f.pos = item.end;
    }
    bar.update(done + std::min(f.pos, f.source.size()));
  };

  while (true) {
    while (queue.size() < max_in_flight && produce()) {
    }
    if (queue.empty())
      break;
    consume();
  }
}

}  // namespace dc::analyze
