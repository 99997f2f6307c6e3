// The signing service's request parser (deploy/probe_file.h parse_probe_file_content): the
// unsigned probe file content any local user can send to the root service. A request it accepts
// is signed (as the service would) and must verify to the same probes.
#include "deploy/probe_file.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  auto probes = dc::parse_probe_file_content(dc::fuzz::text_of(data, size));
  if (!probes)
    return 0;
  const std::string secret = "fedcba9876543210fedcba9876543210";
  probes->uid = 4242;  // the service writes the peer's uid over whatever the request says
  auto signed_bytes = dc::sign_probe_file(*probes, secret);
  if (!signed_bytes)
    dc::fuzz::violated("an accepted request cannot be signed");
  auto back = dc::verify_probe_file(*signed_bytes, secret);
  if (!back)
    dc::fuzz::violated("a signed request does not verify");
  if (back->uid != 4242 || dc::probe_file_content(*back) != dc::probe_file_content(*probes))
    dc::fuzz::violated("a signed request verifies to other probes");
  return 0;
}
