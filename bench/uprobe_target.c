/* The per-call cost of a probed user-space function: CALLS calls of an empty function that the
 * compiler cannot inline or drop, timed inside the program.
 *
 * usage: uprobe_target CALLS   prints "ns_per_op=N calls=CALLS" */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int bench_probed_call(int x)
{
  __asm__ volatile("" : "+r"(x));
  return x + 1;
}

int main(int argc, char** argv)
{
  long calls = argc > 1 ? atol(argv[1]) : 100000;
  struct timespec a, b;
  int acc = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < calls; i++) acc = bench_probed_call(acc);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  printf("ns_per_op=%.1f calls=%ld acc=%d\n", ns / (double)calls, calls, acc);
  return 0;
}
