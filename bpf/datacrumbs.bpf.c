/* The one BPF object: every layer's programs in one translation unit, one .bpf.c per layer kept.
 * Loading one object parses the kernel's BTF once and resolves each CO-RE relocation's
 * candidates once, where eight objects did all of it eight times (datacrumbs run -- /bin/true:
 * ~0.2 s of CPU for loading, half of it that repetition); the maps every layer shares (ring,
 * traced set, loss counters, per-thread state, profile counters) are simply the same maps.
 * User space switches a layer off by not loading its programs (autoload), which are the ones
 * named dc_<layer>_... (src/probe/session.cpp checks that each program has exactly one layer).
 * The files are included, not linked: bpftool's static linker (libbpf 1.1) cannot link objects
 * that each declare the same kfunc. */
#include "process.bpf.c"
#include "syscall.bpf.c"
#include "fs.bpf.c"
#include "block.bpf.c"
#include "pagecache.bpf.c"
#include "net.bpf.c"
#include "fault.bpf.c"
#include "uprobe.bpf.c"
#include "beacon.bpf.c"
