/* SPDX-License-Identifier: Apache-2.0
 *
 * The server's method table and its unix-socket glue: listeners accept
 * connections, each connection is a socket plus a sans-I/O dp_grpc_conn,
 * an io source and a deadline timer on the loop.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "grpc/internal.h"

#define READ_CHUNK (64u * 1024u)
/* Bytes read from one connection per loop round before others get a turn. */
#define READ_BUDGET (1024u * 1024u)

struct dp_grpc_listener {
        dp_grpc_server *srv;
        int fd;
        char *path;
        dev_t dev;
        ino_t ino;
        dp_loop_source *io;
        dp_grpc_listener *next;
};

struct dp_grpc_sconn {
        dp_grpc_server *srv;
        int fd;
        dp_loop_source *io, *timer;
        dp_grpc_conn *conn;
        uint32_t events;
        bool busy; /* its callback is on the stack (a handler runs a nested loop) */
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
        *ret = srv;
        return 0;
}

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
        if (sc->prev)
                sc->prev->next = sc->next;
        else
                srv->conns = sc->next;
        if (sc->next) sc->next->prev = sc->prev;
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

/* Write what the core has, re-arm the deadline timer, close when done.
 * Returns false when the connection was closed (sc is gone). */
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
                sconn_close(sc);
                return false;
        }
        if (sc->timer) dp_loop_source_set_time(sc->timer, dp_grpc_conn_next_deadline(sc->conn));
        return true;
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

static void sconn_io_locked(dp_grpc_sconn *sc, int fd, uint32_t events) {
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                uint8_t buf[READ_CHUNK];
                size_t total = 0;
                while (total < READ_BUDGET) {
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
                        if (dp_grpc_conn_feed(sc->conn, buf, (size_t)n, dp_loop_now()) < 0) {
                                log_debug("grpc: closing a connection after a protocol error");
                                break; /* flush the GOAWAY, then the core reports done */
                        }
                }
        }
        sc->busy = false;
        sconn_after(sc);
}

static int sconn_timer(dp_loop_source *s, uint64_t now, void *userdata) {
        (void)s;
        dp_grpc_sconn *sc = userdata;
        dp_grpc_server *srv = sc->srv;
        if (srv->free_requested) return 0;
        if (sc->busy) {
                dp_loop_source_set_time(s, now + 1000); /* retry after the outer frame */
                return 0;
        }
        srv->busy++;
        sc->busy = true;
        dp_grpc_conn_tick(sc->conn, now);
        sc->busy = false;
        sconn_after(sc);
        leave(srv);
        return 0;
}

static void sconn_wakeup(dp_grpc_conn *c, void *userdata) {
        (void)c;
        dp_grpc_sconn *sc = userdata;
        sconn_set_events(sc, EPOLLIN | EPOLLOUT);
        /* A new deadline may be earlier than the armed one. */
        if (sc->timer) dp_loop_source_set_time(sc->timer, dp_grpc_conn_next_deadline(sc->conn));
}

static int sconn_new(dp_grpc_server *srv, int fd) {
        dp_grpc_sconn *sc = calloc(1, sizeof *sc);
        if (!sc) return -ENOMEM;
        sc->srv = srv;
        sc->fd = fd;
        int r = dp_grpc_conn_new_server(srv, dp_loop_now(), &sc->conn);
        if (r >= 0) r = dp_loop_add_io(srv->loop, fd, EPOLLIN | EPOLLOUT, sconn_io, sc, &sc->io);
        if (r >= 0) r = dp_loop_add_timer(srv->loop, 0, sconn_timer, sc, &sc->timer);
        if (r < 0) {
                sc->io = dp_loop_source_free(sc->io);
                sc->conn = dp_grpc_conn_free(sc->conn);
                free(sc);
                return r;
        }
        sc->events = EPOLLIN | EPOLLOUT;
        dp_grpc_conn_set_wakeup(sc->conn, sconn_wakeup, sc);
        sc->next = srv->conns;
        if (srv->conns) srv->conns->prev = sc;
        srv->conns = sc;
        srv->n_conns++;
        if (srv->shutting_down) dp_grpc_conn_shutdown(sc->conn);
        return 0;
}

/* ---------------------------------------------------------- listeners */

static int listener_io(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        (void)s;
        (void)events;
        dp_grpc_listener *ln = userdata;
        for (int i = 0; i < 64 && !ln->srv->free_requested && !ln->srv->shutting_down; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("grpc: accept on %s: %s", ln->path, strerror(errno));
                        break;
                }
                int r = sconn_new(ln->srv, cfd);
                if (r < 0) {
                        log_warning("grpc: cannot set up a connection on %s: %s", ln->path, strerror(-r));
                        close(cfd);
                }
        }
        return 0;
}

static void listener_free(dp_grpc_listener *ln) {
        ln->io = dp_loop_source_free(ln->io);
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
        if (r < 0) {
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
