/* SPDX-License-Identifier: Apache-2.0
 *
 * loop.h — the one epoll event loop of a devplane daemon (no threads).
 *
 * A dp_loop dispatches four kinds of sources, each a dp_loop_source handle:
 *   io       a file descriptor (EPOLLIN/EPOLLOUT/...), level-triggered;
 *   timer    an absolute CLOCK_MONOTONIC deadline in microseconds (timerfd);
 *            one-shot, re-arm with dp_loop_source_set_time();
 *   signal   a signal delivered through signalfd (the signal is blocked in
 *            the calling thread's mask while the source exists);
 *   inotify  an inotify watch on one path (its own inotify fd).
 *
 * Callbacks run only from dp_loop_run()/dp_loop_run_once(), one at a time.
 * A callback returning a negative errno stops dp_loop_run(), which returns
 * that value. Any source (including the one whose callback is running) may be
 * freed from inside any callback: it is disabled at once and its memory is
 * released after the current dispatch round, so a later event of the same
 * round for it is dropped.
 *
 * Ownership: dp_loop_add_*() return a source owned by the caller, who frees
 * it with dp_loop_source_free() (NULL-safe), always before dp_loop_free().
 * The loop does not close io fds; it does close the timerfd, signalfd and
 * inotify fds it created.
 */
#pragma once

#include <signal.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>

#include "base/macros.h"

typedef struct dp_loop dp_loop;
typedef struct dp_loop_source dp_loop_source;

/* events: the EPOLL* bits that fired. */
typedef int (*dp_loop_io_fn)(dp_loop_source *s, int fd, uint32_t events, void *userdata);
/* now: CLOCK_MONOTONIC in microseconds when the timer was dispatched. */
typedef int (*dp_loop_timer_fn)(dp_loop_source *s, uint64_t now_usec, void *userdata);
typedef int (*dp_loop_signal_fn)(dp_loop_source *s, const struct signalfd_siginfo *si, void *userdata);
/* Called once per inotify event of the watch; ev->name is relative to the
 * watched directory (may be empty). */
typedef int (*dp_loop_inotify_fn)(dp_loop_source *s, const struct inotify_event *ev, void *userdata);

/* 0 / -ENOMEM / -errno from epoll_create1. */
int dp_loop_new(dp_loop **ret);
dp_loop *dp_loop_free(dp_loop *l);
DEFINE_FREEP(dp_loop, dp_loop_free)

/* CLOCK_MONOTONIC now, in microseconds (a convenience; cores take time as an
 * argument and never read clocks themselves). */
uint64_t dp_loop_now(void);

int dp_loop_add_io(dp_loop *l, int fd, uint32_t events, dp_loop_io_fn cb, void *userdata, dp_loop_source **ret);
/* Change the epoll event mask of an io source. */
int dp_loop_source_set_events(dp_loop_source *s, uint32_t events);

/* deadline_usec: absolute CLOCK_MONOTONIC microseconds; 0 = disarmed; a time
 * in the past fires on the next round. */
int dp_loop_add_timer(dp_loop *l, uint64_t deadline_usec, dp_loop_timer_fn cb, void *userdata, dp_loop_source **ret);
int dp_loop_source_set_time(dp_loop_source *s, uint64_t deadline_usec);

/* Blocks sig with sigprocmask (restored when the source is freed). */
int dp_loop_add_signal(dp_loop *l, int sig, dp_loop_signal_fn cb, void *userdata, dp_loop_source **ret);

/* mask: IN_* bits (IN_CREATE|IN_DELETE|...). -errno from inotify_add_watch
 * (e.g. -ENOENT when path does not exist). */
int dp_loop_add_inotify(dp_loop *l, const char *path, uint32_t mask, dp_loop_inotify_fn cb, void *userdata,
                        dp_loop_source **ret);

dp_loop_source *dp_loop_source_free(dp_loop_source *s);
DEFINE_FREEP(dp_loop_source, dp_loop_source_free)

/* Run until dp_loop_exit() or a callback fails. Returns the exit code given
 * to dp_loop_exit(), or a callback's negative errno. */
int dp_loop_run(dp_loop *l);
/* Wait at most timeout_ms (-1 = forever) and dispatch one round. Returns 0
 * (also on timeout), a callback's negative errno, or -errno from epoll_wait
 * (EINTR is retried). */
int dp_loop_run_once(dp_loop *l, int timeout_ms);
/* Make dp_loop_run() return code after the current round. */
void dp_loop_exit(dp_loop *l, int code);
