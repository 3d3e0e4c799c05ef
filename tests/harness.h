/* SPDX-License-Identifier: Apache-2.0
 *
 * harness.h — the in-tree unit test harness. A test file defines tests with
 *     TEST(name) { ASSERT_EQ(1 + 1, 2); }
 * and ends with nothing else: main() comes from here (define
 * DP_HARNESS_NO_MAIN to provide your own). Each test runs in a forked child so
 * a crash fails that test only; the binary prints one line per test and a
 * closing "N passed, M failed" line, and exits non-zero on any failure.
 * `./test-x NAME` runs only tests whose name contains NAME.
 */
#pragma once

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct dp_test {
        const char *name;
        void (*fn)(void);
        struct dp_test *next;
} dp_test;

extern dp_test *dp_test_list;
dp_test *dp_test_list;

#define TEST(n)                                                                                      \
        static void test_##n(void);                                                                  \
        __attribute__((constructor)) static void register_##n(void) {                                \
                static dp_test t = {#n, test_##n, NULL};                                             \
                dp_test **p = &dp_test_list;                                                         \
                while (*p) p = &(*p)->next;                                                          \
                *p = &t;                                                                             \
        }                                                                                            \
        static void test_##n(void)

#define DP_FAIL(...)                                                                                 \
        do {                                                                                         \
                fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                      \
                fprintf(stderr, __VA_ARGS__);                                                        \
                fputc('\n', stderr);                                                                 \
                exit(1);                                                                             \
        } while (0)

#define ASSERT_TRUE(x)                                                                               \
        do {                                                                                         \
                if (!(x)) DP_FAIL("assertion failed: %s", #x);                                       \
        } while (0)
#define ASSERT_FALSE(x) ASSERT_TRUE(!(x))
#define ASSERT_EQ(a, b)                                                                              \
        do {                                                                                         \
                long long _a = (long long)(a), _b = (long long)(b);                                  \
                if (_a != _b) DP_FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b);                     \
        } while (0)
#define ASSERT_OK(x)                                                                                 \
        do {                                                                                         \
                long long _r = (long long)(x);                                                       \
                if (_r < 0) DP_FAIL("%s failed: %lld (%s)", #x, _r, strerror((int)-_r));             \
        } while (0)
#define ASSERT_STREQ(a, b)                                                                           \
        do {                                                                                         \
                const char *_a = (a), *_b = (b);                                                     \
                if (!_a || !_b || strcmp(_a, _b) != 0)                                               \
                        DP_FAIL("%s == %s:\n  got:      \"%s\"\n  expected: \"%s\"", #a, #b,          \
                                _a ? _a : "(null)", _b ? _b : "(null)");                             \
        } while (0)
#define ASSERT_CONTAINS(hay, needle)                                                                 \
        do {                                                                                         \
                const char *_h = (hay), *_n = (needle);                                              \
                if (!_h || !strstr(_h, _n)) DP_FAIL("\"%s\" does not contain \"%s\"", _h ? _h : "(null)", _n); \
        } while (0)

#ifndef DP_HARNESS_NO_MAIN
int main(int argc, char **argv) {
        int passed = 0, failed = 0;
        for (dp_test *t = dp_test_list; t; t = t->next) {
                if (argc > 1 && !strstr(t->name, argv[1])) continue;
                fflush(NULL);
                pid_t pid = fork();
                if (pid < 0) {
                        perror("fork");
                        return 2;
                }
                if (pid == 0) {
                        t->fn();
                        fflush(NULL);
                        exit(0); /* exit, not _exit: LeakSanitizer runs at exit */
                }
                int st = 0;
                while (waitpid(pid, &st, 0) < 0) {}
                bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
                printf("%s %s\n", ok ? "PASS" : "FAIL", t->name);
                if (ok) passed++;
                else failed++;
        }
        printf("%d passed, %d failed\n", passed, failed);
        return failed ? 1 : 0;
}
#endif
