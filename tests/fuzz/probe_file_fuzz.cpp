// The daemon's signed probe file reader (deploy/probe_file.h): gzip, JSON, HMAC-SHA256. A
// fuzzer cannot forge a signature, so an input whose first byte is 's' is taken as the content
// JSON and signed here with the secret (gzip, {"content","signature"}): the reader past its
// signature check. Any other input is the file's bytes as they are.
#include <libdeflate.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

#include "deploy/probe_file.h"
#include "fuzz/fuzz_util.h"

namespace {

const std::string secret = "0123456789abcdef0123456789abcdef";

std::string hmac_hex(const std::string& data)
{
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += {digits[mac[i] >> 4], digits[mac[i] & 15]};
  return out;
}

std::string gzip(const std::string& text)
{
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::string out(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, text.data(), text.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  std::string input = dc::fuzz::text_of(data, size);
  std::string bytes = input;
  if (!input.empty() && input[0] == 's') {
    nlohmann::json content = nlohmann::json::parse(input.substr(1), nullptr, false);
    if (content.is_discarded())
      return 0;
    bytes = gzip(nlohmann::json{{"content", content}, {"signature", hmac_hex(content.dump())}}.dump());
  }
  auto probes = dc::verify_probe_file(bytes, secret);
  if (!probes)
    return 0;
  // A file that verifies, signed again, verifies to the same probes.
  auto again = dc::sign_probe_file(*probes, secret);
  if (!again)
    dc::fuzz::violated("a verified probe file cannot be signed again");
  auto back = dc::verify_probe_file(*again, secret);
  if (!back || dc::probe_file_content(*back) != dc::probe_file_content(*probes))
    dc::fuzz::violated("sign(verify(file)) does not verify to the same probes");
  if (dc::verify_probe_file(*again, secret + "x"))
    dc::fuzz::violated("a file verified under another secret");
  return 0;
}
