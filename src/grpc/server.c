/* SPDX-License-Identifier: Apache-2.0
 *
 * The server's method table and its unix-socket glue: listeners accept
 * connections, each connection is a socket plus a sans-I/O dp_grpc_conn,
 * an io source and a deadline timer on the loop.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "base/log.h"
#include "base/list.h"
#include "base/strbuf.h"
#include "grpc/internal.h"

/* At most one line per this long about refused connections or accept
 * failures of one listener (EMFILE would otherwise log on every round). */
#define ACCEPT_LOG_INTERVAL_USEC (10ull * 1000 * 1000)

struct dp_grpc_listener {
        dp_grpc_server *srv;
        int fd;
        char *path;
        dev_t dev;
        ino_t ino;
        dp_loop_source *io;
        dp_loop_source *pause; /* re-enables accepting after an EMFILE pause */
        uint64_t last_log;     /* of the rate-limited lines */
        size_t unlogged;       /* refusals and pauses since that line */
        dp_grpc_listener *next;
};

struct dp_grpc_sconn {
        dp_grpc_server *srv;
        int fd;
        dp_loop_source *io, *timer;
        dp_grpc_conn *conn;
        uint32_t events;
        uint64_t armed; /* the timer's deadline, 0: disarmed (sconn_arm) */
        bool busy;      /* its callback is on the stack (a handler runs a nested loop) */
        bool lingering; /* done: written side shut down, reading to the peer's close (sconn_linger) */
        dp_grpc_sconn *prev, *next;
};

/* ------------------------------------------------------ method table */

int dp_grpc_server_new(dp_grpc_server **ret) {
        assert_return(ret, -EINVAL);
        dp_grpc_server *srv = calloc(1, sizeof *srv);
        if (!srv) return -ENOMEM;
        srv->methods = dp_hashmap_new();
        if (!srv->methods) {
                free(srv);
                return -ENOMEM;
        }
        srv->limits = (dp_grpc_server_limits){DP_GRPC_MAX_SERVER_CONNECTIONS, DP_GRPC_IDLE_TIMEOUT_USEC,
                                              DP_GRPC_ACCEPT_PAUSE_USEC};
        *ret = srv;
        return 0;
}

void dp_grpc_server_get_limits(const dp_grpc_server *srv, dp_grpc_server_limits *ret) {
        if (srv && ret) *ret = srv->limits;
}

int dp_grpc_server_set_limits(dp_grpc_server *srv, const dp_grpc_server_limits *limits) {
        assert_return(srv && limits && limits->max_connections > 0, -EINVAL);
        srv->limits = *limits;
        return 0;
}

size_t dp_grpc_server_refused_count(const dp_grpc_server *srv) { return srv ? srv->n_refused : 0; }
size_t dp_grpc_server_evicted_count(const dp_grpc_server *srv) { return srv ? srv->n_evicted : 0; }

int dp_grpc_server_add_method(dp_grpc_server *srv, const char *path, dp_grpc_kind kind,
                              const ProtobufCMessageDescriptor *request_type, dp_grpc_handler_fn handler,
                              void *userdata) {
        assert_return(srv && path && path[0] == '/' && handler, -EINVAL);
        assert_return(kind == DP_GRPC_UNARY || kind == DP_GRPC_SERVER_STREAMING, -EINVAL);
        if (dp_hashmap_contains(srv->methods, path)) return -EEXIST;
        dp_grpc_method *m = calloc(1, sizeof *m);
        if (!m) return -ENOMEM;
        m->path = dp_strdup(path);
        if (!m->path) {
                free(m);
                return -ENOMEM;
        }
        m->kind = kind;
        m->request_type = request_type;
        m->handler = handler;
        m->userdata = userdata;
        int r = dp_hashmap_put(srv->methods, m->path, m);
        if (r < 0) {
                free(m->path);
                free(m);
                return r;
        }
        return 0;
}

const dp_grpc_method *dp_grpc_server_find_method(const dp_grpc_server *srv, const char *path) {
        return srv && path ? dp_hashmap_get(srv->methods, path) : NULL;
}

/* ------------------------------------------------------- connections */

static void sconn_close(dp_grpc_sconn *sc) {
        dp_grpc_server *srv = sc->srv;
        DP_LIST_REMOVE(srv->conns, sc);
        srv->n_conns--;
        sc->io = dp_loop_source_free(sc->io);
        sc->timer = dp_loop_source_free(sc->timer);
        /* Frees streams; application cancel handlers run here. */
        sc->conn = dp_grpc_conn_free(sc->conn);
        if (sc->fd >= 0) close(sc->fd);
        free(sc);
}

