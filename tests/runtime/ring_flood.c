// A known number of tiny system calls, as fast as a few threads can make them: THREADS threads
// each make PER_THREAD one-byte preads of /dev/zero, all at once (a barrier), while the main
// thread starts SPAWN short threads one after another, each making one pread. Every other system
// call of the program (the loader's, the threads' stacks) happens before the barrier or after
// the last pread, so only preads race a full ring. Usage: ring_flood THREADS PER_THREAD [SPAWN]
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int fd;
static long per_thread;
static pthread_barrier_t go;

static void one_pread(void)
{
  char c;
  if (pread(fd, &c, 1, 0) != 1)
    abort();
}

static void* flood(void* arg)
{
  (void)arg;
  pthread_barrier_wait(&go);
  for (long i = 0; i < per_thread; ++i) one_pread();
  return NULL;
}

static void* short_thread(void* arg)
{
  (void)arg;
  one_pread();
  return NULL;
}

int main(int argc, char** argv)
{
  if (argc < 3)
    return 2;
  int threads = atoi(argv[1]);
  per_thread = atol(argv[2]);
  int spawn = argc > 3 ? atoi(argv[3]) : 0;
  if (threads < 1 || threads > 64 || per_thread < 0 || spawn < 0)
    return 2;
  fd = open("/dev/zero", O_RDONLY);
  if (fd < 0)
    return 1;
  pthread_t t[64];
  pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; ++i)
    if (pthread_create(&t[i], NULL, flood, NULL) != 0)
      return 1;
  pthread_barrier_wait(&go);
  for (int i = 0; i < spawn; ++i) {
    pthread_t s;
    if (pthread_create(&s, NULL, short_thread, NULL) != 0 || pthread_join(s, NULL) != 0)
      return 1;
  }
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  return 0;
}
