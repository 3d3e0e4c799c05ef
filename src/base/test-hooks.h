/* SPDX-License-Identifier: Apache-2.0
 *
 * test-hooks.h — hooks that make a daemon misbehave on purpose (die at a
 * chosen point, ...) so that tests can reach states a healthy run never
 * shows. They exist only in builds made for tests: CMake's DP_TEST_HOOKS
 * option, on by default for Debug builds (the test configuration) and off
 * otherwise, defines DP_TEST_HOOKS=1. In every other build
 * dp_test_hook(name) is NULL at compile time, so neither the getenv nor
 * the variable's name is in the binary; a Release build checks that after
 * linking (cmake/check-test-hooks.cmake greps the binary for every name
 * passed to dp_test_hook() in src/).
 *
 * Put test-only code under `if (DP_TEST_HOOKS && ...)` so that it is
 * compiled (and kept warning-free) in every build and dropped as dead code
 * where hooks are off. The exit-without-freeing switch of the CLI
 * (tools/devplane.h) is the mirror image: release builds only. */
#pragma once

#include <stdlib.h>

#ifndef DP_TEST_HOOKS
#define DP_TEST_HOOKS 0
#endif

/* The value of the test hook's environment variable NAME (a string literal),
 * NULL when unset or in a build without test hooks. */
#if DP_TEST_HOOKS
#define dp_test_hook(name) getenv(name)
#else
#define dp_test_hook(name) ((const char *)NULL)
#endif
