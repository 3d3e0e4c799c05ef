/* SPDX-License-Identifier: Apache-2.0
 * Tests for agent/dirlock.c: a second lock on a directory is refused with
 * the holder's pid, released on close; a lock file that is no file is set
 * aside; a live socket is told from a stale one. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/dirlock.h"
#include "harness.h"

static void tmpdir(char *buf, size_t n) {
        snprintf(buf, n, "/tmp/dp-dirlock-XXXXXX");
        ASSERT_TRUE(mkdtemp(buf) != NULL);
}

static void rmrf(const char *dir) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

TEST(second_lock_refused_with_pid) {
        char dir[64];
        tmpdir(dir, sizeof dir);
        int fd = -1, fd2 = -1;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(agent_dir_lock(dir, AGENT_STATE_LOCK_NAME, "state directory", &fd, &err));
        ASSERT_EQ(agent_dir_lock(dir, AGENT_STATE_LOCK_NAME, "state directory", &fd2, &err), -EBUSY);
        char want[64];
        snprintf(want, sizeof want, "(pid %ld;", (long)getpid());
        ASSERT_CONTAINS(err.msg, want);
        ASSERT_CONTAINS(err.msg, "is in use by another devplane agent");
        ASSERT_EQ(fd2, -1);
        close(fd); /* the holder goes: the next one gets it */
        ASSERT_OK(agent_dir_lock(dir, AGENT_STATE_LOCK_NAME, "state directory", &fd2, &err));
        close(fd2);
        rmrf(dir);
}

TEST(lock_file_that_is_no_file) {
        char dir[64], p[128];
        tmpdir(dir, sizeof dir);
        snprintf(p, sizeof p, "%s/%s", dir, AGENT_DRIVER_LOCK_NAME);
        ASSERT_EQ(mkdir(p, 0755), 0);
        int fd = -1;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(agent_dir_lock(dir, AGENT_DRIVER_LOCK_NAME, "DRA driver directory", &fd, &err));
        struct stat st;
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        snprintf(p, sizeof p, "%s/%s.corrupt", dir, AGENT_DRIVER_LOCK_NAME);
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        close(fd);
        /* a symlink to /dev/zero: set aside too, never followed */
        snprintf(p, sizeof p, "%s/%s", dir, AGENT_STATE_LOCK_NAME);
        ASSERT_EQ(symlink("/dev/zero", p), 0);
        ASSERT_OK(agent_dir_lock(dir, AGENT_STATE_LOCK_NAME, "state directory", &fd, &err));
        ASSERT_EQ(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISREG(st.st_mode));
        close(fd);
        rmrf(dir);
}

TEST(live_and_stale_sockets) {
        char dir[64], p[128];
        tmpdir(dir, sizeof dir);
        snprintf(p, sizeof p, "%s/s.sock", dir);
        ASSERT_EQ(agent_socket_live(p), 0); /* absent */
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        strcpy(sa.sun_path, p);
        ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
        ASSERT_EQ(agent_socket_live(p), 0); /* bound, not listening: stale */
        ASSERT_EQ(listen(fd, 4), 0);
        ASSERT_EQ(agent_socket_live(p), getpid());
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(agent_socket_check_free(p, &err), -EADDRINUSE);
        ASSERT_CONTAINS(err.msg, "is served by another process (pid");
        close(fd); /* the server died: its socket file stays, stale */
        ASSERT_EQ(agent_socket_live(p), 0);
        ASSERT_OK(agent_socket_check_free(p, &err));
        rmrf(dir);
}
