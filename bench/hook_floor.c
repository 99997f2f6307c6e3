/* The floor of any BPF system-call tracer on this machine: two empty programs (return 0) on the
 * raw sys_enter and sys_exit tracepoints, the hooks datacrumbs' system-call layer uses, attached
 * until SIGTERM or SIGINT. Every system call of every process then takes the kernel's traced
 * path and runs both, as under datacrumbs, with nothing else done (bench/run_overhead.sh,
 * config hooks-floor). Prints "attached" once both are. */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int s)
{
  (void)s;
  stop = 1;
}

int main(void)
{
  struct bpf_insn empty[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "hook_floor", "GPL", empty, 2, NULL);
  if (prog < 0) {
    fprintf(stderr, "hook_floor: loading the empty program: %s\n", strerror(errno));
    return 1;
  }
  if (bpf_raw_tracepoint_open("sys_enter", prog) < 0 || bpf_raw_tracepoint_open("sys_exit", prog) < 0) {
    fprintf(stderr, "hook_floor: attaching to sys_enter/sys_exit: %s\n", strerror(errno));
    return 1;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  printf("attached\n");
  fflush(stdout);
  while (!stop) pause();
  return 0;
}
