/* SPDX-License-Identifier: Apache-2.0
 *
 * fileio.h — the one way devplane replaces a file: write a temporary file
 * next to it (".<name>.XXXXXX", so directory watchers can ignore it), then
 * rename(2) it over the target, so a reader sees the old or the new file,
 * never a half-written one. With DP_WRITE_DURABLE the data and the directory
 * entry are fsync'ed too (checkpoints, CDI specs); runtime state that is
 * rebuilt on restart (status, health overrides) skips that cost.
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
