/* SPDX-License-Identifier: Apache-2.0
 *
 * lockfile.h — one owner per directory: an exclusive flock(2) on a lock file,
 * held for as long as the returned descriptor stays open (normally the life
 * of the process), with the holder's pid written into the file so that a
 * second process can be refused with a name ("held by pid 4242").
 *
 * flock is released by the kernel when the holder dies (kill -9 included),
 * so a stale lock file never blocks a restart: only a live holder does. The
 * pid inside the file is informational (written after the lock is taken, so
 * a reader may briefly see the previous holder's pid or none).
 *
 * A lock path that is not a regular file (a directory, a symlink, a FIFO:
 * damage, or someone else's trick) is never followed or opened: it is
 * renamed aside to "<path>.corrupt" (or "<path>.corrupt.<n>") and a fresh
 * file is created, as corrupt state files are.
 */
#pragma once

#include <sys/types.h>

#include "base/error.h"

/* Take the lock on `path` (created 0644 if missing). On success *ret_fd is
 * the open, close-on-exec descriptor that holds the lock: keep it open, close
 * it to release. Returns 0, or:
 *   -EBUSY   another live process holds it; *ret_holder (if not NULL) is its
 *            pid as written in the file, 0 when unknown; err says
 *            "PATH: held by pid N" (or "held by another process");
 *   -errno   open/flock failed (err says which);
 *   -ENOMEM.
 * *ret_fd and *ret_holder are untouched on other failures. A failure to write
 * the pid (a full disk) does not fail the lock. */
int dp_lock_path(const char *path, int *ret_fd, pid_t *ret_holder, dp_error *err);

/* The same on "<dir>/<name>" (dir must exist). */
int dp_lock_dir(const char *dir, const char *name, int *ret_fd, pid_t *ret_holder, dp_error *err);

/* The pid written in the lock file at `path`: >0, 0 when the file holds no
 * pid, or a negative errno (-ENOENT no such file). Does not take the lock. */
pid_t dp_lock_read_pid(const char *path);
