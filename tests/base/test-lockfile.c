/* SPDX-License-Identifier: Apache-2.0
 * base/lockfile.c: one owner per directory, the refusal names the holder's
 * pid, a dead holder's lock is free again, non-regular lock paths are set
 * aside and never followed. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/lockfile.h"
#include "harness.h"

static char *tmpdir(void) {
        char tmpl[] = "/tmp/dp-lock-test.XXXXXX";
        char *d = mkdtemp(tmpl);
        ASSERT_TRUE(d);
        return strdup(d);
}

static void rm_rf(const char *d) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
        ASSERT_EQ(system(cmd), 0);
}

/* A child that takes the lock, says so through a pipe, and waits to die. */
static pid_t holder(const char *dir) {
        int p[2];
        ASSERT_OK(pipe(p));
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int fd = -1;
                dp_error e = DP_ERROR_INIT;
                if (dp_lock_dir(dir, "x.lock", &fd, NULL, &e) < 0) _exit(3);
                (void)!write(p[1], "y", 1);
                for (;;)
                        pause();
        }
        close(p[1]);
        char c = 0;
        ASSERT_EQ(read(p[0], &c, 1), 1);
        close(p[0]);
        return pid;
}

TEST(second_owner_refused_with_pid) {
        _cleanup_free_ char *d = tmpdir();
        pid_t pid = holder(d);
        int fd = -1;
        pid_t who = 0;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_lock_dir(d, "x.lock", &fd, &who, &e), -EBUSY);
        ASSERT_EQ(who, pid);
        char want[64];
        snprintf(want, sizeof want, "held by pid %d", (int)pid);
        ASSERT_CONTAINS(e.msg, want);
        ASSERT_EQ(fd, -1);
        /* kill -9 releases it: the next owner gets it and writes its pid */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        ASSERT_OK(dp_lock_dir(d, "x.lock", &fd, &who, &e));
        ASSERT_TRUE(fd >= 0);
        char path[256];
        snprintf(path, sizeof path, "%s/x.lock", d);
        ASSERT_EQ(dp_lock_read_pid(path), getpid());
        close(fd);
        rm_rf(d);
}

TEST(directory_and_symlink_set_aside) {
        _cleanup_free_ char *d = tmpdir();
        char path[256], aside[300], target[256];
        snprintf(path, sizeof path, "%s/x.lock", d);
        snprintf(aside, sizeof aside, "%s.corrupt", path);
        ASSERT_OK(mkdir(path, 0755));
        int fd = -1;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_lock_path(path, &fd, NULL, &e));
        struct stat st;
        ASSERT_OK(stat(aside, &st));
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        ASSERT_OK(lstat(path, &st));
        ASSERT_TRUE(S_ISREG(st.st_mode));
        close(fd);
        /* a symlink is never followed: its target is untouched */
        snprintf(target, sizeof target, "%s/target", d);
        FILE *f = fopen(target, "w");
        ASSERT_TRUE(f);
        fputs("keep me\n", f);
        fclose(f);
        ASSERT_OK(unlink(path));
        ASSERT_OK(symlink(target, path));
        ASSERT_OK(dp_lock_path(path, &fd, NULL, &e));
        char aside1[320];
        snprintf(aside1, sizeof aside1, "%s.corrupt.1", path);
        ASSERT_OK(lstat(aside1, &st));
        ASSERT_TRUE(S_ISLNK(st.st_mode));
        ASSERT_OK(stat(target, &st));
        ASSERT_EQ(st.st_size, 8);
        close(fd);
        rm_rf(d);
}

TEST(missing_dir_is_an_error) {
        int fd = -1;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_lock_dir("/nonexistent-dp-dir", "x.lock", &fd, NULL, &e), -ENOENT);
        ASSERT_CONTAINS(e.msg, "cannot open the lock file");
}
