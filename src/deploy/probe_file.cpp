#include "deploy/probe_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "deploy/crypto_library.h"

namespace dc {

namespace {

std::string hex(const unsigned char* p, size_t n)
{
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

result<std::string> hmac_hex(const std::string& secret, const std::string& data)
{
  auto crypto = open_crypto_library();
  if (!crypto)
    return std::unexpected(crypto.error());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!(*crypto)->hmac((*crypto)->sha256(), secret.data(), static_cast<int>(secret.size()),
                       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len))
    return fail("cannot compute the probe file's HMAC-SHA256");
  return hex(mac, len);
}

nlohmann::json content_json(const probe_file& p)
{
  nlohmann::json uprobes = nlohmann::json::array();
  for (const auto& t : p.uprobes)
    uprobes.push_back({{"category", t.category},
                       {"function", t.function},
                       {"binary", t.binary},
                       {"offset", t.offset},
                       {"usdt", t.usdt},
                       {"semaphore", t.semaphore}});
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : p.uprobe_entries) entries.push_back({{"category", e.category}, {"regex", e.regex}});
  return {{"version", 1},
          {"uid", p.uid},
          {"config", p.config_path},
          {"kernel_layers", p.kernel_layers},
          {"uprobes", uprobes},
          {"uprobe_entries", entries},
          {"profile_interval_ms", p.profile_interval_ms}};
}

result<std::string> gunzip(const std::string& bytes)
{
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  for (size_t cap = std::max<size_t>(bytes.size() * 8, 1 << 16); cap <= (1u << 30); cap *= 4) {
    std::string out(cap, '\0');
    size_t got = 0;
    auto r = libdeflate_gzip_decompress(d.get(), bytes.data(), bytes.size(), out.data(), cap, &got);
    if (r == LIBDEFLATE_SUCCESS) {
      out.resize(got);
      return out;
    }
    if (r != LIBDEFLATE_INSUFFICIENT_SPACE)
      break;
  }
  return fail("not a probe file (not gzip data)");
}

std::string octal_mode(mode_t mode)
{
  char text[8];
  std::snprintf(text, sizeof(text), "0%03o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

result<std::string> load_secret(const std::string& path, bool create)
{
  // Before the secret is in memory: no core dump of this process, and its /proc memory and
  // environment closed to any process without CAP_SYS_PTRACE.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return fail(std::string("cannot make this process non-dumpable to hold the signing secret: ") +
                std::strerror(errno));
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    auto crypto = open_crypto_library();
    if (!crypto)
      return std::unexpected(crypto.error());
    unsigned char key[32];
    if ((*crypto)->rand_bytes(key, sizeof(key)) != 1)
      return fail("cannot make a signing secret: no randomness");
    int out = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
    if (out < 0)
      return fail("cannot create the signing secret " + path + ": " + std::strerror(errno));
    bool ok = write(out, key, sizeof(key)) == static_cast<ssize_t>(sizeof(key)) && fsync(out) == 0;
    explicit_bzero(key, sizeof(key));
    close(out);
    if (!ok)
      return fail("cannot write the signing secret " + path);
    fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  if (fd < 0)
    return fail("cannot read the signing secret " + path + ": " + std::strerror(errno));
  // Checked on the open file, before a byte of it is read.
  struct stat st {};
  std::string wrong = fstat(fd, &st) != 0    ? std::string("cannot stat it: ") + std::strerror(errno)
                      : !S_ISREG(st.st_mode) ? "it is not a regular file"
                      : st.st_uid != 0 ? "it is owned by uid " + std::to_string(st.st_uid) + ", not root"
                      : (st.st_mode & 077) != 0
                          ? "its mode " + octal_mode(st.st_mode) + " lets group or others at it (chmod 0400)"
                          : "";
  if (!wrong.empty()) {
    close(fd);
    return fail("refusing the signing secret " + path + ": " + wrong);
  }
  char buf[256];
  ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n < 16) {
    explicit_bzero(buf, sizeof(buf));
    return fail("the signing secret " + path + " is too short (under 16 bytes)");
  }
  std::string secret(buf, static_cast<size_t>(n));
  explicit_bzero(buf, sizeof(buf));
  return secret;
}

void forget_secret(std::string& secret)
{
  explicit_bzero(secret.data(), secret.size());
  secret.clear();
}

result<std::string> sign_probe_file(const probe_file& probes, const std::string& secret)
{
  nlohmann::json content = content_json(probes);
  auto signature = hmac_hex(secret, content.dump());
  if (!signature)
    return std::unexpected(signature.error());
  std::string text = nlohmann::json{{"content", content}, {"signature", *signature}}.dump();
  std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(libdeflate_alloc_compressor(6),
                                                                             libdeflate_free_compressor);
  std::string out(libdeflate_gzip_compress_bound(c.get(), text.size()), '\0');
  size_t n = libdeflate_gzip_compress(c.get(), text.data(), text.size(), out.data(), out.size());
  if (n == 0)
    return fail("cannot compress the probe file");
  out.resize(n);
  return out;
}

result<probe_file> verify_probe_file(const std::string& bytes, const std::string& secret)
{
  auto text = gunzip(bytes);
  if (!text)
    return std::unexpected(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("content") || !j.contains("signature") ||
      !j["signature"].is_string())
    return fail("not a signed probe file");
  auto want = hmac_hex(secret, j["content"].dump());
  if (!want)
    return std::unexpected(want.error());
  std::string got = j["signature"];
  auto same = (*open_crypto_library())->memcmp;  // opened by hmac_hex: constant-time compare
  if (got.size() != want->size() || same(got.data(), want->data(), want->size()) != 0)
    return fail("the probe file's signature does not verify (tampered, or signed with another secret)");
  return parse_probe_file_content(j["content"].dump());
}

std::string probe_file_content(const probe_file& probes)
{
  return content_json(probes).dump();
}

result<probe_file> parse_probe_file_content(const std::string& text)
{
  nlohmann::json c = nlohmann::json::parse(text, nullptr, false);
  // A number the file holds: a whole number up to max. JSON gives a negative, fractional or
  // too-large number as a float, whose conversion to an unsigned field would be undefined.
  auto whole = [](const nlohmann::json& o, const char* key, uint64_t max,
                  std::optional<uint64_t> absent = std::nullopt) -> uint64_t {
    if (!o.contains(key) && absent)
      return *absent;
    const nlohmann::json& v = o.at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
      throw std::out_of_range(std::string("'") + key + "' is not a whole number up to " +
                              std::to_string(max));
    return v.get<uint64_t>();
  };
  try {
    if (!c.is_object())
      return fail("malformed probe file: not a JSON object");
    probe_file p;
    p.uid = static_cast<uint32_t>(whole(c, "uid", UINT32_MAX - 1));  // (uid_t)-1 is no one's
    p.config_path = c.at("config");
    p.kernel_layers = c.at("kernel_layers").get<std::vector<std::string>>();
    for (const auto& u : c.at("uprobes"))
      p.uprobes.push_back({u.at("category"), u.at("function"), u.at("binary"), whole(u, "offset", UINT64_MAX),
                           u.value("usdt", false), whole(u, "semaphore", UINT64_MAX, 0)});
    for (const auto& e : c.value("uprobe_entries", nlohmann::json::array()))
      p.uprobe_entries.push_back({e.at("category"), e.at("regex")});
    p.profile_interval_ms = whole(c, "profile_interval_ms", max_profile_interval_ms, 0);
    if (p.profile_interval_ms != 0 && p.profile_interval_ms < min_profile_interval_ms)
      return fail("malformed probe file: profile_interval_ms out of range");
    return p;
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("malformed probe file: ") + e.what());
  } catch (const std::out_of_range& e) {
    return fail(std::string("malformed probe file: ") + e.what());
  }
}

}  // namespace dc
