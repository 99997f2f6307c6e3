#include "probe/layers.h"

namespace dc {

std::vector<std::unique_ptr<layer>> make_layers()
{
  std::vector<std::unique_ptr<layer>> all;
  all.push_back(make_syscall_layer());
  all.push_back(make_block_layer());
  return all;
}

}  // namespace dc
