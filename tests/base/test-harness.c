/* SPDX-License-Identifier: Apache-2.0
 * test-harness — the harness's own time limit (harness.h): a test that hangs,
 * and leaves a grandchild hanging too, is reported as timed out and the run
 * goes on, instead of the binary blocking in waitpid forever. The binary runs
 * itself with DP_HARNESS_HANG=1 and DP_TEST_TIMEOUT=1 and reads the child's
 * whole output: the read only ends when the grandchild, which holds the pipe,
 * was killed with the test's process group. */
#include <errno.h>
#include <fcntl.h>

#include "harness.h"

TEST(sleeper_hangs) {
        if (!getenv("DP_HARNESS_HANG")) return;
        if (fork() == 0)
                for (;;)
                        pause(); /* the grandchild: only a kill of the group ends it */
        for (;;)
                pause();
}

TEST_TIMEOUT(sleeper_own_limit, 2) {
        if (!getenv("DP_HARNESS_HANG")) return;
        for (;;)
                pause();
}

TEST(sleeper_after) {}

/* Runs this binary on the tests matching filter with env, returns its output
 * (the whole of it, up to EOF) and its exit status. */
static void run_self(const char *filter, const char *timeout, char *out, size_t cap, int *ret_status) {
        int p[2];
        ASSERT_OK(pipe(p));
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                dup2(p[1], 1);
                close(p[0]);
                close(p[1]);
                setenv("DP_HARNESS_HANG", "1", 1);
                if (timeout)
                        setenv("DP_TEST_TIMEOUT", timeout, 1);
                else
                        unsetenv("DP_TEST_TIMEOUT");
                execl("/proc/self/exe", "test-harness", filter, (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        size_t len = 0;
        for (;;) {
                ssize_t n = read(p[0], out + len, cap - 1 - len);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                len += (size_t)n;
        }
        out[len] = 0;
        close(p[0]);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0) {
        }
        *ret_status = st;
}

TEST(a_hanging_test_is_reported_not_hung) {
        char out[4096];
        int st;
        run_self("sleeper", "1", out, sizeof out, &st);
        ASSERT_CONTAINS(out, "FAIL sleeper_hangs (timed out after 1 s)");
        ASSERT_CONTAINS(out, "FAIL sleeper_own_limit (timed out after 2 s)");
        ASSERT_CONTAINS(out, "PASS sleeper_after"); /* the run goes on after a timeout */
        ASSERT_CONTAINS(out, "1 passed, 2 failed");
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

TEST(a_bad_environment_value_keeps_the_default) {
        setenv("DP_TEST_TIMEOUT", "soon", 1);
        ASSERT_EQ(dp_test_default_timeout(), DP_TEST_TIMEOUT_DEFAULT);
        setenv("DP_TEST_TIMEOUT", "7", 1);
        ASSERT_EQ(dp_test_default_timeout(), 7);
}
