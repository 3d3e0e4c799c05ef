/* SPDX-License-Identifier: Apache-2.0
 *
 * The epoll loop. Every source is one fd in the epoll set (timers, signals
 * and inotify watches get their own timerfd/signalfd/inotify fd), so
 * dispatch is uniform. Freed sources are parked on a graveyard list and
 * released when the outermost dispatch round ends, because a round's event
 * array may still point at them; nested rounds (a synchronous gRPC call made
 * from a callback) are allowed.
 */
#include <fcntl.h>
#include <sys/timerfd.h>
#include <time.h>

#include "grpc/loop.h"

typedef enum { SRC_IO, SRC_TIMER, SRC_SIGNAL, SRC_INOTIFY } src_kind;

struct dp_loop_source {
        dp_loop *loop;
        src_kind kind;
        int fd;
        bool dead;
        void *userdata;
        union {
                dp_loop_io_fn io;
                dp_loop_timer_fn timer;
                dp_loop_signal_fn signal;
                dp_loop_inotify_fn inotify;
        } cb;
        int sig;
        sigset_t old_mask;
        dp_loop_source *grave_next;
};

struct dp_loop {
        int epfd;
        int depth;
        bool exit;
        int exit_code;
        size_t n_sources;
        dp_loop_source *graveyard;
};

uint64_t dp_loop_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000ull;
}

int dp_loop_new(dp_loop **ret) {
        assert_return(ret, -EINVAL);
        dp_loop *l = calloc(1, sizeof *l);
        if (!l) return -ENOMEM;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = -errno;
                free(l);
                return r;
        }
        *ret = l;
        return 0;
}

static void bury(dp_loop *l) {
        while (l->graveyard) {
                dp_loop_source *s = l->graveyard;
                l->graveyard = s->grave_next;
                free(s);
        }
}

dp_loop *dp_loop_free(dp_loop *l) {
        if (!l) return NULL;
        assert(l->n_sources == 0);
        bury(l);
        close(l->epfd);
        free(l);
        return NULL;
}

static int add_source(dp_loop *l, src_kind kind, int fd, uint32_t events, void *userdata, dp_loop_source **ret) {
        dp_loop_source *s = malloc(sizeof *s);
        if (!s) return -ENOMEM;
        *s = (dp_loop_source){.loop = l, .kind = kind, .fd = fd, .userdata = userdata};
        struct epoll_event ev = {.events = events, .data.ptr = s};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = -errno;
                free(s);
                return r;
        }
        l->n_sources++;
        *ret = s;
        return 0;
}

/* add_source for a descriptor the source owns (timerfd, signalfd, inotify):
 * closed here when it cannot be added. */
static int add_owned_source(dp_loop *l, src_kind kind, int fd, void *userdata, dp_loop_source **ret) {
        int r = add_source(l, kind, fd, EPOLLIN, userdata, ret);
        if (r < 0) close(fd);
        return r;
}

int dp_loop_add_io(dp_loop *l, int fd, uint32_t events, dp_loop_io_fn cb, void *userdata, dp_loop_source **ret) {
        assert_return(l && fd >= 0 && cb && ret, -EINVAL);
        dp_loop_source *s = NULL;
        int r = add_source(l, SRC_IO, fd, events, userdata, &s);
        if (r < 0) return r;
        s->cb.io = cb;
        *ret = s;
        return 0;
}

int dp_loop_source_set_events(dp_loop_source *s, uint32_t events) {
        assert_return(s && s->kind == SRC_IO && !s->dead, -EINVAL);
        struct epoll_event ev = {.events = events, .data.ptr = s};
        if (epoll_ctl(s->loop->epfd, EPOLL_CTL_MOD, s->fd, &ev) < 0) return -errno;
        return 0;
}

