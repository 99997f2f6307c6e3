/* A program with USDT probes (SystemTap SDT notes): N `dctest:tick` sites hit, each guarded by
 * its semaphore as PostgreSQL's probes are (the program evaluates a probe only while a tracer
 * has counted its semaphore up), and one `dctest:done` hit whatever its semaphore says. It prints how many
 * ticks it saw enabled, for the test to compare with the trace.
 *
 * usage: usdt_app N */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

unsigned short dctest_tick_semaphore __attribute__((section(".probes"), used));
unsigned short dctest_done_semaphore __attribute__((section(".probes"), used));

int main(int argc, char** argv)
{
  if (argc != 2)
    return 2;
  int n = atoi(argv[1]), enabled = 0;
  for (int i = 0; i < n; i++)
    if (dctest_tick_semaphore) {
      ++enabled;
      DTRACE_PROBE1(dctest, tick, i);
    }
  DTRACE_PROBE(dctest, done);
  printf("enabled=%d\n", enabled);
  return 0;
}
