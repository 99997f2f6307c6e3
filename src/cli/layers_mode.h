// `datacrumbs layers`: loads every layer the way `run` does and reports which are live here.
#pragma once

#include "core/result.h"

namespace dc {

result<int> list_layers(bool verbose);

}  // namespace dc
