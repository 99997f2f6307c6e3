/* A program for the user-space layers: N fwrite calls to FILE through stdio, a custom
 * function (found by regex from a config) that flushes, and one that never returns (it
 * longjmps out), after which nesting must be as if it had returned.
 *
 * usage: stdio_app FILE N */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static jmp_buf escape_point;

__attribute__((noinline)) void dc_custom_checkpoint(FILE* f)
{
  struct timespec pause = {0, 2 * 1000 * 1000};
  nanosleep(&pause, NULL); /* a duration the test can bound from below */
  fflush(f);
}

__attribute__((noinline)) void dc_custom_escape(void)
{
  longjmp(escape_point, 1);
}

int main(int argc, char** argv)
{
  if (argc != 3)
    return 2;
  int n = atoi(argv[2]);
  FILE* f = fopen(argv[1], "w");
  if (!f)
    return 3;
  char buf[3000];
  memset(buf, 'x', sizeof buf);
  for (int i = 0; i < n; i++)
    if (fwrite(buf, 1, sizeof buf, f) != sizeof buf)
      return 4;
  dc_custom_checkpoint(f);
  if (setjmp(escape_point) == 0)
    dc_custom_escape();
  /* After the escape: this call and its system calls are outermost again. */
  if (fwrite(buf, 1, sizeof buf, f) != sizeof buf || fclose(f) != 0)
    return 5;
  return 0;
}
