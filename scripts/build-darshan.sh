#!/usr/bin/env bash
# Builds Darshan 3.5 (the HPC I/O characterization library, a peer in the overhead benchmarks)
# from the vendored source snapshot once per machine and reuses the install: prints the install
# prefix. Two variants (see ../shared/vendor/README.md):
#   counters  the default build, non-MPI, with darshan-parser and darshan-dxt-parser;
#   dxt       --with-mod-mem=256 --disable-darshan-util, so DXT keeps every operation (the
#             default 2 MiB module memory holds ~52 k DXT segments, then records nothing more).
#
# usage: scripts/build-darshan.sh counters|dxt [--if-built]
#   --if-built: print the prefix if that variant is already built, else exit 3 (builds nothing)
#   tarball: ../shared/vendor/darshan-3.5.0.tar.gz next to the repository, else
#            $DATACRUMBS_VENDOR_DIR/darshan-3.5.0.tar.gz, else /work/shared/vendor/
#   cache:   $DATACRUMBS_DARSHAN_CACHE/<variant>, else /var/cache/datacrumbs-bench/darshan-3.5.0-<variant>
set -euo pipefail
variant=${1:-}
[[ "$variant" == counters || "$variant" == dxt ]] || { echo "usage: $0 counters|dxt [--if-built]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
name=darshan-3.5.0
tarball=""
for dir in "$here/../shared/vendor" "${DATACRUMBS_VENDOR_DIR:-}" /work/shared/vendor; do
  [[ -n "$dir" && -f "$dir/$name.tar.gz" ]] && { tarball="$dir/$name.tar.gz"; break; }
done
if [[ -n "${DATACRUMBS_DARSHAN_CACHE:-}" ]]; then
  cache=$DATACRUMBS_DARSHAN_CACHE/$variant
else
  cache=/var/cache/datacrumbs-bench/$name-$variant
fi
prefix=$cache/install
built() { [[ -f "$prefix/lib/libdarshan.so" && -f "$cache/.built" ]]; }
if built; then
  echo "$prefix"
  exit 0
fi
[[ "${2:-}" != --if-built ]] || exit 3
[[ -n "$tarball" ]] || { echo "build-darshan: no $name.tar.gz in ../shared/vendor, \$DATACRUMBS_VENDOR_DIR or /work/shared/vendor" >&2; exit 1; }
for tool in autoconf automake libtoolize make gcc; do
  command -v "$tool" >/dev/null || { echo "build-darshan: $tool is missing (bash scripts/install-deps.sh)" >&2; exit 1; }
done
mkdir -p "$cache"
# One build at a time per variant and machine.
exec 9>"$cache/.lock"
flock 9
if built; then
  echo "$prefix"
  exit 0
fi
options=(--prefix="$prefix" --without-mpi --with-log-path-by-env=DARSHAN_LOGPATH --with-jobid-env=NONE CC=gcc)
[[ "$variant" == counters ]] || options+=(--with-mod-mem=256 --disable-darshan-util)
rm -rf "$cache/src" "$prefix"
mkdir -p "$cache/src"
tar xzf "$tarball" -C "$cache/src" --strip-components=1
(
  cd "$cache/src"
  ./prepare.sh
  mkdir build
  cd build
  ../configure "${options[@]}"
  make -j"$(nproc)"
  make install
) >"$cache/build.log" 2>&1 || { echo "build-darshan: $variant build failed; see $cache/build.log" >&2; exit 1; }
rm -rf "$cache/src"
touch "$cache/.built"
echo "$prefix"
