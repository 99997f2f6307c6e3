#include "analyze/counters_text.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "analyze/text_format.h"

namespace dc::analyze {

namespace {

unsigned long long u(const nlohmann::json& j, const char* key)
{
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<unsigned long long>() : 0;
}

std::string ratio(const nlohmann::json& j, const char* key)
{
  auto it = j.find(key);
  return it == j.end() || !it->is_number() ? "-" : fmt("%.2f", it->get<double>());
}

std::string share(unsigned long long part, unsigned long long whole)
{
  return whole == 0 ? "-" : fmt("%.0f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string files_text(const nlohmann::json& files, size_t rows)
{
  if (!files.is_array() || files.empty())
    return "";
  std::string out = fmt("%-40s %6s %8s %8s %14s %14s %5s %6s %5s %9s\n", "file (POSIX)", "opens", "reads",
                        "writes", "bytes_read", "bytes_written", "seq", "consec", "<4K", "meta_s");
  for (size_t i = 0; i < std::min(rows, files.size()); ++i) {
    const auto& f = files[i];
    const auto& c = f["counters"];
    unsigned long long ops = u(c, "POSIX_READS") + u(c, "POSIX_WRITES");
    std::string name = f.value("file", "");
    if (name.size() > 40)
      name = "..." + name.substr(name.size() - 37);
    out +=
        fmt("%-40s %6llu %8llu %8llu %14llu %14llu %5s %6s %5s %9.4f\n", name.c_str(), u(c, "POSIX_OPENS"),
            u(c, "POSIX_READS"), u(c, "POSIX_WRITES"), u(c, "POSIX_BYTES_READ"), u(c, "POSIX_BYTES_WRITTEN"),
            share(u(c, "POSIX_SEQ_READS") + u(c, "POSIX_SEQ_WRITES"), ops).c_str(),
            share(u(c, "POSIX_CONSEC_READS") + u(c, "POSIX_CONSEC_WRITES"), ops).c_str(),
            share(u(f, "small_ops"), ops).c_str(), f["fcounters"].value("POSIX_F_META_TIME", 0.0));
  }
  if (files.size() > rows)
    out += fmt("... %zu files in all (see --json)\n", files.size());
  return out + "\n";
}

std::string amp_row(const std::string& label, const nlohmann::json& r)
{
  return fmt("%-22s %8llu %8llu %8llu %8llu %8llu %8llu %7s %7s %14llu %14llu\n", label.c_str(),
             u(r, "SYS_R"), u(r, "SYS_W"), u(r, "VFS_R"), u(r, "VFS_W"), u(r, "BLK_R"), u(r, "BLK_W"),
             ratio(r, "R_AMP").c_str(), ratio(r, "W_AMP").c_str(), u(r, "blk_read_bytes"),
             u(r, "blk_write_bytes"));
}

std::string amplification_text(const nlohmann::json& amp, size_t rows)
{
  if (!amp.is_object() || !amp.contains("total"))
    return "";
  std::string out =
      fmt("%-22s %8s %8s %8s %8s %8s %8s %7s %7s %14s %14s\n", "SYSTEM", "SYS_R", "SYS_W", "VFS_R", "VFS_W",
          "BLK_R", "BLK_W", "R_AMP", "W_AMP", "blk_read_bytes", "blk_write_bytes");
  out += amp_row("(run)", amp["total"]);
  for (const auto& s : amp.value("systems", nlohmann::json::array()))
    out += amp_row(s.value("system", ""), s);
  std::vector<const nlohmann::json*> procs;
  for (const auto& p : amp["processes"]) procs.push_back(&p);
  auto moved = [](const nlohmann::json* p) {
    return u(*p, "sys_read_bytes") + u(*p, "sys_write_bytes") + u(*p, "blk_read_bytes") +
           u(*p, "blk_write_bytes");
  };
  std::stable_sort(procs.begin(), procs.end(), [&](auto a, auto b) { return moved(a) > moved(b); });
  for (size_t i = 0; i < std::min(rows, procs.size()); ++i)
    out += amp_row(fmt("%s:%llu", procs[i]->value("host", "").c_str(), u(*procs[i], "pid")), *procs[i]);
  return out + "\n";
}

}  // namespace

std::string counters_text(const nlohmann::json& report, size_t rows)
{
  std::string out;
  if (report.contains("files"))
    out += files_text(report["files"], rows);
  if (report.contains("amplification"))
    out += amplification_text(report["amplification"], rows);
  if (report.contains("page_cache") && report["page_cache"].contains("hits")) {
    const auto& pc = report["page_cache"];
    out += fmt("page cache: hits %llu, misses %llu, hit ratio %s, written back %llu, evicted %llu\n",
               u(pc, "hits"), u(pc, "misses"), ratio(pc, "hit_ratio").c_str(), u(pc, "written_back"),
               u(pc, "evicted"));
  }
  if (report.contains("network") && report["network"].contains("bytes_sent")) {
    const auto& n = report["network"];
    out +=
        fmt("network: sent %llu bytes in %llu calls, received %llu bytes in %llu calls, %llu connections, "
            "%llu retransmits, %llu drops\n",
            u(n, "bytes_sent"), u(n, "sends"), u(n, "bytes_received"), u(n, "receives"), u(n, "connections"),
            u(n, "retransmits"), u(n, "drops"));
  }
  if (report.contains("diagnostics"))
    for (const auto& d : report["diagnostics"])
      out += fmt("[%s] %s: %s\n", d.value("severity", "").c_str(), d.value("rule", "").c_str(),
                 d.value("message", "").c_str());
  return out;
}

}  // namespace dc::analyze
