/* SPDX-License-Identifier: Apache-2.0
 *
 * The client glue: one unix-socket connection driven by a dp_loop, and the
 * synchronous call helpers that run that loop until a reply arrives.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include "base/strbuf.h"
#include "grpc/internal.h"
#include "proto/proto.h"

struct dp_grpc_channel {
        dp_loop *loop;
        int fd;
        dp_loop_source *io, *timer;
        dp_grpc_conn *conn;
        uint32_t events;
        int busy;            /* depth of our callbacks on the stack */
        bool free_requested; /* dp_grpc_channel_free() called while busy */
        bool freeing;
        dp_grpc_channel_closed_fn closed_fn;
        void *closed_ud;
};

static void channel_destroy(dp_grpc_channel *ch);

static void channel_disconnect(dp_grpc_channel *ch) {
        if (!ch->conn) return;
        ch->busy++;
        dp_grpc_conn_peer_closed(ch->conn); /* pending calls: on_done(UNAVAILABLE) */
        ch->conn = dp_grpc_conn_free(ch->conn);
        ch->io = dp_loop_source_free(ch->io);
        ch->timer = dp_loop_source_free(ch->timer);
        if (ch->fd >= 0) close(ch->fd);
        ch->fd = -1;
        if (ch->closed_fn && !ch->freeing) ch->closed_fn(ch, ch->closed_ud);
        ch->busy--;
}

static void set_events(dp_grpc_channel *ch, uint32_t ev) {
        if (ch->events == ev || !ch->io) return;
        if (dp_loop_source_set_events(ch->io, ev) == 0) ch->events = ev;
}

static void channel_after(dp_grpc_channel *ch) {
        if (!ch->conn) return;
        for (;;) {
                const uint8_t *data;
                size_t len;
                if (dp_grpc_conn_output(ch->conn, &data, &len) < 0 && len == 0) break;
                if (!ch->conn) return; /* freed from a callback run by output */
                if (len == 0) break;
                ssize_t n = send(ch->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) {
                                set_events(ch, EPOLLIN | EPOLLOUT);
                                goto timers;
                        }
                        channel_disconnect(ch);
                        return;
                }
                dp_grpc_conn_consumed(ch->conn, (size_t)n);
        }
        set_events(ch, EPOLLIN);
timers:
        if (dp_grpc_conn_is_done(ch->conn)) {
                channel_disconnect(ch);
                return;
        }
        if (ch->timer) dp_loop_source_set_time(ch->timer, dp_grpc_conn_next_deadline(ch->conn));
}

/* Leave a callback scope; performs a free requested inside it. Returns
 * false when the channel is gone. */
static bool leave(dp_grpc_channel *ch) {
        ch->busy--;
        if (ch->busy == 0 && ch->free_requested) {
                channel_destroy(ch);
                return false;
        }
        return true;
}

static int channel_io(dp_loop_source *s, int fd, uint32_t events, void *userdata) {
        (void)s;
        dp_grpc_channel *ch = userdata;
        if (ch->busy > 0) {
                /* Re-entered from a nested loop run by one of our own
                 * callbacks (a sync call on another channel): stay quiet
                 * until that frame returns and re-arms the events. */
                set_events(ch, EPOLLET); /* edge-triggered: a hang-up is reported once, not in a loop */
                return 0;
        }
        ch->busy++;
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                uint8_t buf[DP_GRPC_READ_CHUNK];
                size_t total = 0;
                while (ch->conn && !ch->free_requested && total < DP_GRPC_READ_BUDGET) {
                        ssize_t n = read(fd, buf, sizeof buf);
                        if (n < 0 && errno == EINTR) continue;
                        if (n < 0 && errno == EAGAIN) break;
                        if (n <= 0) {
                                channel_disconnect(ch);
                                break;
                        }
                        total += (size_t)n;
                        if (dp_grpc_conn_feed(ch->conn, buf, (size_t)n, dp_loop_now()) < 0) break;
                }
        }
        if (!ch->free_requested) channel_after(ch);
        leave(ch);
        return 0;
}

