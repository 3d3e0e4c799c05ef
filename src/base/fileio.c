/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/strbuf.h"

int dp_write_file_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                         unsigned flags, dp_error *err) {
        assert_return(dir && name && (data || len == 0), -EINVAL);
        _cleanup_free_ char *dst = dp_asprintf("%s/%s", dir, name);
        if (!dst) return -ENOMEM;
        char *slash = strrchr(dst, '/');
        _cleanup_free_ char *parent = dp_strndup(dst, (size_t)(slash - dst));
        _cleanup_free_ char *tmp = dp_asprintf("%s/.%s.XXXXXX", parent ? parent : "", slash + 1);
        if (!parent || !tmp) return -ENOMEM;
        _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) return dp_error_errno(err, -errno, "%s: creating a temporary file", dst);
        int r = fchmod(fd, mode) < 0 ? -errno : 0;
        const char *p = data;
        for (size_t off = 0; r >= 0 && off < len;) {
                ssize_t k = write(fd, p + off, len - off);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) r = -errno;
                else off += (size_t)k;
        }
        if (r >= 0 && (flags & DP_WRITE_DURABLE) && fsync(fd) < 0) r = -errno;
        if (r >= 0 && rename(tmp, dst) < 0) r = -errno;
        if (r < 0) {
                unlink(tmp);
                return dp_error_errno(err, r, "%s: writing", dst);
        }
        if (flags & DP_WRITE_DURABLE) {
                _cleanup_close_ int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 || fsync(dfd) < 0) return dp_error_errno(err, -errno, "%s: syncing the directory", parent);
        }
        return 0;
}

int dp_mkdir_p(const char *path, mode_t mode) {
        assert_return(path && *path, -EINVAL);
        _cleanup_free_ char *p = strdup(path);
        if (!p) return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/') continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST) return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST) return -errno;
        return 0;
}
