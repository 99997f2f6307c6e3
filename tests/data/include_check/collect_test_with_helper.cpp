// Not built: checked as a source of collect_unit_tests, which does not link deploy; the include
// that breaks the rule is in the test's own header.
#include "data/include_check/test_helper.h"
