#!/usr/bin/env bash
# Installs the Debian packages DataCrumbs needs to build, test and benchmark.
# Idempotent: installs only what is missing, so a second run is fast.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ clang llvm pkg-config clang-format
  # the fuzz build (scripts/fuzz.sh, ctest fuzz_parsers): clang 19, whose <expected> support the
  # C++23 code needs (Debian's clang 14 has none), and its libFuzzer and sanitizer runtimes
  clang-19 libclang-rt-19-dev
  # BPF toolchain and libraries
  libbpf-dev bpftool libelf-dev zlib1g-dev libdeflate-dev
  # the trace's gzip members are compressed with igzip (Intel ISA-L): 3x libdeflate's speed
  libisal-dev
  # C++ libraries
  libcli11-dev nlohmann-json3-dev libsimdjson-dev libgtest-dev libbenchmark-dev libyaml-cpp-dev libssl-dev
  # user regexes: RE2 matches in linear time whatever the pattern (std::regex backtracks)
  libre2-dev
  # real libraries the user-space layers are tested against
  libhdf5-openmpi-dev openmpi-bin
  # <sys/sdt.h>: the USDT test program defines its probes with it
  systemtap-sdt-dev
  # datacrumbs_track/untrack edit ELF dependencies with it
  patchelf
  # the SLURM integration (SPANK plugin headers) and its test's real one-node cluster
  libslurm-dev slurm-wlm slurmd slurmctld slurm-client munge
  # flux-core (scripts/build-flux.sh, the Flux test) and Darshan (scripts/build-darshan.sh, the
  # benchmarks' peer), built from the vendored snapshots
  autoconf automake libtool make libzmq3-dev libjansson-dev liblz4-dev libhwloc-dev libsqlite3-dev
  uuid-dev libncurses-dev libarchive-dev lua5.1 liblua5.1-0-dev lua-posix python3-dev python3-cffi
  python3-yaml python3-ply python3-setuptools
  # runtime ground truth and peers used by tests and benchmarks
  strace bpftrace util-linux procps coreutils gzip e2fsprogs xfsprogs postgresql fio
  # the collector's instruction counts per stage (bench/run_collector_instructions.sh: callgrind)
  valgrind
  # a trace on a filesystem without owners or modes: vfat through FUSE (this kernel has no vfat)
  dosfstools fusefat
  # script(1): the analyze progress bar test gives analyze a terminal
  bsdutils
  # the HTML report: npm installs its pinned charting libraries, the browser test opens it
  nodejs chromium
  # many traces on a Dask cluster (python/datacrumbs_dask; Debian's /usr/bin/python3)
  python3-dask python3-distributed
  # LLNL's dfanalyzer, which a viewer test loads traces with (tests/viewers)
  python3-pandas python3-numpy python3-rich python3-intervals python3-matplotlib python3-seaborn
  # the trace's line index (SQLite, in zindex's form)
  libsqlite3-dev
  # what chronyd and chronyc (unpacked below) link
  libedit2 libgnutls30 libnettle8 libseccomp2 libcap2
)
# Debian's npm, unless the installed nodejs brings its own (NodeSource's does).
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node packages at the versions pinned in each package-lock.json, into git-ignored node_modules:
# the HTML report's charting libraries (the build embeds them) and the Chrome trace model a
# viewer test loads traces with; skipped while an install is current.
root="$(cd "$(dirname "$0")/.." && pwd)"
for dir in "$root/src/analyze/report" "$root/tests/viewers"; do
  if [[ ! -f "$dir/node_modules/.package-lock.json" ||
        "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
    echo "install-deps: npm ci in $dir" >&2
    (cd "$dir" && npm ci --no-fund --no-audit --loglevel=error >/dev/null)
  fi
done

# chronyd and chronyc for the clock test (tests/runtime/analyze_hosts_test.cpp), unpacked from
# Debian's package into /opt/datacrumbs/chrony instead of installed: installing chrony would
# replace the machine's own time daemon (it conflicts with systemd-timesyncd and ntp).
chrony_dir=/opt/datacrumbs/chrony
if [[ ! -x $chrony_dir/usr/sbin/chronyd && $(id -u) -eq 0 ]]; then
  echo "install-deps: unpacking chrony into $chrony_dir" >&2
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download -q chrony >/dev/null 2>&1); then
    apt-get update -q >/dev/null
    (cd "$tmp" && apt-get download -q chrony >/dev/null)
  fi
  dpkg-deb -x "$tmp"/chrony_*.deb "$tmp/root"
  mkdir -p "${chrony_dir%/*}"
  rm -rf "$chrony_dir"
  mv "$tmp/root" "$chrony_dir"
  rm -rf "$tmp"
fi
