#include "sink/event_sums.h"

#include "core/category.h"

namespace dc {

bool event_sums::summable(const trace_event& ev)
{
  return !(ev.category == category::block && !ev.counter && !ev.untimed);
}

void event_sums::start(slot& s, const trace_event& ev)
{
  s.used = true;
  s.name = ev.name;
  s.category = ev.category;
  trace_event& k = s.sum;
  k.clear();
  k.name = s.name;
  k.category = s.category;
  k.pid = ev.pid;
  k.process = ev.process;
  k.fhash = ev.fhash;
  k.fhash2 = ev.fhash2;
  k.dir = ev.dir;
  k.dir2 = ev.dir2;
  k.counter = true;
  k.count = 0;
  k.add_arg("pages", 0);
}

}  // namespace dc
