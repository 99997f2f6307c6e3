// OpenSSL's libcrypto, opened the first time a probe file is signed or checked rather than by
// the dynamic loader at every start of the programs that link this module (`datacrumbs` among
// them): its ~21,000 relocations cost ~125 page faults, ~2 ms of every `datacrumbs run`,
// which never signs anything (docs/performance.md, session 34).
#pragma once

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/result.h"

namespace dc {

// The functions this module uses, with OpenSSL's own signatures.
struct crypto_library {
  decltype(&::HMAC) hmac = nullptr;
  decltype(&::EVP_sha256) sha256 = nullptr;
  decltype(&::RAND_bytes) rand_bytes = nullptr;
  decltype(&::CRYPTO_memcmp) memcmp = nullptr;
};

// The library, opened once per process (later calls return the same); an error names the
// library and what the dynamic loader said.
result<const crypto_library*> open_crypto_library();

}  // namespace dc
