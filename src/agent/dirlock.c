/* SPDX-License-Identifier: Apache-2.0
 * dirlock.c — one agent per directory: the lock held for the process's life,
 * and the probe that tells a live socket from a stale one (dirlock.h). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent/dirlock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "dra/prepared.h"

/* The pid the holder wrote (0: not written yet, or unreadable). */
static long holder_pid(int fd) {
        char buf[32] = {0};
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        if (n <= 0) return 0;
        char *end = NULL;
        long pid = strtol(buf, &end, 10);
        return end != buf && pid > 0 ? pid : 0;
}

/* Open <path> as a regular file; anything else there is damage: set aside,
 * then opened again. */
static int open_lock_file(const char *path, dp_error *err) {
        for (unsigned tries = 0; tries < 2; tries++) {
                int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
                struct stat st;
                if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return fd;
                int e = fd < 0 ? errno : EINVAL;
                if (fd >= 0) close(fd);
                if (e != EISDIR && e != ELOOP && e != EINVAL && e != ENXIO && e != EWOULDBLOCK)
                        return dp_error_errno(err, -e, "%s", path);
                _cleanup_free_ char *to = NULL;
                int r = dp_dra_file_set_aside(path, &to, err);
                if (r < 0) return r;
                log_warning("%s: not a regular file: set aside as %s", path, to);
        }
        return dp_error_set(err, -EEXIST, "%s: cannot be made a regular file", path);
}

int agent_dir_lock(const char *dir, const char *name, const char *what, int *ret_fd, dp_error *err) {
        assert_return(dir && name && what && ret_fd, -EINVAL);
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        if (!path) return dp_error_set(err, -ENOMEM, "out of memory");
        _cleanup_close_ int fd = open_lock_file(path, err);
        if (fd < 0) return fd;
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
                if (errno != EAGAIN && errno != EACCES) return dp_error_errno(err, -errno, "%s: locking", path);
                long pid = holder_pid(fd);
                char who[48] = "pid unknown: it is starting";
                if (pid) snprintf(who, sizeof who, "pid %ld", pid);
                return dp_error_set(err, -EBUSY,
                                    "%s %s is in use by another devplane agent (%s; lock %s): one agent per "
                                    "directory, so this one stops without touching its files or sockets",
                                    what, dir, who, path);
        }
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
                log_warning("%s: cannot write our pid into the lock file: %s", path, strerror(errno));
        *ret_fd = TAKE_FD(fd);
        return 0;
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