int dp_loop_add_timer(dp_loop *l, uint64_t deadline_usec, dp_loop_timer_fn cb, void *userdata, dp_loop_source **ret) {
        assert_return(l && cb && ret, -EINVAL);
        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (fd < 0) return -errno;
        _cleanup_(dp_loop_source_freep) dp_loop_source *s = NULL;
        int r = add_owned_source(l, SRC_TIMER, fd, userdata, &s);
        if (r < 0) return r;
        s->cb.timer = cb;
        r = dp_loop_source_set_time(s, deadline_usec);
        if (r < 0) return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int dp_loop_source_set_time(dp_loop_source *s, uint64_t deadline_usec) {
        assert_return(s && s->kind == SRC_TIMER && !s->dead, -EINVAL);
        struct itimerspec its = {0};
        if (deadline_usec) {
                /* 0 would disarm: a deadline at the clock's origin still fires. */
                its.it_value.tv_sec = (time_t)(deadline_usec / 1000000ull);
                its.it_value.tv_nsec = (long)(deadline_usec % 1000000ull) * 1000;
                if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
        }
        if (timerfd_settime(s->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) return -errno;
        return 0;
}

int dp_loop_add_signal(dp_loop *l, int sig, dp_loop_signal_fn cb, void *userdata, dp_loop_source **ret) {
        assert_return(l && sig > 0 && cb && ret, -EINVAL);
        sigset_t mask, old;
        sigemptyset(&mask);
        sigaddset(&mask, sig);
        if (sigprocmask(SIG_BLOCK, &mask, &old) < 0) return -errno;
        int fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        if (fd < 0) {
                int r = -errno;
                sigprocmask(SIG_SETMASK, &old, NULL);
                return r;
        }
        dp_loop_source *s = NULL;
        int r = add_owned_source(l, SRC_SIGNAL, fd, userdata, &s);
        if (r < 0) {
                sigprocmask(SIG_SETMASK, &old, NULL);
                return r;
        }
        s->cb.signal = cb;
        s->sig = sig;
        s->old_mask = old;
        *ret = s;
        return 0;
}

int dp_loop_add_inotify(dp_loop *l, const char *path, uint32_t mask, dp_loop_inotify_fn cb, void *userdata,
                        dp_loop_source **ret) {
        assert_return(l && path && cb && ret, -EINVAL);
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0) return -errno;
        if (inotify_add_watch(fd, path, mask) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        dp_loop_source *s = NULL;
        int r = add_owned_source(l, SRC_INOTIFY, fd, userdata, &s);
        if (r < 0) return r;
        s->cb.inotify = cb;
        *ret = s;
        return 0;
}

dp_loop_source *dp_loop_source_free(dp_loop_source *s) {
        if (!s || s->dead) return NULL;
        dp_loop *l = s->loop;
        s->dead = true;
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
        if (s->kind != SRC_IO) close(s->fd);
        if (s->kind == SRC_SIGNAL) {
                /* Unblock only if nobody else blocked it before us. */
                if (!sigismember(&s->old_mask, s->sig)) {
                        sigset_t m;
                        sigemptyset(&m);
                        sigaddset(&m, s->sig);
                        sigprocmask(SIG_UNBLOCK, &m, NULL);
                }
        }
        s->fd = -1;
        l->n_sources--;
        if (l->depth > 0) {
                s->grave_next = l->graveyard;
                l->graveyard = s;
        } else
                free(s);
        return NULL;
}

static int dispatch_one(dp_loop_source *s, uint32_t events) {
        switch (s->kind) {
        case SRC_IO: return s->cb.io(s, s->fd, events, s->userdata);
        case SRC_TIMER: {
                uint64_t n;
                if (read(s->fd, &n, sizeof n) < 0 && errno == EAGAIN) return 0;
                return s->cb.timer(s, dp_loop_now(), s->userdata);
        }
        case SRC_SIGNAL: {
                struct signalfd_siginfo si;
                ssize_t n = read(s->fd, &si, sizeof si);
                if (n != (ssize_t)sizeof si) return 0;
                return s->cb.signal(s, &si, s->userdata);
        }
        case SRC_INOTIFY: {
                char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
                ssize_t n = read(s->fd, buf, sizeof buf);
                if (n <= 0) return 0;
                for (char *p = buf; p < buf + n && !s->dead;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;
                        int r = s->cb.inotify(s, ev, s->userdata);
                        if (r < 0) return r;
                        p += sizeof(struct inotify_event) + ev->len;
                }
                return 0;
        }
        }
        return 0;
}

int dp_loop_run_once(dp_loop *l, int timeout_ms) {
        assert_return(l, -EINVAL);
        struct epoll_event evs[32];
        int n;
        for (;;) {
                n = epoll_wait(l->epfd, evs, ELEMENTSOF(evs), timeout_ms);
                if (n >= 0) break;
                if (errno != EINTR) return -errno;
        }
        int r = 0;
        l->depth++;
        for (int i = 0; i < n && r >= 0; i++) {
                dp_loop_source *s = evs[i].data.ptr;
                if (s->dead) continue;
                r = dispatch_one(s, evs[i].events);
        }
        l->depth--;
        if (l->depth == 0) bury(l);
        return r < 0 ? r : 0;
}

int dp_loop_run(dp_loop *l) {
        assert_return(l, -EINVAL);
        l->exit = false;
        while (!l->exit) {
                int r = dp_loop_run_once(l, -1);
                if (r < 0) return r;
        }
        return l->exit_code;
}

void dp_loop_exit(dp_loop *l, int code) {
        if (!l) return;
        l->exit = true;
        l->exit_code = code;
}