static void sconn_set_events(dp_grpc_sconn *sc, uint32_t ev) {
        if (sc->events == ev || !sc->io) return;
        if (dp_loop_source_set_events(sc->io, ev) == 0) sc->events = ev;
}

/* The connection's next timer: its earliest stream deadline or, when no call
 * is in progress, the end of its idle time. */
static uint64_t sconn_next_time(const dp_grpc_sconn *sc) {
        uint64_t t = dp_grpc_conn_next_deadline(sc->conn);
        uint64_t idle = dp_grpc_conn_idle_since(sc->conn), limit = sc->srv->limits.idle_timeout_usec;
        if (idle && limit) {
                uint64_t end = idle + limit < idle ? UINT64_MAX : idle + limit;
                if (!t || end < t) t = end;
        }
        return t;
}

/* Arm the timer for the next deadline unless it is armed no later: the idle
 * deadline moves with every call, and a timer that fires early only re-arms
 * (sconn_timer), which saves a timerfd_settime per call. */
static void sconn_arm(dp_grpc_sconn *sc) {
        uint64_t t = sconn_next_time(sc);
        if (!sc->timer || t == 0 || (sc->armed && sc->armed <= t)) return;
        if (dp_loop_source_set_time(sc->timer, t) == 0) sc->armed = t;
}

/* The connection is done and everything is written: shut the writing side
 * down (the peer reads our last frames, then EOF) and wait, at most
 * DP_GRPC_LINGER_USEC, for the peer to close. The core
 * is freed now; sconn_io_locked discards what arrives. */
static void sconn_linger(dp_grpc_sconn *sc) {
        if (shutdown(sc->fd, SHUT_WR) < 0 || !sc->timer) {
                sconn_close(sc);
                return;
        }
        sc->lingering = true;
        sc->conn = dp_grpc_conn_free(sc->conn); /* no stream is left: no handler runs */
        uint64_t t = dp_loop_now() + DP_GRPC_LINGER_USEC;
        if (dp_loop_source_set_time(sc->timer, t) < 0) {
                sconn_close(sc);
                return;
        }
        sc->armed = t;
        sconn_set_events(sc, EPOLLIN);
}

/* Write what the core has, re-arm the deadline timer, close when done.
 * Returns false when the connection was closed (sc is gone) or lingers. */
static bool sconn_after(dp_grpc_sconn *sc) {
        for (;;) {
                const uint8_t *data;
                size_t len;
                if (dp_grpc_conn_output(sc->conn, &data, &len) < 0 && len == 0) break;
                if (len == 0) break;
                ssize_t n = send(sc->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) {
                                sconn_set_events(sc, EPOLLIN | EPOLLOUT);
                                goto timers;
                        }
                        dp_grpc_conn_peer_closed(sc->conn);
                        sconn_close(sc);
                        return false;
                }
                dp_grpc_conn_consumed(sc->conn, (size_t)n);
        }
        sconn_set_events(sc, EPOLLIN);
timers:
        if (dp_grpc_conn_is_done(sc->conn)) {
                sconn_linger(sc);
                return false;
        }
        sconn_arm(sc);
        return true;
}

/* Close a connection with no call in progress: GOAWAY (best effort, the
 * peer may not read) and close; nothing of the application runs. */
static void sconn_drop(dp_grpc_sconn *sc) {
        dp_grpc_conn_shutdown(sc->conn);
        const uint8_t *data;
        size_t len;
        (void)dp_grpc_conn_output(sc->conn, &data, &len);
        if (len) (void)send(sc->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        dp_grpc_conn_peer_closed(sc->conn);
        sconn_close(sc);
}

static void server_destroy(dp_grpc_server *srv);
static void sconn_io_locked(dp_grpc_sconn *sc, int fd, uint32_t events);

/* Leave a callback scope; performs a free requested inside it. */
static void leave(dp_grpc_server *srv) {
        if (--srv->busy == 0 && srv->free_requested) server_destroy(srv);
}

static int sconn_io(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        (void)s;
        dp_grpc_sconn *sc = userdata;
        dp_grpc_server *srv = sc->srv;
        if (srv->free_requested || sc->busy) {
                /* Freed from a callback further up the stack, or re-entered
                 * from a nested loop run by one of this connection's
                 * handlers: stay quiet until that frame returns (it re-arms
                 * the events or releases everything). */
                sconn_set_events(sc, EPOLLET); /* a hang-up is reported once, not in a loop */
                return 0;
        }
        srv->busy++;
        sc->busy = true;
        sconn_io_locked(sc, fd, events); /* may free sc */
        leave(srv);
        return 0;
}

/* A lingering connection: discard what the peer still sends, close at its
 * EOF or error. */
static void sconn_io_lingering(dp_grpc_sconn *sc, int fd) {
        uint8_t buf[DP_GRPC_READ_CHUNK];
        for (size_t total = 0; total < DP_GRPC_READ_BUDGET;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0 && errno == EAGAIN) {
                        sc->busy = false;
                        return;
                }
                if (n <= 0) break;
                total += (size_t)n;
        }
        sc->busy = false;
        sconn_close(sc); /* EOF, an error, or more than a round's budget: enough */
}