static int channel_timer(dp_loop_source *s, uint64_t now, void *userdata) {
        dp_grpc_channel *ch = userdata;
        if (ch->busy > 0) {
                dp_loop_source_set_time(s, now + 1000); /* after the outer frame */
                return 0;
        }
        ch->busy++;
        if (ch->conn) dp_grpc_conn_tick(ch->conn, now);
        if (!ch->free_requested) channel_after(ch);
        leave(ch);
        return 0;
}

static void channel_wakeup(dp_grpc_conn *c, void *userdata) {
        (void)c;
        dp_grpc_channel *ch = userdata;
        set_events(ch, EPOLLIN | EPOLLOUT);
        if (ch->timer && ch->conn) dp_loop_source_set_time(ch->timer, dp_grpc_conn_next_deadline(ch->conn));
}

int dp_grpc_channel_connect_unix(dp_loop *l, const char *path, dp_grpc_channel **ret) {
        assert_return(l && path && ret, -EINVAL);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sa.sun_path) return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        /* Non-blocking from the start: a unix connect() completes at once or
         * fails, and with the server's backlog full it says EAGAIN instead
         * of stalling the whole loop. */
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return -errno;
        int r;
        do
                r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        while (r < 0 && errno == EINTR);
        if (r < 0) return -errno;
        dp_grpc_channel *ch = calloc(1, sizeof *ch);
        if (!ch) return -ENOMEM;
        ch->loop = l;
        ch->fd = -1;
        r = dp_grpc_conn_new_client(dp_loop_now(), &ch->conn);
        if (r >= 0) r = dp_loop_add_io(l, fd, EPOLLIN | EPOLLOUT, channel_io, ch, &ch->io);
        if (r >= 0) r = dp_loop_add_timer(l, 0, channel_timer, ch, &ch->timer);
        if (r < 0) {
                ch->io = dp_loop_source_free(ch->io);
                ch->conn = dp_grpc_conn_free(ch->conn);
                free(ch);
                return r;
        }
        ch->events = EPOLLIN | EPOLLOUT;
        ch->fd = TAKE_FD(fd);
        dp_grpc_conn_set_wakeup(ch->conn, channel_wakeup, ch);
        *ret = ch;
        return 0;
}

static void channel_destroy(dp_grpc_channel *ch) {
        ch->freeing = true;
        ch->busy++;
        channel_disconnect(ch);
        ch->busy--;
        free(ch);
}

dp_grpc_channel *dp_grpc_channel_free(dp_grpc_channel *ch) {
        if (!ch || ch->free_requested) return NULL;
        ch->free_requested = true;
        if (ch->busy == 0) channel_destroy(ch);
        return NULL;
}

bool dp_grpc_channel_is_connected(const dp_grpc_channel *ch) {
        return ch && ch->conn && !dp_grpc_conn_is_draining(ch->conn);
}

void dp_grpc_channel_set_closed_handler(dp_grpc_channel *ch, dp_grpc_channel_closed_fn fn, void *userdata) {
        if (!ch) return;
        ch->closed_fn = fn;
        ch->closed_ud = userdata;
}

int dp_grpc_channel_start_call(dp_grpc_channel *ch, const char *path, const uint8_t *req, size_t len,
                               uint64_t timeout_usec, dp_grpc_message_fn on_message, dp_grpc_done_fn on_done,
                               void *userdata, dp_grpc_client_call **ret) {
        assert_return(ch && path && on_done, -EINVAL);
        if (!ch->conn || ch->free_requested) return -ENOTCONN;
        return dp_grpc_conn_start_call(ch->conn, path, req, len, dp_loop_now(), timeout_usec, on_message, on_done,
                                       userdata, ret);
}

/* ------------------------------------------------------------- sync */

void dp_grpc_reply_done(dp_grpc_reply *r) {
        if (!r) return;
        dp_free_many(r->message, r->data);
        if (r->msg) protobuf_c_message_free_unpacked(r->msg, NULL);
        *r = (dp_grpc_reply)DP_GRPC_REPLY_INIT;
}

typedef struct sync_state {
        dp_grpc_reply *r;
        bool done, oom;
} sync_state;

static void sync_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *userdata) {
        (void)cc;
        sync_state *st = userdata;
        uint8_t *copy = malloc(len ? len : 1);
        if (!copy) {
                st->oom = true;
                return;
        }
        if (len) memcpy(copy, msg, len);
        free(st->r->data);
        st->r->data = copy;
        st->r->len = len;
}

