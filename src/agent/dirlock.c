/* SPDX-License-Identifier: Apache-2.0
 * dirlock.c — one agent per directory: the lock held for the process's life,
 * and the probe that tells a live socket from a stale one (dirlock.h). */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/dirlock.h"
#include "base/lockfile.h"

/* base/lockfile.c does the job (a regular file, set aside when it is
 * something else, the lock released with the holder, the pid written): here
 * only the refusal says what the agent's user needs to know. */
int agent_dir_lock(const char *dir, const char *name, const char *what, int *ret_fd, dp_error *err) {
        assert_return(dir && name && what && ret_fd, -EINVAL);
        pid_t pid = 0;
        int r = dp_lock_dir(dir, name, ret_fd, &pid, err);
        if (r != -EBUSY) return r;
        char who[48] = "pid unknown: it is starting";
        if (pid > 0) snprintf(who, sizeof who, "pid %ld", (long)pid);
        return dp_error_set(err, -EBUSY,
                            "%s %s is in use by another devplane agent (%s; lock %s/%s): one agent per "
                            "directory, so this one stops without touching its files or sockets",
                            what, dir, who, dir, name);
}

int agent_socket_live(const char *path) {
        assert_return(path, -EINVAL);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sa.sun_path) return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        struct stat st;
        if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) return 0;
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return errno == EAGAIN || errno == EINPROGRESS ? 1 : 0; /* a full backlog is a live listener too */
        struct ucred cred = {0};
        socklen_t n = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) == 0 && cred.pid > 0) return cred.pid;
        return 1;
}

int agent_socket_check_free(const char *path, dp_error *err) {
        int pid = agent_socket_live(path);
        if (pid <= 0) return 0;
        return dp_error_set(err, -EADDRINUSE,
                            "%s is served by another process (pid %d; another agent on this directory?): not "
                            "replaced",
                            path, pid);
}
