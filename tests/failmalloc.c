/* SPDX-License-Identifier: Apache-2.0
 * failmalloc.c — the allocation wrappers and the one loop of every
 * *-failmalloc test (failmalloc.h says how to use them). */
#include "failmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void __sanitizer_print_stack_trace(void) __attribute__((weak));

unsigned long fail_at, counter;
bool failed, counting = true;
static unsigned long trace_at, seen;

/* counter only moves while a failure is armed (fail_at != 0), so a retry
 * that a run makes with fail_at = 0 does not shift the allocation that fails
 * after it; seen counts every counted allocation, for the reference run. */
static bool should_fail(void) {
        if (!counting) return false;
        seen++;
        if (!fail_at || ++counter != fail_at) return false;
        failed = true;
        if (trace_at == fail_at && __sanitizer_print_stack_trace) __sanitizer_print_stack_trace();
        return true;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return should_fail() ? NULL : __real_strndup(s, n); }

static unsigned long env_number(const char *name) {
        const char *v = getenv(name);
        return v ? strtoul(v, NULL, 10) : 0;
}

/* One run with allocation n failed (0: none). */
static bool run_at(const dp_failmalloc *fm, unsigned long n) {
        fail_at = n;
        counter = 0;
        seen = 0;
        failed = false;
        bool ok = fm->run(fm->ctx);
        fail_at = 0;
        return ok;
}

int dp_failmalloc_each(const dp_failmalloc *fm, dp_failmalloc_result *ret) {
        dp_failmalloc_result r = {0};
        trace_at = env_number("FM_TRACE");
        unsigned long only = env_number("FM_ONLY");
        if (!run_at(fm, 0)) {
                fprintf(stderr, "%s: the scenario fails without injected failures\n", fm->name);
                r.bad++;
        }
        r.reference = seen;
        for (unsigned long n = only ? only : 1; !r.bad; n++) {
                bool ok = run_at(fm, n);
                if (!failed) {
                        if (!ok) {
                                fprintf(stderr, "%s: run %lu failed without an injected failure\n", fm->name, n);
                                r.bad++;
                        }
                        break;
                }
                r.points = n;
                if (ok) {
                        r.absorbed++;
                        if (!fm->absorb) { /* a failure that did not surface: hidden -ENOMEM handling */
                                fprintf(stderr, "%s: allocation %lu failed and the scenario still succeeded\n",
                                        fm->name, n);
                                r.bad++;
                        }
                }
                if (only) break;
        }
        if (!only && !r.bad && r.points < fm->min_points) {
                fprintf(stderr, "%s: %lu allocations, fewer than %lu: the scenario no longer runs\n", fm->name,
                        r.points, fm->min_points);
                r.bad++;
        }
        if (ret) *ret = r;
        return r.bad ? 1 : 0;
}
