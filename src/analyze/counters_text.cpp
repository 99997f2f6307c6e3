#include "analyze/counters_text.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>
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

std::string short_name(std::string name, size_t width = 40)
{
  return name.size() > width ? "..." + name.substr(name.size() - (width - 3)) : name;
}

// The sum of the named counters of the module's ("MPIIO" + "_INDEP_READS", ...).
unsigned long long sum(const nlohmann::json& counters, const std::string& module,
                       std::initializer_list<const char*> names)
{
  unsigned long long n = 0;
  for (const char* name : names) n += u(counters, (module + "_" + name).c_str());
  return n;
}

// STDIO, MPIIO, H5F and H5D entries: calls and bytes (bytes: STDIO's own; the others' datatype
// and selection sizes are not in the trace, so the POSIX bytes beneath them).
std::string modules_text(const nlohmann::json& files, const nlohmann::json& unattributed, size_t rows)
{
  std::vector<const nlohmann::json*> entries;
  for (const auto& f : files)
    if (f.value("module", "POSIX") != "POSIX")
      entries.push_back(&f);
  std::string out;
  if (!entries.empty()) {
    out =
        fmt("%-40s %-6s %-12s %6s %8s %8s %14s %14s %14s %9s\n", "file (STDIO, MPI-IO, HDF5)", "module",
            "dataset", "opens", "reads", "writes", "bytes_read", "bytes_written", "posix_written", "meta_s");
    for (size_t i = 0; i < std::min(rows, entries.size()); ++i) {
      const auto& f = *entries[i];
      std::string m = f.value("module", "");
      const auto& c = f["counters"];
      bool stdio = m == "STDIO";
      out += fmt("%-40s %-6s %-12s %6llu %8llu %8llu %14s %14s %14llu %9.4f\n",
                 short_name(f.value("file", "")).c_str(), m.c_str(),
                 short_name(f.value("dataset", "-"), 12).c_str(),
                 sum(c, m, {"OPENS", "INDEP_OPENS", "COLL_OPENS"}),
                 sum(c, m, {"READS", "INDEP_READS", "COLL_READS", "SPLIT_READS", "NB_READS"}),
                 sum(c, m, {"WRITES", "INDEP_WRITES", "COLL_WRITES", "SPLIT_WRITES", "NB_WRITES"}),
                 stdio ? std::to_string(u(c, "STDIO_BYTES_READ")).c_str() : "-",
                 stdio ? std::to_string(u(c, "STDIO_BYTES_WRITTEN")).c_str() : "-",
                 u(f, "posix_bytes_written"), f["fcounters"].value(m + "_F_META_TIME", 0.0));
    }
    if (entries.size() > rows)
      out += fmt("... %zu STDIO, MPI-IO and HDF5 entries in all (see --json)\n", entries.size());
  }
  unsigned long long lost = 0;
  std::string each;
  for (const auto& [m, n] : unattributed.items())
    if (u(unattributed, m.c_str()) > 0) {
      lost += u(unattributed, m.c_str());
      each += fmt(" %s %llu", m.c_str(), u(unattributed, m.c_str()));
    }
  if (lost > 0)
    out += fmt("calls charged to no file (their handle was never seen opened):%s\n", each.c_str());
  return out.empty() ? out : out + "\n";
}

std::string files_text(const nlohmann::json& all, size_t rows)
{
  if (!all.is_array() || all.empty())
    return "";
  std::vector<const nlohmann::json*> files;
  for (const auto& f : all)
    if (f.value("module", "POSIX") == "POSIX")
      files.push_back(&f);
  if (files.empty())
    return "";
  std::string out = fmt("%-40s %6s %8s %8s %14s %14s %5s %6s %5s %9s\n", "file (POSIX)", "opens", "reads",
                        "writes", "bytes_read", "bytes_written", "seq", "consec", "<4K", "meta_s");
  for (size_t i = 0; i < std::min(rows, files.size()); ++i) {
    const auto& f = *files[i];
    const auto& c = f["counters"];
    unsigned long long ops = u(c, "POSIX_READS") + u(c, "POSIX_WRITES");
    std::string name = short_name(f.value("file", ""));
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
  if (report.contains("files")) {
    out += files_text(report["files"], rows);
    out += modules_text(report["files"], report.value("files_unattributed", nlohmann::json::object()), rows);
  }
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