static void sconn_io_locked(dp_grpc_sconn *sc, int fd, uint32_t events) {
        if (sc->lingering) {
                sconn_io_lingering(sc, fd);
                return;
        }
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                uint8_t buf[DP_GRPC_READ_CHUNK];
                size_t total = 0;
                while (total < DP_GRPC_READ_BUDGET) {
                        ssize_t n = read(fd, buf, sizeof buf);
                        if (n < 0 && errno == EINTR) continue;
                        if (n < 0 && errno == EAGAIN) break;
                        if (n <= 0) {
                                sc->busy = false;
                                dp_grpc_conn_peer_closed(sc->conn);
                                sconn_close(sc);
                                return;
                        }
                        total += (size_t)n;
                        int r = dp_grpc_conn_feed(sc->conn, buf, (size_t)n, dp_loop_now());
                        if (r == -ENOBUFS && dp_loop_now() - sc->srv->flood_logged >= ACCEPT_LOG_INTERVAL_USEC) {
                                sc->srv->flood_logged = dp_loop_now();
                                log_warning("grpc: a peer sent more than %u empty DATA frames: GOAWAY "
                                            "(ENHANCE_YOUR_CALM) and closing (at most one such line per 10 s)",
                                            DP_GRPC_EMPTY_DATA_BURST);
                        } else if (r < 0)
                                log_debug("grpc: closing a connection after a protocol error");
                        if (r < 0) break; /* flush the GOAWAY, then the core reports done */
                }
        }
        sc->busy = false;
        sconn_after(sc);
}

static int sconn_timer(dp_loop_source *s, uint64_t now, void *userdata) {
        (void)s;
        dp_grpc_sconn *sc = userdata;
        dp_grpc_server *srv = sc->srv;
        sc->armed = 0; /* it fired: a one-shot timer is disarmed now */
        if (srv->free_requested) return 0;
        if (sc->lingering && !sc->busy) {
                sconn_close(sc); /* the peer did not close within DP_GRPC_LINGER_USEC */
                return 0;
        }
        if (sc->busy) {
                if (dp_loop_source_set_time(s, now + 1000) == 0) sc->armed = now + 1000; /* after the outer frame */
                return 0;
        }
        srv->busy++;
        sc->busy = true;
        dp_grpc_conn_tick(sc->conn, now);
        sc->busy = false;
        uint64_t idle = dp_grpc_conn_idle_since(sc->conn), limit = srv->limits.idle_timeout_usec;
        if (idle && limit && now - idle >= limit) {
                /* No whole request in idle_timeout */
                log_debug("grpc: closing a connection idle for %" PRIu64 " ms", (now - idle) / 1000);
                sconn_drop(sc);
        } else {
                sconn_after(sc);
        }
        leave(srv);
        return 0;
}

static void sconn_wakeup(dp_grpc_conn *c, void *userdata) {
        (void)c;
        dp_grpc_sconn *sc = userdata;
        /* Woken from inside its own callback (a handler answering at once):
         * sconn_after at the end of that frame writes and re-arms, so the
         * two epoll_ctl of asking for EPOLLOUT and dropping it are saved. */
        if (sc->busy) return;
        sconn_set_events(sc, EPOLLIN | EPOLLOUT);
        /* A new deadline may be earlier than the armed one. */
        sconn_arm(sc);
}

