// Issue 39's rows as regression tests: the binary run as a new user would run it.
#include <gtest/gtest.h>

#include "cli_run.h"
