// Not built: a test's own header that includes a module its test does not link
// (tests/unit/check_includes_test.py).
#pragma once

#include "deploy/probe_file.h"
