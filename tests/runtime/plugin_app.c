/* Loads PLUGIN with dlopen after it has started and calls its dc_plugin_work N times.
 *
 * usage: plugin_app PLUGIN N */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  if (argc != 3)
    return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 3;
  }
  int (*work)(int) = (int (*)(int))dlsym(lib, "dc_plugin_work");
  if (!work)
    return 4;
  int acc = 0;
  for (int i = 0; i < atoi(argv[2]); i++) acc += work(i);
  return acc < 0 ? 5 : 0;
}
