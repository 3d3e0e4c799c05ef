/* SPDX-License-Identifier: Apache-2.0
 *
 * harness.h — the in-tree unit test harness. A test file defines tests with
 *     TEST(name) { ASSERT_EQ(1 + 1, 2); }
 * and ends with nothing else: main() comes from here (define
 * DP_HARNESS_NO_MAIN to provide your own). Each test runs in a forked child so
 * a crash fails that test only; the binary prints one line per test and a
 * closing "N passed, M failed" line, and exits non-zero on any failure.
 * `./test-x NAME` runs only tests whose name contains NAME.
 *
 * Every test has a time limit (libuv's runner does the same): 60 s, or
 * DP_TEST_TIMEOUT seconds from the environment, or its own limit given with
 *     TEST_TIMEOUT(name, seconds) { ... }
 * The child runs in a process group of its own; when the limit passes, the
 * whole group (the test and anything it started) is killed with SIGKILL and the
 * test is reported "FAIL name (timed out after N s)". When a test ends, what it
 * left running in its group is killed as well.
 */
#pragma once

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The limit of a test that names none, in seconds (DP_TEST_TIMEOUT overrides it). */
#define DP_TEST_TIMEOUT_DEFAULT 60

typedef struct dp_test {
        const char *name;
        void (*fn)(void);
        unsigned timeout_s; /* 0: the default */
        struct dp_test *next;
} dp_test;

extern dp_test *dp_test_list;
dp_test *dp_test_list;

#define TEST(n) TEST_TIMEOUT(n, 0)
#define TEST_TIMEOUT(n, seconds)                                                                     \
        static void test_##n(void);                                                                  \
        __attribute__((constructor)) static void register_##n(void) {                                \
                static dp_test t = {#n, test_##n, (seconds), NULL};                                  \
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
static unsigned dp_test_default_timeout(void) {
        const char *e = getenv("DP_TEST_TIMEOUT");
        char *end = NULL;
        unsigned long v = e ? strtoul(e, &end, 10) : 0;
        if (!e || end == e || *end || v == 0 || v > 86400) return DP_TEST_TIMEOUT_DEFAULT;
        return (unsigned)v;
}

/* Waits for the child pid for at most timeout_s seconds: SIGCHLD is blocked
 * by the caller and taken here with sigtimedwait, so no polling. Returns true
 * with *st filled when the child ended in time. */
static bool dp_test_wait(pid_t pid, unsigned timeout_s, int *st) {
        struct timespec now, end;
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += timeout_s;
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        for (;;) {
                pid_t r = waitpid(pid, st, WNOHANG);
                if (r == pid) return true;
                if (r < 0) {
                        perror("waitpid");
                        exit(2);
                }
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
                        return false;
                struct timespec left = {end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec};
                if (left.tv_nsec < 0) {
                        left.tv_sec--;
                        left.tv_nsec += 1000000000L;
                }
                (void)sigtimedwait(&chld, NULL, &left); /* a SIGCHLD, EINTR or EAGAIN: look again */
        }
}

int main(int argc, char **argv) {
        int passed = 0, failed = 0;
        unsigned deflt = dp_test_default_timeout();
        sigset_t chld, old;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigprocmask(SIG_BLOCK, &chld, &old);
        for (dp_test *t = dp_test_list; t; t = t->next) {
                if (argc > 1 && !strstr(t->name, argv[1])) continue;
                unsigned limit = t->timeout_s ? t->timeout_s : deflt;
                fflush(NULL);
                pid_t pid = fork();
                if (pid < 0) {
                        perror("fork");
                        return 2;
                }
                if (pid == 0) {
                        setpgid(0, 0);
                        sigprocmask(SIG_SETMASK, &old, NULL);
                        t->fn();
                        fflush(NULL);
                        exit(0); /* exit, not _exit: LeakSanitizer runs at exit */
                }
                setpgid(pid, pid); /* also here, so the kill below never races the child's own call */
                int st = 0;
                bool in_time = dp_test_wait(pid, limit, &st);
                kill(-pid, SIGKILL); /* the test on a timeout, and whatever it left running */
                if (!in_time) {
                        while (waitpid(pid, &st, 0) < 0) {}
                        printf("FAIL %s (timed out after %u s)\n", t->name, limit);
                        failed++;
                        continue;
                }
                bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
                printf("%s %s\n", ok ? "PASS" : "FAIL", t->name);
                if (ok) passed++;
                else failed++;
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        printf("%d passed, %d failed\n", passed, failed);
        return failed ? 1 : 0;
}
#endif
