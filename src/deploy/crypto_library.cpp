#include "deploy/crypto_library.h"

#include <dlfcn.h>

#include <string>

namespace dc {

namespace {

// One symbol of the opened library, as the type of OpenSSL's declaration of it.
template <class F>
bool resolve(void* handle, const char* name, F* out, std::string* missing)
{
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (!*out && missing->empty())
    *missing = name;
  return *out != nullptr;
}

result<const crypto_library*> open_once()
{
  // The library this build compiled against, by its SONAME (CMake: DC_LIBCRYPTO_SONAME).
  void* handle = dlopen(DC_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return fail(std::string("cannot load OpenSSL's ") + DC_LIBCRYPTO_SONAME +
                " to sign or check probe files: " + (why ? why : "unknown error"));
  }
  static crypto_library lib;
  std::string missing;
  resolve(handle, "HMAC", &lib.hmac, &missing);
  resolve(handle, "EVP_sha256", &lib.sha256, &missing);
  resolve(handle, "RAND_bytes", &lib.rand_bytes, &missing);
  resolve(handle, "CRYPTO_memcmp", &lib.memcmp, &missing);
  if (!missing.empty())
    return fail(std::string(DC_LIBCRYPTO_SONAME) + " has no " + missing);
  return &lib;  // the handle stays open for the process's life
}

}  // namespace

result<const crypto_library*> open_crypto_library()
{
  static const result<const crypto_library*> opened = open_once();
  return opened;
}

}  // namespace dc
