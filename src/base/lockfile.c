/* SPDX-License-Identifier: Apache-2.0
 * Lock files: one owner per directory through flock(2), the holder's pid
 * written inside for the refusal (contract in lockfile.h). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/lockfile.h"
#include "base/log.h"
#include "base/strbuf.h"

pid_t dp_lock_read_pid(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return -errno;
        char buf[32];
        ssize_t k = read(fd, buf, sizeof buf - 1);
        if (k < 0) return -errno;
        buf[k] = 0;
        char *end = NULL;
        long v = strtol(buf, &end, 10);
        return v > 0 && v < (1L << 30) && end != buf ? (pid_t)v : 0;
}

/* Open the lock file, never following a symlink or opening anything but a
 * regular file; one non-regular path is set aside and the open tried again. */
static int open_lock(const char *path, dp_error *err) {
        for (int tries = 0; tries < 3; tries++) {
                int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
                struct stat st;
                if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return fd;
                int e = fd >= 0 ? EINVAL : errno;
                if (fd >= 0) close(fd);
                /* ELOOP: a symlink; EISDIR: a directory; ENXIO/EINVAL: a FIFO or device */
                if (e != ELOOP && e != EISDIR && e != ENXIO && e != EINVAL && e != EWOULDBLOCK)
                        return dp_error_errno(err, -e, "%s: cannot open the lock file", path);
                int r = dp_file_set_aside(path, NULL);
                if (r < 0 && r != -ENOENT)
                        return dp_error_errno(err, r, "%s: not a regular file and cannot be set aside", path);
                log_warning("%s: not a regular file: set aside", path);
        }
        return dp_error_set(err, -EBUSY, "%s: keeps being replaced by something that is not a regular file", path);
}

int dp_lock_path(const char *path, int *ret_fd, pid_t *ret_holder, dp_error *err) {
        assert_return(path && ret_fd, -EINVAL);
        _cleanup_close_ int fd = open_lock(path, err);
        if (fd < 0) return fd;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;
                if (e != EWOULDBLOCK) return dp_error_errno(err, -e, "%s: flock", path);
                pid_t holder = dp_lock_read_pid(path);
                if (holder < 0) holder = 0;
                if (ret_holder) *ret_holder = holder;
                if (holder > 0) return dp_error_set(err, -EBUSY, "%s: held by pid %d", path, (int)holder);
                return dp_error_set(err, -EBUSY, "%s: held by another process (its pid is not written yet)", path);
        }
        /* Ours now: the pid for whoever is refused next. Best effort: a full
         * disk must not stop the owner from owning. */
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
        if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) != n) (void)ftruncate(fd, 0);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int dp_lock_dir(const char *dir, const char *name, int *ret_fd, pid_t *ret_holder, dp_error *err) {
        assert_return(dir && name && ret_fd, -EINVAL);
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        if (!path) return dp_error_set(err, -ENOMEM, "out of memory");
        return dp_lock_path(path, ret_fd, ret_holder, err);
}