static void sync_done(dp_grpc_client_call *cc, int status, const char *message, void *userdata) {
        (void)cc;
        sync_state *st = userdata;
        st->r->status = status;
        st->r->message = dp_strdup(message ? message : "");
        if (!st->r->message) st->oom = true;
        st->done = true;
}

static int status_to_errno(int status) {
        switch (status) {
        case DP_GRPC_OK: return 0;
        case DP_GRPC_DEADLINE_EXCEEDED: return -ETIMEDOUT;
        case DP_GRPC_UNAVAILABLE: return -ENOTCONN;
        default: return -EREMOTEIO;
        }
}

static void set_local(dp_grpc_reply *r, int status, const char *msg) {
        r->status = status;
        free(r->message);
        r->message = dp_strdup(msg);
}

static int sync_call(dp_grpc_channel *ch, const char *path, const uint8_t *req, size_t len, uint64_t timeout_usec,
                     const ProtobufCMessageDescriptor *reply_type, dp_grpc_reply *ret, dp_error *err) {
        dp_grpc_reply_done(ret);
        sync_state st = {.r = ret};
        dp_grpc_client_call *cc = NULL;
        int r = ch ? dp_grpc_channel_start_call(ch, path, req, len, timeout_usec, sync_message, sync_done, &st, &cc)
                   : -ENOTCONN;
        if (r >= 0 && ch->busy > 0) {
                /* From inside this channel's own callback the reply could
                 * never be dispatched: refuse instead of hanging. */
                dp_grpc_client_call_cancel(cc);
                set_local(ret, DP_GRPC_INTERNAL, "synchronous call from inside a callback of the same channel");
                dp_error_set(err, -EDEADLK, "%s: %s", path, ret->message ? ret->message : "");
                return -EDEADLK;
        }
        if (r < 0)
                set_local(ret, r == -ENOTCONN ? DP_GRPC_UNAVAILABLE : DP_GRPC_INTERNAL,
                          r == -ENOTCONN ? "not connected" : strerror(-r));
        else {
                dp_loop *l = ch->loop;
                while (!st.done) {
                        r = dp_loop_run_once(l, -1);
                        if (r < 0 && !st.done) {
                                dp_grpc_client_call_cancel(cc);
                                set_local(ret, DP_GRPC_INTERNAL, "event loop failed");
                                break;
                        }
                }
        }
        if (st.oom) set_local(ret, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        int q = status_to_errno(ret->status);
        if (q == 0 && !ret->data) {
                set_local(ret, DP_GRPC_INTERNAL, "no response message");
                q = -EREMOTEIO;
        }
        if (q == 0 && reply_type) {
                q = dp_proto_unpack(reply_type, ret->data, ret->len, &ret->msg);
                if (q == -ENOMEM)
                        set_local(ret, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
                else if (q < 0) {
                        set_local(ret, DP_GRPC_INTERNAL, "grpc: failed to unmarshal the response");
                        q = -EBADMSG;
                }
        }
        if (q < 0)
                dp_error_set(err, q, "%s: %s: %s", path, dp_grpc_status_name(ret->status),
                             ret->message ? ret->message : "");
        return q;
}

int dp_grpc_channel_call_sync(dp_grpc_channel *ch, const char *path, const uint8_t *req, size_t len,
                              uint64_t timeout_usec, dp_grpc_reply *ret, dp_error *err) {
        assert_return(path && ret && (req || len == 0), -EINVAL);
        return sync_call(ch, path, req, len, timeout_usec, NULL, ret, err);
}

int dp_grpc_channel_call_sync_msg(dp_grpc_channel *ch, const char *path, const ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *reply_type, uint64_t timeout_usec,
                                  dp_grpc_reply *ret, dp_error *err) {
        assert_return(path && req && ret, -EINVAL);
        _cleanup_free_ uint8_t *data = NULL;
        size_t len;
        int r = dp_proto_pack(req, &data, &len);
        if (r < 0) {
                dp_grpc_reply_done(ret);
                set_local(ret, DP_GRPC_INTERNAL, "cannot serialize the request");
                return dp_error_set(err, r, "%s: cannot serialize the request", path);
        }
        return sync_call(ch, path, data, len, timeout_usec, reply_type, ret, err);
}
