/* A controlled stdio workload for analyze's STDIO counters: every call's bytes and the stream's
 * position are known (tests/runtime/analyze_modules_test.cpp holds the expected counters).
 *
 * usage: stdio_workload DIR   (writes DIR/stdio.dat and DIR/fdopen.dat) */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv)
{
  if (argc != 2)
    return 2;
  char path[4096], path2[4096];
  snprintf(path, sizeof path, "%s/stdio.dat", argv[1]);
  snprintf(path2, sizeof path2, "%s/fdopen.dat", argv[1]);
  static char buf[8192];
  memset(buf, 'x', sizeof buf);
  volatile int n = 7; /* not a constant: fprintf stays fprintf */

  FILE* f = fopen(path, "w+");
  if (!f)
    return 3;
  for (int i = 0; i < 10; i++)
    if (fwrite(buf, 1, 1000, f) != 1000) /* 10 writes: bytes 0..9999 */
      return 4;
  if (fprintf(f, "n=%d\n", n) != 4) /* 4 bytes: 10000..10003 */
    return 5;
  if (fflush(f) != 0)
    return 6;
  if (fseek(f, 0, SEEK_SET) != 0) /* seek 1 */
    return 7;
  if (fread(buf, 1, 4000, f) != 4000 || fread(buf, 1, 4000, f) != 4000) /* 0..7999 */
    return 8;
  if (fseek(f, 100, SEEK_CUR) != 0) /* seek 2: 8100 */
    return 9;
  if (fread(buf, 1, 1000, f) != 1000) /* 8100..9099 */
    return 10;
  rewind(f);                     /* seek 3 */
  if (fread(buf, 10, 5, f) != 5) /* 50 bytes: 0..49 */
    return 11;
  if (fseek(f, 0, SEEK_END) != 0) /* seek 4: the end, 10004 */
    return 12;
  if (ftell(f) != 10004)
    return 13;
  if (fwrite(buf, 1, 500, f) != 500) /* 10004..10503 */
    return 14;
  if (fclose(f) != 0)
    return 15;

  /* A stream on a descriptor: fdopen. */
  int fd = open(path2, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0)
    return 16;
  FILE* g = fdopen(fd, "w");
  if (!g)
    return 17;
  if (fwrite(buf, 1, 100, g) != 100)
    return 18;
  return fclose(g) == 0 ? 0 : 19;
}
