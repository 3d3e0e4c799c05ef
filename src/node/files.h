/* SPDX-License-Identifier: Apache-2.0
 *
 * files.h — the node's state files (device-manager checkpoint, DRA manager
 * state, status file) when they are damaged in kind, not only in content
 * (src/node/recover.c): a directory, a symlink to a device, a FIFO or a
 * dangling symlink where a file should be is set aside and rebuilt, as
 * corrupt content is.
 */
#pragma once

#include <sys/types.h>

#include "base/error.h"

/* dp_write_file_atomic(), and when the target is something rename(2) cannot
 * replace (a directory), set it aside and try once more. */
int node_write_state(const char *dir, const char *name, const void *data, size_t len, mode_t mode, unsigned flags,
                     dp_error *err);
/* Is there something at path that is not a regular file nor a symlink to
 * one (a directory, a FIFO, a device, a dangling symlink)? */
bool node_file_is_odd(const char *path);
