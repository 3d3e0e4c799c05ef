/* SPDX-License-Identifier: Apache-2.0
 *
 * failmalloc.h — allocation-failure injection for the *-failmalloc tests
 * (STYLE.md: fail each allocation in turn, as nghttp2's tests do). Include it
 * in exactly one file of a test binary linked with
 *     -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
 * Then run a scenario with fail_at = 1, 2, ... (counter reset to 0 and
 * failed to false before each run): allocation number fail_at returns NULL
 * and sets `failed`; a run that ends with `failed` still false has passed
 * every allocation, which ends the loop. fail_at = 0 (or counting = false)
 * injects nothing. Only devplane's own allocations are intercepted (the
 * linker wraps calls from our objects, not from shared libraries).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static unsigned long fail_at, counter;
static bool failed, counting = true;

static bool should_fail(void) {
        if (!counting || !fail_at || ++counter != fail_at) return false;
        failed = true;
        return true;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return should_fail() ? NULL : __real_strndup(s, n); }