static int sconn_new(dp_grpc_server *srv, int fd) {
        dp_grpc_sconn *sc = calloc(1, sizeof *sc);
        if (!sc) return -ENOMEM;
        sc->srv = srv;
        sc->fd = fd;
        int r = dp_grpc_conn_new_server(srv, dp_loop_now(), &sc->conn);
        if (r >= 0) r = dp_loop_add_io(srv->loop, fd, EPOLLIN | EPOLLOUT, sconn_io, sc, &sc->io);
        sc->armed = sconn_next_time(sc);
        if (r >= 0) r = dp_loop_add_timer(srv->loop, sc->armed, sconn_timer, sc, &sc->timer);
        if (r < 0) {
                sc->io = dp_loop_source_free(sc->io);
                sc->conn = dp_grpc_conn_free(sc->conn);
                free(sc);
                return r;
        }
        sc->events = EPOLLIN | EPOLLOUT;
        dp_grpc_conn_set_wakeup(sc->conn, sconn_wakeup, sc);
        DP_LIST_PREPEND(srv->conns, sc);
        srv->n_conns++;
        if (srv->shutting_down) dp_grpc_conn_shutdown(sc->conn);
        return 0;
}

/* ---------------------------------------------------------- listeners */

/* A rate-limited warning about one listener: the first at once, then at most
 * one per ACCEPT_LOG_INTERVAL_USEC, saying how many were not logged. */
static void listener_warn(dp_grpc_listener *ln, const char *what) {
        uint64_t now = dp_loop_now();
        if (ln->last_log && now - ln->last_log < ACCEPT_LOG_INTERVAL_USEC) {
                ln->unlogged++;
                return;
        }
        if (ln->unlogged)
                log_warning("grpc: %s: %s (and %zu more since the last such line)", ln->path, what, ln->unlogged);
        else
                log_warning("grpc: %s: %s", ln->path, what);
        ln->last_log = now;
        ln->unlogged = 0;
}

static int listener_resume(dp_loop_source *s, uint64_t now, void *userdata) {
        (void)s;
        (void)now;
        dp_grpc_listener *ln = userdata;
        if (ln->io) (void)dp_loop_source_set_events(ln->io, EPOLLIN);
        return 0;
}

/* At the connection cap, make room for a new one by closing the connection
 * idle longest: no call in progress (a half-sent request counts as idle, as
 * for the idle timeout), so held idle connections cannot lock the kubelet
 * out. False when every connection has a call in progress. */
static bool evict_idle(dp_grpc_listener *ln) {
        dp_grpc_server *srv = ln->srv;
        dp_grpc_sconn *victim = NULL;
        uint64_t oldest = 0;
        for (dp_grpc_sconn *sc = srv->conns; sc; sc = sc->next)
                if (sc->lingering && !sc->busy) {
                        sconn_close(sc); /* done already: only waiting for the peer's close */
                        return true;
                }
        /* the list is newest first: on a tie the earlier accepted wins */
        for (dp_grpc_sconn *sc = srv->conns; sc; sc = sc->next) {
                uint64_t idle = dp_grpc_conn_idle_since(sc->conn);
                if (idle && !sc->busy && (!victim || idle <= oldest)) {
                        victim = sc;
                        oldest = idle;
                }
        }
        if (!victim) return false;
        char what[160];
        snprintf(what, sizeof what,
                 "%zu connections open (the limit): closing the one idle longest (%" PRIu64 " ms) for a new one",
                 srv->n_conns, (dp_loop_now() - oldest) / 1000);
        listener_warn(ln, what);
        srv->n_evicted++;
        sconn_drop(victim);
        return true;
}

static int listener_io(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        (void)s;
        (void)events;
        dp_grpc_listener *ln = userdata;
        dp_grpc_server *srv = ln->srv;
        for (int i = 0; i < 64 && !srv->free_requested && !srv->shutting_down; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                                /* The pending connection stays in the backlog and
                                 * the socket stays readable: stop polling it for
                                 * a while instead of spinning on the error. */
                                char what[160];
                                snprintf(what, sizeof what, "accept: %s; not accepting for %" PRIu64 " ms",
                                         strerror(errno), srv->limits.accept_pause_usec / 1000);
                                srv->n_refused++;
                                listener_warn(ln, what);
                                if (dp_loop_source_set_events(ln->io, 0) == 0)
                                        dp_loop_source_set_time(ln->pause,
                                                                dp_loop_now() + DP_MAX(srv->limits.accept_pause_usec, 1));
                        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                                log_warning("grpc: accept on %s: %s", ln->path, strerror(errno));
                        }
                        break;
                }
                if (srv->n_conns >= srv->limits.max_connections && !evict_idle(ln)) {
                        /* every connection is busy: closed at once, the peer
                         * sees EOF, not a hang */
                        close(cfd);
                        srv->n_refused++;
                        char what[160];
                        snprintf(what, sizeof what,
                                 "%zu connections open (the limit), each with a call in progress: refusing new ones",
                                 srv->n_conns);
                        listener_warn(ln, what);
                        continue;
                }
                int r = sconn_new(srv, cfd);
                if (r < 0) {
                        log_warning("grpc: cannot set up a connection on %s: %s", ln->path, strerror(-r));
                        close(cfd);
                }
        }
        return 0;
}

