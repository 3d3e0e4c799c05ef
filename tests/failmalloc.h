/* SPDX-License-Identifier: Apache-2.0
 *
 * failmalloc.h — the one allocation-failure runner of the *-failmalloc tests
 * (STYLE.md: fail each allocation in turn, as nghttp2's failmalloc test does).
 * A module's tests/<m>/failmalloc.c is built with dp_failmalloc_test() in
 * tests/CMakeLists.txt: it links tests/failmalloc.c and wraps
 *     malloc calloc realloc strdup strndup
 * with the linker's --wrap, so every allocation devplane's own objects make
 * (dp_asprintf included: it allocates with malloc) can be failed, and so can
 * the libraries' that matter: nghttp2 (conn.c hands it an nghttp2_mem) and
 * protobuf-c (dp_proto_unpack hands it a ProtobufCAllocator) allocate
 * through devplane's malloc, and libyaml, which takes no allocator, is
 * linked into the test from its static archive so that --wrap reaches its
 * calls too (tests/CMakeLists.txt). libc's own allocations (stdio, qsort,
 * getaddrinfo) and those of libraries loaded at run time are not failed.
 *
 * The test writes one run of its scenario as a function and hands it to
 * dp_failmalloc_each(): a run without failures first (fail_at == 0), then
 * runs with allocation 1, 2, ... failed, until a run passes every allocation.
 * What each module checks of a run (the result equals the normal one, the
 * error is -ENOMEM with a message, nothing left on disk or in the store)
 * stays in its run function.
 *
 * Environment: FM_TRACE=N prints the stack of allocation N when it is failed
 * (sanitizer builds); FM_ONLY=N runs the scenario without failures and then
 * with allocation N failed, and stops.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The state a run may look at: fail_at is the allocation this run fails (0:
 * none), counter the allocations counted so far in this run, failed whether
 * the failure was injected. A run sets counting = false around set-up and
 * checks that must not be failed (the runner leaves counting alone); it may
 * also set fail_at = 0 for a retry without failures and restore it. */
extern unsigned long fail_at, counter;
extern bool failed, counting;

/* libc's malloc, for a buffer that must never be failed */
void *__real_malloc(size_t n);

typedef struct dp_failmalloc {
        const char *name; /* in messages: "model-failmalloc" */
        /* One run. Returns true when the scenario ran to its end. A run with
         * fail_at == 0 is the reference (a run may keep its result to compare
         * the later ones with). */
        bool (*run)(void *ctx);
        void *ctx;
        /* true: a failed allocation may leave the run successful (the run
         * compares its result with the reference itself); false: such a run
         * is a hidden failure and fails the test. */
        bool absorb;
        /* at least this many allocations must be reached, or the scenario no
         * longer runs the code it is for */
        unsigned long min_points;
} dp_failmalloc;

typedef struct dp_failmalloc_result {
        unsigned long reference; /* allocations the run without failures made */
        unsigned long points;    /* allocations failed, one run each */
        unsigned long absorbed;  /* runs that succeeded although an allocation failed */
        unsigned long bad;       /* problems found by the runner (each said on stderr) */
} dp_failmalloc_result;

/* Runs fm as said above and fills *ret. Returns 0, or 1 when the runner
 * found a problem (the reference run fails, a run without an injected failure
 * fails, an absorbed failure where fm->absorb is false, fewer than
 * fm->min_points allocations). */
int dp_failmalloc_each(const dp_failmalloc *fm, dp_failmalloc_result *ret);
