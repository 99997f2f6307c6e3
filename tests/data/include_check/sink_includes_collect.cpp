// Not built: checked by tests/unit/check_includes_test.py as if it were a source of
// datacrumbs_sink. sink does not link collect (collect links sink): this include goes backwards.
#include "collect/decoder.h"