static void listener_free(dp_grpc_listener *ln) {
        ln->io = dp_loop_source_free(ln->io);
        ln->pause = dp_loop_source_free(ln->pause);
        if (ln->fd >= 0) close(ln->fd);
        struct stat st;
        /* Unlink only the socket we created, not a successor's. */
        if (ln->path && lstat(ln->path, &st) == 0 && st.st_dev == ln->dev && st.st_ino == ln->ino) unlink(ln->path);
        free(ln->path);
        free(ln);
}

int dp_grpc_server_listen_unix(dp_grpc_server *srv, dp_loop *l, const char *path, mode_t mode) {
        assert_return(srv && l && path && path[0], -EINVAL);
        assert_return(!srv->loop || srv->loop == l, -EINVAL);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sa.sun_path) return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        struct stat st;
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode)) return -EEXIST;
                if (unlink(path) < 0) return -errno;
        }
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno;
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) return -errno;
        if (mode && chmod(path, mode) < 0) {
                int r = -errno;
                unlink(path);
                return r;
        }
        if (listen(fd, 128) < 0 || lstat(path, &st) < 0) {
                int r = -errno;
                unlink(path);
                return r;
        }
        dp_grpc_listener *ln = calloc(1, sizeof *ln);
        if (!ln) {
                unlink(path);
                return -ENOMEM;
        }
        ln->srv = srv;
        ln->fd = -1;
        ln->dev = st.st_dev;
        ln->ino = st.st_ino;
        ln->path = dp_strdup(path);
        int r = ln->path ? dp_loop_add_io(l, fd, EPOLLIN, listener_io, ln, &ln->io) : -ENOMEM;
        /* made now: when descriptors run out, a timerfd cannot be made */
        if (r >= 0) r = dp_loop_add_timer(l, 0, listener_resume, ln, &ln->pause);
        if (r < 0) {
                ln->io = dp_loop_source_free(ln->io);
                unlink(path);
                free(ln->path);
                free(ln);
                return r;
        }
        ln->fd = TAKE_FD(fd);
        srv->loop = l;
        ln->next = srv->listeners;
        srv->listeners = ln;
        return 0;
}

static void close_listeners(dp_grpc_server *srv) {
        while (srv->listeners) {
                dp_grpc_listener *ln = srv->listeners;
                srv->listeners = ln->next;
                listener_free(ln);
        }
}

void dp_grpc_server_shutdown(dp_grpc_server *srv) {
        if (!srv) return;
        srv->shutting_down = true;
        close_listeners(srv);
        /* GOAWAY is queued and the wakeup asks for EPOLLOUT: each connection
         * flushes and closes from its own io callback, so this is safe from
         * inside any callback. */
        for (dp_grpc_sconn *sc = srv->conns; sc; sc = sc->next)
                dp_grpc_conn_shutdown(sc->conn);
}

size_t dp_grpc_server_connection_count(const dp_grpc_server *srv) { return srv ? srv->n_conns : 0; }

dp_grpc_server *dp_grpc_server_free(dp_grpc_server *srv) {
        if (!srv || srv->free_requested) return NULL;
        srv->free_requested = true;
        close_listeners(srv); /* the socket path goes away at once */
        if (srv->busy == 0) server_destroy(srv);
        return NULL;
}

static void server_destroy(dp_grpc_server *srv) {
        srv->busy++; /* cancel handlers run below may call back into us */
        while (srv->conns)
                sconn_close(srv->conns);
        size_t i = 0;
        const char *k;
        void *v;
        while (dp_hashmap_iter(srv->methods, &i, &k, &v)) {
                dp_grpc_method *m = v;
                free(m->path);
                free(m);
        }
        dp_hashmap_free(srv->methods);
        free(srv);
}
