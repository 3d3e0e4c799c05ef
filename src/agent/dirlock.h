/* SPDX-License-Identifier: Apache-2.0
 *
 * dirlock.h — one agent per directory. Two `devplane agent`s on the same
 * state directory or the same driver directory would each believe they own
 * the checkpoint, the CDI specs and the sockets there: the second would
 * replace the first one's sockets and hand out the devices the first one
 * holds. So the agent takes a lock per directory before it touches anything
 * in it, holds it for its whole life, and a second agent is refused with
 * the holder's pid.
 *
 * The lock is base/lockfile.h's (the node's lock too): flock(2) on
 * <dir>/<name>, released by the kernel when the holder exits however it exits
 * (kill -9 included), never inherited by an exec'd child (O_CLOEXEC), and it
 * conflicts between two opens in one process too (tests). The holder writes
 * its pid into the file, which is how a refused agent can name it.
 */
#pragma once

#include "base/error.h"

/* In the agent's --state-dir and in its DRA driver directory
 * (<plugins-dir>/<driver>). Not the node's lock file name. */
#define AGENT_STATE_LOCK_NAME "devplane-agent.lock"
#define AGENT_DRIVER_LOCK_NAME "devplane-driver.lock"

/* Take the lock <dir>/<name> (created 0644; a directory or other
 * non-regular file there is set aside as <name>.corrupt first). `what`
 * names the directory in messages ("state directory"). 0 and *ret_fd (the
 * caller keeps it open as long as it owns the directory); -EBUSY with err
 * "… is in use by another devplane agent (pid N) …"; other -errno with err. */
int agent_dir_lock(const char *dir, const char *name, const char *what, int *ret_fd, dp_error *err);

/* > 0 when a process accepts connections on the unix socket at path (a
 * live server: do not replace it): its pid (SO_PEERCRED), or 1 when the
 * kernel does not say; 0 when not (absent, stale, not a socket); a negative
 * errno when it cannot be told. */
int agent_socket_live(const char *path);

/* 0 when the socket at path may be (re)created; -EADDRINUSE with err
 * "<path> is served by another process (pid N) …" when it is live. */
int agent_socket_check_free(const char *path, dp_error *err);
