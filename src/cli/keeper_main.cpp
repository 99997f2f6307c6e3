// datacrumbs_keeper: a run's loaded BPF object, kept for the next run (probe/object_keeper.h).
// Its own small program, linked with little more than libbpf: it starts as a run ends, right
// when the next run may start, and `datacrumbs` itself (16 libraries, ~18 ms to start here)
// would take that CPU from it.
#include "probe/object_keeper.h"

int main(int argc, char** argv)
{
  return dc::keeper_main(argc, argv);
}
