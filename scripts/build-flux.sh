#!/usr/bin/env bash
# Builds flux-core from the vendored source snapshot once per machine and reuses the install:
# prints the install prefix. The Flux runtime test calls it; `scripts/install-deps.sh` installs
# the packages it needs. (Flux is not packaged for Debian 12.)
#
# usage: scripts/build-flux.sh [TARBALL]
#   TARBALL: default flux-core-0.88.0.tar.gz in the first vendor directory that has it:
#            ../shared/vendor (next to the repository), $DATACRUMBS_VENDOR_DIR,
#            /work/shared/vendor (where this project's machines keep it)
#   cache:   $DATACRUMBS_FLUX_CACHE, else /var/cache/datacrumbs/flux-core-0.88.0
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
name=flux-core-0.88.0.tar.gz
tarball=${1:-}
if [ -z "$tarball" ]; then
  for vendor in "$here/../shared/vendor" ${DATACRUMBS_VENDOR_DIR:+"$DATACRUMBS_VENDOR_DIR"} /work/shared/vendor; do
    if [ -f "$vendor/$name" ]; then
      tarball=$vendor/$name
      break
    fi
  done
fi
cache=${DATACRUMBS_FLUX_CACHE:-/var/cache/datacrumbs/flux-core-0.88.0}
prefix=$cache/install
if [ -x "$prefix/bin/flux" ] && [ -f "$cache/.built" ]; then
  echo "$prefix"
  exit 0
fi
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
  echo "build-flux: no ${tarball:-$name} (looked in $here/../shared/vendor," \
    "\$DATACRUMBS_VENDOR_DIR${DATACRUMBS_VENDOR_DIR:+ ($DATACRUMBS_VENDOR_DIR)} and /work/shared/vendor)" >&2
  exit 1
fi
mkdir -p "$cache"
# One build at a time per machine.
exec 9>"$cache/.lock"
flock 9
if [ -x "$prefix/bin/flux" ] && [ -f "$cache/.built" ]; then
  echo "$prefix"
  exit 0
fi
rm -rf "$cache/src" "$prefix"
mkdir -p "$cache/src"
tar xzf "$tarball" -C "$cache/src" --strip-components=1
(
  cd "$cache/src"
  FLUX_VERSION=0.88.0 ./autogen.sh
  ./configure --prefix="$prefix" --disable-docs PYTHON=/usr/bin/python3
  make -j"$(nproc)"
  make install
) >"$cache/build.log" 2>&1 || { echo "build-flux: build failed; see $cache/build.log" >&2; exit 1; }
rm -rf "$cache/src"
touch "$cache/.built"
echo "$prefix"
