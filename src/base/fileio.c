/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/strv.h"

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

static const char *file_kind(mode_t m) {
        if (S_ISFIFO(m)) return "a FIFO";
        if (S_ISSOCK(m)) return "a socket";
        if (S_ISCHR(m)) return "a character device";
        if (S_ISBLK(m)) return "a block device";
        return "not a file";
}

int dp_read_file(const char *path, size_t max, char **ret, size_t *ret_len, dp_error *err) {
        assert_return(path && ret && ret_len && max < SIZE_MAX - 1, -EINVAL);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return dp_error_errno(err, -errno, "%s", path);
        struct stat st;
        if (fstat(fd, &st) < 0) return dp_error_errno(err, -errno, "%s", path);
        if (S_ISDIR(st.st_mode)) return dp_error_errno(err, -EISDIR, "%s", path);
        if (!S_ISREG(st.st_mode))
                return dp_error_set(err, -EINVAL, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
        /* st_size is a hint for the first allocation only */
        size_t cap = st.st_size > 0 && (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 : DP_MIN(max, 65535) + 1;
        _cleanup_free_ char *buf = malloc(cap + 1);
        if (!buf) return dp_error_set(err, -ENOMEM, "%s: out of memory", path);
        size_t len = 0;
        for (;;) {
                if (len == cap) {
                        /* room for max + 1 bytes at most: one byte past the cap tells E2BIG */
                        size_t ncap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
                        if (ncap <= cap) break;
                        char *n = realloc(buf, ncap + 1);
                        if (!n) return dp_error_set(err, -ENOMEM, "%s: out of memory", path);
                        buf = n;
                        cap = ncap;
                }
                ssize_t k = read(fd, buf + len, cap - len);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) return dp_error_errno(err, -errno, "%s: reading", path);
                if (k == 0) break;
                len += (size_t)k;
                if (len > max) return dp_error_set(err, -E2BIG, "%s: larger than %zu bytes", path, max);
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int dp_dir_names(const char *dir, bool (*want)(const char *name), char ***ret, size_t *ret_n) {
        DIR *d = opendir(dir);
        if (!d) return -errno;
        _cleanup_strv_free_ char **v = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || (want && !want(de->d_name))) continue;
                if (DP_GROW(v, cap, n + 2) < 0 || !(v[n] = dp_strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);
        if (r < 0) return r;
        if (!v && !(v = calloc(1, sizeof(char *)))) return -ENOMEM;
        qsort(v, n, sizeof(char *), cmp_names);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int dp_file_set_aside(const char *path, char **ret_to) {
        assert_return(path, -EINVAL);
        for (unsigned i = 0; i < DP_SET_ASIDE_MAX; i++) {
                _cleanup_free_ char *to = i ? dp_asprintf("%s.corrupt.%u", path, i) : dp_asprintf("%s.corrupt", path);
                if (!to) return -ENOMEM;
                struct stat st;
                if (i > 0 && lstat(to, &st) == 0) continue; /* older damage: kept */
                if (rename(path, to) == 0) {
                        if (ret_to) *ret_to = TAKE_PTR(to);
                        return 0;
                }
                if (errno == ENOENT && lstat(path, &st) < 0) return -ENOENT;
                /* the name is taken by something rename(2) cannot replace (a
                 * directory over a file, or the other way): the next one */
                if (errno != EISDIR && errno != ENOTDIR && errno != ENOTEMPTY && errno != EEXIST) return -errno;
        }
        return -EEXIST;
}
