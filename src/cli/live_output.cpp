#include "cli/live_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/category.h"

namespace dc {

namespace {

std::string upper(std::string s)
{
  std::ranges::transform(s, s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

result<std::set<std::string, std::less<>>> print_layers(const std::vector<std::string>& names,
                                                        const probe_config& config)
{
  std::vector<std::string> known = {std::string(category::posix), std::string(category::fs),
                                    std::string(category::block), std::string(category::net),
                                    std::string(category::fault)};
  for (const auto& e : config.entries)
    if (e.kind == probe_kind::uprobe || e.kind == probe_kind::usdt)
      known.push_back(e.name);
  std::set<std::string, std::less<>> chosen;
  for (const auto& n : names) {
    auto it = std::ranges::find_if(known, [&](const std::string& k) { return upper(k) == upper(n); });
    if (it == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return fail("--print-filter: no layer '" + n + "' makes events here (layers: " + list + ")", 2);
    }
    chosen.insert(*it);
  }
  return chosen;
}

result<std::unique_ptr<async_output>> print_output(const std::string& path)
{
  if (path.empty())
    return std::make_unique<async_output>(STDOUT_FILENO, "stdout", false);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot create --print-file '" + path + "': " + std::strerror(errno));
  return std::make_unique<async_output>(fd, "'" + path + "'", true);
}

std::function<void(const live_frame&)> live_printer(std::shared_ptr<async_output> out)
{
  bool tty = isatty(STDOUT_FILENO) == 1;
  return [out = std::move(out), tty](const live_frame& f) {
    // A terminal gets the frame in place of the last (home, clear), like top; anything else a
    // block per frame, separated by a blank line. The last frame stays on the screen, and what
    // the run prints after it starts after a blank line.
    if (tty)
      (void)out->write("\033[H\033[2J" + live_text(f) + (f.ended ? "\n" : ""));
    else
      (void)out->write(live_text(f) + "\n");
  };
}

std::string live_snapshot_path(const std::string& run_dir, const std::string& run_id)
{
  return run_dir + "/datacrumbs-" + run_id + ".live.json";
}

std::function<void(const live_frame&)> live_snapshot_writer(std::string path, uint32_t uid, uint32_t gid)
{
  return [path = std::move(path), uid, gid](const live_frame& f) {
    // A few kilobytes a second on the decoding thread, in the run directory (a tmpfs, /run): a
    // failure costs this frame only, said once.
    static bool warned = false;
    std::string temp = path + ".tmp";
    std::string text = live_frame_json(f).dump() + "\n";
    ::unlink(temp.c_str());
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && fchown(fd, uid, gid) == 0 &&
              ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (fd >= 0)
      ok = ::close(fd) == 0 && ok;
    ok = ok && std::rename(temp.c_str(), path.c_str()) == 0;
    if (!ok) {
      ::unlink(temp.c_str());
      if (!warned)
        std::fprintf(stderr, "datacrumbs: cannot write the live snapshot %s: %s\n", path.c_str(),
                     std::strerror(errno));
      warned = true;
    }
  };
}

}  // namespace dc
