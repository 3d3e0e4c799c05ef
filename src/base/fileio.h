/* SPDX-License-Identifier: Apache-2.0
 *
 * fileio.h — the one way devplane replaces a file: write a temporary file
 * next to it (".<name>.XXXXXX", so directory watchers can ignore it), then
 * rename(2) it over the target, so a reader sees the old or the new file,
 * never a half-written one. With DP_WRITE_DURABLE the data and the directory
 * entry are fsync'ed too (checkpoints, CDI specs); runtime state that is
 * rebuilt on restart (status, health overrides) skips that cost.
 *
 * dp_read_file is the one way devplane reads a whole file: only regular
 * files, never blocking, never more than the caller's cap.
 */
#pragma once

#include <sys/types.h>

#include "base/error.h"

#define DP_WRITE_DURABLE 1u

/* Replace <dir>/<name> (name may contain '/': the file lands in that
 * subdirectory, which must exist). 0 or a negative errno with err filled;
 * on failure the temporary file is gone and the target untouched. */
int dp_write_file_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                         unsigned flags, dp_error *err);
/* mkdir -p; 0 or a negative errno. */
int dp_mkdir_p(const char *path, mode_t mode);

/* Read the whole regular file at `path` (symlinks followed) into a new
 * NUL-terminated buffer (the NUL is not counted in *ret_len). The file is
 * opened O_NONBLOCK, so a FIFO, socket or device named like an input never
 * blocks the caller, and anything fstat(2) does not call a regular file is
 * refused before one byte is read. `max` counts the bytes actually read, not
 * st_size (which /proc files and files that grow while read get wrong), so at
 * most max + 1 bytes are read before the answer is -E2BIG.
 * Returns 0, or with err set to "PATH: ...": the negative errno of open(2) or
 * read(2) (-ENOENT: no such file), -EISDIR (a directory: "Is a directory"), -EINVAL (another
 * kind of non-regular file: "not a regular file (a FIFO)"), -E2BIG ("larger
 * than MAX bytes"), -ENOMEM. *ret and *ret_len are untouched on failure. */
int dp_read_file(const char *path, size_t max, char **ret, size_t *ret_len, dp_error *err);

/* The names in directory dir that want() takes (NULL: all), hidden ones
 * (".name") never, sorted by strcmp, as a NULL-terminated strv
 * (base/strv.h) in *ret with their count in *ret_n. 0, or the negative
 * errno of opendir(2), or -ENOMEM; *ret untouched on failure. */
int dp_dir_names(const char *dir, bool (*want)(const char *name), char ***ret, size_t *ret_n);

/* The numbered names dp_file_set_aside() tries after <path>.corrupt. */
#define DP_SET_ASIDE_MAX 100

/* Damage is kept, never deleted: move whatever stands at `path` (a corrupt
 * file, a directory or FIFO where a file belongs, a dangling symlink) to
 * <path>.corrupt, replacing an older one there when rename(2) can (the
 * newest damage is kept under the name people look for), else to the first
 * free <path>.corrupt.<n>, 0 < n < DP_SET_ASIDE_MAX. Every durable file and
 * lock file of devplane is set aside this way. Returns 0 (and *ret_to, the
 * new name, malloc'd, when ret_to is not NULL), -ENOENT (nothing at path),
 * -EEXIST (every name taken), -ENOMEM, or rename(2)'s negative errno. */
int dp_file_set_aside(const char *path, char **ret_to);
