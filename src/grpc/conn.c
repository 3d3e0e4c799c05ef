/* SPDX-License-Identifier: Apache-2.0
 *
 * The sans-I/O gRPC connection: an nghttp2 session driven with
 * mem_recv/mem_send, gRPC framing and status handling on top.
 *
 * Stream lifetime: a dp_grpc_call lives on conn->streams from creation until
 * it is freed. nghttp2 only knows it through the stream user data (never
 * through data-source pointers), so detaching is one
 * nghttp2_session_set_stream_user_data(NULL). Application callbacks run only
 * from dispatch(), which the public entry points call after nghttp2 returns;
 * calls are freed only there (or directly once detached from the conn).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/list.h"
#include "base/strbuf.h"
#include "grpc/internal.h"
#include "grpc/wire.h"
#include "proto/proto.h"

/* How much encoded output to gather before handing it to the glue. */
#define OUTPUT_CHUNK (256u * 1024u)
/* Local HTTP/2 flow-control windows: streams and the connection. */
#define STREAM_WINDOW (1u << 20)
#define CONN_WINDOW (16u << 20)

struct dp_grpc_conn {
        nghttp2_session *session;
        dp_grpc_server *srv; /* NULL for a client */
        dp_grpc_call *streams;
        dp_grpc_call *pending_head, *pending_tail;
        uint8_t *out;
        size_t out_len, out_off, out_cap;
        uint64_t now;
        bool dead, fatal, draining, tearing_down, dispatching;
        size_t n_streams;
        size_t buffered;      /* sum of the streams' in_len */
        uint64_t last_active; /* opened, or a server call dispatched or ended */
        dp_grpc_conn_wakeup_fn wakeup;
        void *wakeup_ud;
        /* The wire scan for empty DATA frames (count_empty_data) */
        size_t scan_skip; /* bytes to pass over: the client preface, a frame's payload */
        uint8_t scan_hdr[10];
        size_t scan_have; /* header bytes gathered (10: a padded DATA frame's pad length too) */
        uint32_t empty_budget;
        uint64_t empty_refilled; /* when the budget was last refilled */
};

/* ------------------------------------------------------------ helpers */

static void wake(dp_grpc_conn *c) {
        if (c && c->wakeup && !c->tearing_down) c->wakeup(c, c->wakeup_ud);
}

static void enqueue(dp_grpc_call *s) {
        dp_grpc_conn *c = s->conn;
        if (!c || s->pending) return;
        s->pending = true;
        s->pending_next = NULL;
        if (c->pending_tail)
                c->pending_tail->pending_next = s;
        else
                c->pending_head = s;
        c->pending_tail = s;
}

static void link_stream(dp_grpc_conn *c, dp_grpc_call *s) {
        s->conn = c;
        DP_LIST_PREPEND(c->streams, s);
        c->n_streams++;
}

static void unlink_stream(dp_grpc_call *s) {
        dp_grpc_conn *c = s->conn;
        if (!c) return;
        DP_LIST_REMOVE(c->streams, s);
        c->n_streams--;
        if (s->dispatched) c->last_active = c->now;
        /* Also reaches a request whose HEADERS still wait in nghttp2's queue
         * (no stream object yet, so get_stream_user_data would say NULL). */
        if (c->session && s->id > 0) (void)nghttp2_session_set_stream_user_data(c->session, s->id, NULL);
        s->conn = NULL;
}

/* Request bytes held by a connection, also counted server-wide so that many
 * connections cannot each hold their own DP_GRPC_MAX_CONN_BUFFERED. */
static void buffered_sub(dp_grpc_conn *c, size_t n) {
        if (!c) return;
        c->buffered -= n;
        if (c->srv) c->srv->buffered -= n;
}

static void call_free(dp_grpc_call *s) {
        if (!s) return;
        buffered_sub(s->conn, s->in_len);
        unlink_stream(s);
        dp_free_many(s->in, s->out, s->status_message, s->path, s->req);
        if (s->req_msg) protobuf_c_message_free_unpacked(s->req_msg, NULL);
        dp_free_many(s->grpc_message, s->local_message);
        free(s);
}

static int buf_append(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *data, size_t n) {
        if (n == 0) return 0;
        if (*len + n < *len) return -ENOMEM;
        if (*len + n > *cap) {
                size_t nc = *cap ? *cap : 256;
                while (nc < *len + n) {
                        if (nc > SIZE_MAX / 2) return -ENOMEM;
                        nc *= 2;
                }
                uint8_t *p = realloc(*buf, nc);
                if (!p) return -ENOMEM;
                *buf = p;
                *cap = nc;
        }
        memcpy(*buf + *len, data, n);
        *len += n;
        return 0;
}

static char *encode_message(const char *msg) {
        if (!msg) return dp_strdup("");
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "");
        dp_grpc_percent_encode(&sb, msg, strlen(msg));
        return dp_strbuf_steal(&sb);
}

#define NV(n, v)                                                                                                       \
        { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* ------------------------------------------------- server: responding */

static ssize_t read_cb(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length, uint32_t *data_flags,
                       nghttp2_data_source *source, void *user_data);

/* Submit the response HEADERS with a data provider (first message). */
static int server_start_data(dp_grpc_call *s) {
        nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
        nghttp2_data_provider prd = {.source = {.ptr = NULL}, .read_callback = read_cb};
        int r = nghttp2_submit_response(s->conn->session, s->id, hdrs, ELEMENTSOF(hdrs), &prd);
        if (r < 0) return r == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
        s->data_started = true;
        return 0;
}

/* End a server stream with status: trailers-only when nothing was sent,
 * else trailers after the queued data. http_status != 200 only for the
 * request-validation errors. */
static int server_end(dp_grpc_call *s, int status, const char *message, const char *http_status) {
        dp_grpc_conn *c = s->conn;
        if (!c || s->closed || s->finished) return -ECANCELED;
        free(s->status_message);
        s->status_message = encode_message(message); /* NULL after OOM: sent as "" */
        s->status = status;
        s->finished = true;
        if (!s->data_started) {
                char st[12];
                snprintf(st, sizeof st, "%d", status);
                nghttp2_nv hdrs[] = {
                        NV(":status", http_status),
                        NV("content-type", "application/grpc"),
                        NV("grpc-status", st),
                        NV("grpc-message", s->status_message ? s->status_message : ""),
                };
                s->trailers_submitted = true;
                int r = nghttp2_submit_response(c->session, s->id, hdrs, ELEMENTSOF(hdrs), NULL);
                if (r < 0) {
                        /* cannot answer: at least end the stream */
                        nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
                        wake(c);
                        return r == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
                }
        } else if (s->deferred) {
                s->deferred = false;
                nghttp2_session_resume_data(c->session, s->id);
        }
        wake(c);
        return 0;
}

/* An error found by the core (validation, framing, deadline). */
static void server_fail(dp_grpc_call *s, int status, const char *message, const char *http_status) {
        s->core_finished = true;
        (void)server_end(s, status, message, http_status);
}

static ssize_t read_cb(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length, uint32_t *data_flags,
                       nghttp2_data_source *source, void *user_data) {
        (void)source;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, stream_id);
        if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        size_t avail = s->out_len - s->out_off;
        size_t n = DP_MIN(avail, length);
        if (n) memcpy(buf, s->out + s->out_off, n);
        s->out_off += n;
        if (s->out_off == s->out_len) s->out_off = s->out_len = 0;
        if (s->out_len > 0) return (ssize_t)n;
        if (!s->server) {
                *data_flags |= NGHTTP2_DATA_FLAG_EOF;
                return (ssize_t)n;
        }
        if (s->finished) {
                char st[12];
                snprintf(st, sizeof st, "%d", s->status);
                nghttp2_nv tr[] = {NV("grpc-status", st),
                                   NV("grpc-message", s->status_message ? s->status_message : "")};
                int r = nghttp2_submit_trailer(session, stream_id, tr, ELEMENTSOF(tr));
                if (r < 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
                s->trailers_submitted = true;
                *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
                return (ssize_t)n;
        }
        if (n == 0) {
                s->deferred = true;
                return NGHTTP2_ERR_DEFERRED;
        }
        return (ssize_t)n;
}

static int queue_message(dp_grpc_call *s, const uint8_t *msg, size_t len) {
        if (len > UINT32_MAX) return -E2BIG;
        if (s->out_len - s->out_off + len > DP_GRPC_MAX_QUEUED_OUTPUT) return -ENOBUFS;
        if (s->out_off > 0) { /* drop what nghttp2 already took */
                memmove(s->out, s->out + s->out_off, s->out_len - s->out_off);
                s->out_len -= s->out_off;
                s->out_off = 0;
        }
        size_t cap = s->out_len; /* the buffer is reallocated to fit exactly */
        uint8_t pfx[DP_GRPC_PREFIX_LEN];
        dp_grpc_prefix_write(pfx, (uint32_t)len);
        size_t need = s->out_len + DP_GRPC_PREFIX_LEN + len;
        uint8_t *p = realloc(s->out, need ? need : 1);
        if (!p) return -ENOMEM;
        s->out = p;
        memcpy(s->out + cap, pfx, DP_GRPC_PREFIX_LEN);
        if (len) memcpy(s->out + cap + DP_GRPC_PREFIX_LEN, msg, len);
        s->out_len = need;
        return 0;
}

/* --------------------------------------------------- server: API */

const char *dp_grpc_call_path(const dp_grpc_call *call) { return call ? call->path : NULL; }

const uint8_t *dp_grpc_call_request(const dp_grpc_call *call, size_t *ret_len) {
        if (!call) return NULL;
        if (ret_len) *ret_len = call->req_len;
        return call->req;
}

const ProtobufCMessage *dp_grpc_call_request_msg(const dp_grpc_call *call) { return call ? call->req_msg : NULL; }

uint64_t dp_grpc_call_deadline(const dp_grpc_call *call) { return call ? call->deadline : 0; }

bool dp_grpc_call_is_alive(const dp_grpc_call *call) {
        return call && call->conn && !call->conn->tearing_down && !call->closed && !call->core_finished &&
               !call->finished;
}

void dp_grpc_call_set_userdata(dp_grpc_call *call, void *userdata) {
        if (call) call->userdata = userdata;
}

void *dp_grpc_call_get_userdata(const dp_grpc_call *call) { return call ? call->userdata : NULL; }

void dp_grpc_call_set_cancel_handler(dp_grpc_call *call, dp_grpc_cancel_fn fn, void *userdata) {
        if (!call) return;
        call->cancel_fn = fn;
        call->cancel_ud = userdata;
}

int dp_grpc_call_send(dp_grpc_call *call, const uint8_t *msg, size_t len) {
        assert_return(call && call->server && (msg || len == 0), -EINVAL);
        assert_return(call->app_ref, -EINVAL);
        if (!dp_grpc_call_is_alive(call)) return call->finished && !call->core_finished ? -EINVAL : -ECANCELED;
        if (call->method && call->method->kind == DP_GRPC_UNARY && call->n_sent > 0) return -EINVAL;
        int r = queue_message(call, msg, len);
        if (r < 0) return r;
        call->n_sent++;
        if (!call->data_started) {
                r = server_start_data(call);
                if (r < 0) { /* take the message back: nothing was sent */
                        call->n_sent--;
                        call->out_len -= DP_GRPC_PREFIX_LEN + len;
                        return r;
                }
        } else if (call->deferred) {
                call->deferred = false;
                nghttp2_session_resume_data(call->conn->session, call->id);
        }
        wake(call->conn);
        return 0;
}

int dp_grpc_call_send_msg(dp_grpc_call *call, const ProtobufCMessage *msg) {
        assert_return(call && msg, -EINVAL);
        _cleanup_free_ uint8_t *data = NULL;
        size_t len;
        int r = dp_proto_pack(msg, &data, &len);
        if (r < 0) return r;
        return dp_grpc_call_send(call, data, len);
}

/* Drop the application's reference; free when nothing else holds it. */
static void call_release(dp_grpc_call *call) {
        call->app_ref = false;
        if (!call->conn) {
                call_free(call);
                return;
        }
        if (call->conn->tearing_down) return; /* teardown frees it */
        enqueue(call);
        wake(call->conn);
}

int dp_grpc_call_finish(dp_grpc_call *call, int status, const char *message) {
        assert_return(call && call->server && call->app_ref, -EINVAL);
        int r;
        call->app_finished = true;
        if (!dp_grpc_call_is_alive(call))
                r = -ECANCELED;
        else {
                if (status == DP_GRPC_OK && call->method && call->method->kind == DP_GRPC_UNARY && call->n_sent == 0) {
                        status = DP_GRPC_INTERNAL;
                        message = "unary handler finished without a response message";
                }
                if (status < 0 || status > 16) status = DP_GRPC_UNKNOWN;
                r = server_end(call, status, message, "200");
        }
        call_release(call);
        return r;
}

int dp_grpc_call_finishf(dp_grpc_call *call, int status, const char *fmt, ...) {
        assert_return(call && fmt, -EINVAL);
        va_list ap;
        dp_strbuf sb = DP_STRBUF_INIT;
        va_start(ap, fmt);
        dp_strbuf_vprintf(&sb, fmt, ap);
        va_end(ap);
        int r = dp_grpc_call_finish(call, status, dp_strbuf_failed(&sb) ? "out of memory" : dp_strbuf_str(&sb));
        dp_strbuf_done(&sb);
        return r;
}

int dp_grpc_call_reply_msg(dp_grpc_call *call, const ProtobufCMessage *msg) {
        assert_return(call && msg, -EINVAL);
        int r = dp_grpc_call_send_msg(call, msg);
        if (r < 0 && r != -ECANCELED) {
                (void)dp_grpc_call_finish(call, DP_GRPC_INTERNAL, "failed to send the response");
                return r;
        }
        int q = dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
        return r < 0 ? r : q;
}

/* --------------------------------------------- nghttp2 callbacks */

static bool content_type_ok(const uint8_t *v, size_t n) {
        static const char ct[] = "application/grpc";
        size_t k = sizeof(ct) - 1;
        if (n < k || memcmp(v, ct, k) != 0) return false;
        return n == k || v[k] == '+' || v[k] == ';';
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
        dp_grpc_conn *c = user_data;
        if (!c->srv || frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
        dp_grpc_call *s = calloc(1, sizeof *s);
        if (!s) return NGHTTP2_ERR_CALLBACK_FAILURE;
        s->server = true;
        s->id = frame->hd.stream_id;
        s->grpc_status = -1;
        link_stream(c, s);
        nghttp2_session_set_stream_user_data(session, s->id, s);
        return 0;
}

static bool header_is(const uint8_t *name, size_t namelen, const char *want) {
        size_t n = strlen(want);
        return namelen == n && memcmp(name, want, n) == 0;
}

static int parse_status(const uint8_t *v, size_t n) {
        if (n == 0 || n > 9) return -1;
        int x = 0;
        for (size_t i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9') return -1;
                x = x * 10 + (v[i] - '0');
        }
        return x;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user_data) {
        (void)flags;
        (void)user_data;
        if (frame->hd.type != NGHTTP2_HEADERS) return 0;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (!s) return 0;
        if (s->server) {
                if (frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0; /* client trailers: ignored */
                if (header_is(name, namelen, ":method")) {
                        s->seen_method = true;
                        s->bad_method = !(valuelen == 4 && memcmp(value, "POST", 4) == 0);
                } else if (header_is(name, namelen, ":path")) {
                        free(s->path);
                        s->path = dp_strndup((const char *)value, valuelen);
                        if (!s->path) return NGHTTP2_ERR_CALLBACK_FAILURE;
                } else if (header_is(name, namelen, "content-type")) {
                        s->seen_ct = true;
                        s->bad_content_type = !content_type_ok(value, valuelen);
                } else if (header_is(name, namelen, "grpc-timeout")) {
                        uint64_t usec;
                        if (dp_grpc_timeout_parse((const char *)value, valuelen, &usec) < 0)
                                s->bad_timeout = true;
                        else {
                                dp_grpc_conn *c = s->conn;
                                uint64_t d = c->now + usec;
                                s->deadline = d < c->now ? UINT64_MAX : d;
                                if (s->deadline == 0) s->deadline = 1;
                        }
                } else if (header_is(name, namelen, "grpc-encoding")) {
                        s->bad_encoding = !(valuelen == 8 && memcmp(value, "identity", 8) == 0);
                }
                return 0;
        }
        /* client: response headers, trailers-only, or trailers */
        if (header_is(name, namelen, ":status")) {
                int st = parse_status(value, valuelen);
                s->http_status = st < 0 ? 0 : st;
        } else if (header_is(name, namelen, "content-type")) {
                s->ct_ok = content_type_ok(value, valuelen);
        } else if (header_is(name, namelen, "grpc-status")) {
                int st = parse_status(value, valuelen);
                s->grpc_status = st < 0 ? DP_GRPC_UNKNOWN : st;
        } else if (header_is(name, namelen, "grpc-message")) {
                free(s->grpc_message);
                dp_strbuf sb = DP_STRBUF_INIT;
                dp_strbuf_puts(&sb, "");
                dp_grpc_percent_decode(&sb, (const char *)value, valuelen);
                s->grpc_message = dp_strbuf_steal(&sb);
                if (!s->grpc_message) return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        return 0;
}

/* Validate a complete request header block; false when it was rejected. */
static bool server_validate(dp_grpc_conn *c, dp_grpc_call *s) {
        if (!s->seen_method || s->bad_method) {
                server_fail(s, DP_GRPC_INTERNAL, "invalid HTTP method (gRPC requires POST)", "405");
                return false;
        }
        if (!s->seen_ct || s->bad_content_type) {
                server_fail(s, DP_GRPC_INVALID_ARGUMENT, "invalid gRPC request content-type", "415");
                return false;
        }
        if (s->bad_timeout) {
                server_fail(s, DP_GRPC_INTERNAL, "malformed grpc-timeout", "200");
                return false;
        }
        s->method = s->path ? dp_grpc_server_find_method(c->srv, s->path) : NULL;
        if (!s->method) {
                dp_strbuf sb = DP_STRBUF_INIT;
                dp_strbuf_printf(&sb, "unknown method %s", s->path ? s->path : "(none)");
                server_fail(s, DP_GRPC_UNIMPLEMENTED, dp_strbuf_failed(&sb) ? "unknown method" : dp_strbuf_str(&sb),
                            "200");
                dp_strbuf_done(&sb);
                return false;
        }
        if (s->bad_encoding) {
                server_fail(s, DP_GRPC_UNIMPLEMENTED, "grpc-encoding not supported (only identity)", "200");
                return false;
        }
        return true;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
        dp_grpc_conn *c = user_data;
        if (frame->hd.type == NGHTTP2_GOAWAY) {
                c->draining = true;
                return 0;
        }
        if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (!s) return 0;
        if (frame->hd.type == NGHTTP2_HEADERS) {
                if (s->server && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
                        if (!server_validate(c, s)) return 0;
                } else if (!s->server && frame->headers.cat == NGHTTP2_HCAT_RESPONSE)
                        s->got_headers = true;
        }
        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
                s->remote_closed = true;
                enqueue(s);
        }
        return 0;
}

static void stream_local_error(dp_grpc_call *s, int status, const char *msg) {
        if (s->server) {
                server_fail(s, status, msg, "200");
                return;
        }
        if (s->local_error || s->done) return;
        s->local_error = true;
        s->local_status = status;
        s->local_message = dp_strdup(msg);
        if (s->conn && !s->closed)
                nghttp2_submit_rst_stream(s->conn->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        enqueue(s);
}

/* A refused stream's input is dropped at once, so its bytes count no more. */
static void stream_drop_input(dp_grpc_call *s) {
        buffered_sub(s->conn, s->in_len);
        free(s->in);
        s->in = NULL;
        s->in_len = s->in_cap = s->in_scan = s->n_complete = 0;
}

/* Room for len more bytes of stream s under DP_GRPC_MAX_CONN_BUFFERED and
 * DP_GRPC_MAX_SERVER_BUFFERED: the newest streams of this connection holding
 * input are refused (RESOURCE_EXHAUSTED) until it fits, so the oldest ones
 * finish. False when s itself was refused. */
static bool make_room(dp_grpc_conn *c, dp_grpc_call *s, size_t len) {
        for (;;) {
                bool conn_full = c->buffered + len > DP_GRPC_MAX_CONN_BUFFERED;
                bool srv_full = c->srv && c->srv->buffered + len > DP_GRPC_MAX_SERVER_BUFFERED;
                if (!conn_full && !srv_full) return true;
                dp_grpc_call *victim = s;
                for (dp_grpc_call *o = c->streams; o; o = o->next)
                        if (o->in_len && o->id > victim->id && !o->core_finished && !o->local_error) victim = o;
                stream_local_error(victim, DP_GRPC_RESOURCE_EXHAUSTED,
                                   conn_full ? "connection receive buffer limit reached"
                                             : "server receive buffer limit reached");
                stream_drop_input(victim);
                if (victim == s) return false;
        }
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
                         void *user_data) {
        (void)flags;
        dp_grpc_conn *c = user_data;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, stream_id);
        if (!s || s->core_finished || s->local_error || s->cancelled) return 0;
        if (!make_room(c, s, len)) return 0;
        /* A message whose length is known gets exactly its size: doubling
         * would hold up to twice the bytes received (8 MiB for 4 MiB). */
        if (s->in_len - s->in_scan >= DP_GRPC_PREFIX_LEN) {
                const uint8_t *p = s->in + s->in_scan;
                size_t want = s->in_scan + DP_GRPC_PREFIX_LEN +
                              ((uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4]);
                if (s->in_len + len <= want && want > s->in_cap &&
                    want - s->in_scan <= DP_GRPC_MAX_RECV_MESSAGE + DP_GRPC_PREFIX_LEN) {
                        uint8_t *b = realloc(s->in, want);
                        if (!b) {
                                stream_local_error(s, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory receiving a message");
                                return 0;
                        }
                        s->in = b;
                        s->in_cap = want;
                }
        }
        if (buf_append(&s->in, &s->in_len, &s->in_cap, data, len) < 0) {
                stream_local_error(s, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory receiving a message");
                return 0;
        }
        c->buffered += len;
        if (c->srv) c->srv->buffered += len;
        while (s->in_len - s->in_scan >= DP_GRPC_PREFIX_LEN) {
                const uint8_t *p = s->in + s->in_scan;
                uint32_t mlen = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
                if (p[0] != 0) {
                        stream_local_error(s, p[0] == 1 ? DP_GRPC_INTERNAL : DP_GRPC_INTERNAL,
                                           p[0] == 1 ? "grpc: compressed flag set with identity or empty encoding"
                                                     : "grpc: invalid message flag");
                        return 0;
                }
                if (mlen > DP_GRPC_MAX_RECV_MESSAGE) {
                        char msg[128];
                        snprintf(msg, sizeof msg, "grpc: received message larger than max (%" PRIu32 " vs. %u)", mlen,
                                 DP_GRPC_MAX_RECV_MESSAGE);
                        stream_local_error(s, DP_GRPC_RESOURCE_EXHAUSTED, msg);
                        return 0;
                }
                if (s->in_len - s->in_scan - DP_GRPC_PREFIX_LEN < mlen) break;
                s->in_scan += DP_GRPC_PREFIX_LEN + mlen;
                s->n_complete++;
                if (s->server && s->n_complete > 1) {
                        stream_local_error(s, DP_GRPC_INTERNAL,
                                           "grpc: client streaming protocol violation: more than one request message");
                        return 0;
                }
                if (!s->server) enqueue(s);
        }
        return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
        (void)user_data;
        if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
        if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) return 0;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (!s || !s->server) return 0;
        /* The server ended its side before the client's END_STREAM: reset
         * the client's half as grpc-go does. */
        if (nghttp2_session_get_stream_remote_close(session, frame->hd.stream_id) == 0)
                nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
        return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
        (void)user_data;
        dp_grpc_call *s = nghttp2_session_get_stream_user_data(session, stream_id);
        if (!s) return 0;
        s->closed = true;
        s->close_code = error_code;
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        enqueue(s);
        return 0;
}

/* ------------------------------------------------------------ dispatch */

static void server_dispatch_request(dp_grpc_conn *c, dp_grpc_call *s) {
        if (s->n_complete != 1 || s->in_scan != s->in_len) {
                server_fail(s, DP_GRPC_INTERNAL,
                            s->n_complete == 0 ? "grpc: request ended without a message"
                                               : "grpc: request ended inside a message",
                            "200");
                return;
        }
        uint32_t mlen = (uint32_t)(s->in_len - DP_GRPC_PREFIX_LEN);
        s->req = malloc(mlen ? mlen : 1);
        if (!s->req) {
                server_fail(s, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory", "200");
                return;
        }
        memcpy(s->req, s->in + DP_GRPC_PREFIX_LEN, mlen);
        s->req_len = mlen;
        buffered_sub(c, s->in_len);
        free(s->in);
        s->in = NULL;
        s->in_len = s->in_cap = s->in_scan = 0;
        if (s->method->request_type) {
                dp_proto_bad_string bad = {0};
                int r = dp_proto_unpack_checked(s->method->request_type, s->req, s->req_len, &s->req_msg, &bad);
                if (r == -EILSEQ) {
                        /* a truncated id would name another device */
                        char msg[256];
                        snprintf(msg, sizeof msg, "grpc: error unmarshalling request: %s.%s contains %s", bad.message,
                                 bad.field, bad.why);
                        server_fail(s, DP_GRPC_INVALID_ARGUMENT, msg, "200");
                        return;
                }
                if (r < 0) {
                        server_fail(s, r == -ENOMEM ? DP_GRPC_RESOURCE_EXHAUSTED : DP_GRPC_INTERNAL,
                                    r == -ENOMEM ? "out of memory" : "grpc: error unmarshalling request", "200");
                        return;
                }
        }
        s->dispatched = true;
        c->last_active = c->now;
        s->app_ref = true;
        s->method->handler(s, s->method->userdata);
}

static void client_deliver(dp_grpc_call *s) {
        size_t off = 0;
        while (s->n_complete > 0 && !s->cancelled) {
                const uint8_t *p = s->in + off;
                uint32_t mlen = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
                s->n_complete--;
                off += DP_GRPC_PREFIX_LEN + mlen;
                if (s->on_message && !s->local_error)
                        s->on_message((dp_grpc_client_call *)s, p + DP_GRPC_PREFIX_LEN, mlen, s->cb_ud);
        }
        if (s->cancelled || off == 0) return;
        buffered_sub(s->conn, off);
        memmove(s->in, s->in + off, s->in_len - off);
        s->in_len -= off;
        s->in_scan -= off;
}

static void client_finish(dp_grpc_call *s) {
        int status;
        char buf[160];
        const char *msg = "";
        if (s->local_error) {
                status = s->local_status;
                msg = s->local_message ? s->local_message : "";
        } else if (s->got_headers && !s->ct_ok) {
                status = dp_grpc_status_from_http(s->http_status);
                snprintf(buf, sizeof buf, "unexpected HTTP status %d or content-type from server", s->http_status);
                msg = buf;
        } else if (s->grpc_status >= 0) {
                status = s->grpc_status;
                msg = s->grpc_message ? s->grpc_message : "";
        } else if (s->close_code != NGHTTP2_NO_ERROR) {
                status = dp_grpc_status_from_rst(s->close_code);
                snprintf(buf, sizeof buf, "stream terminated by RST_STREAM with error code: %" PRIu32, s->close_code);
                msg = buf;
        } else if (!s->conn) {
                status = DP_GRPC_UNAVAILABLE;
                msg = "connection closed";
        } else {
                status = DP_GRPC_INTERNAL;
                msg = "server closed the stream without sending trailers";
        }
        s->done = true;
        if (s->on_done) s->on_done((dp_grpc_client_call *)s, status, msg, s->cb_ud);
}

static void dispatch(dp_grpc_conn *c) {
        if (c->dispatching) return; /* the outer dispatch picks new work up */
        c->dispatching = true;
        while (c->pending_head) {
                dp_grpc_call *s = c->pending_head;
                c->pending_head = s->pending_next;
                if (!c->pending_head) c->pending_tail = NULL;
                s->pending = false;
                s->pending_next = NULL;

                if (s->server) {
                        if (s->remote_closed && !s->dispatched && !s->core_finished && !s->closed && s->method)
                                server_dispatch_request(c, s);
                        if ((s->closed || s->core_finished) && s->dispatched && s->app_ref && !s->cancel_notified &&
                            !s->app_finished) {
                                s->cancel_notified = true;
                                int st = s->cancel_status ? s->cancel_status : DP_GRPC_CANCELLED;
                                if (s->cancel_fn) s->cancel_fn(s, st, s->cancel_ud);
                        }
                        if (s->closed && !s->app_ref && !s->pending) call_free(s);
                        continue;
                }
                if (s->cancelled) {
                        if (!s->pending) call_free(s);
                        continue;
                }
                if (!s->local_error) client_deliver(s);
                if (!s->cancelled && !s->done && (s->closed || s->local_error)) client_finish(s);
                if ((s->done || s->cancelled) && !s->pending) call_free(s);
        }
        c->dispatching = false;
}

/* ---------------------------------------------------- construction */

/* nghttp2 allocates through these, so its memory goes through the same
 * malloc as ours (and the allocation-failure test reaches it too). */
static void *mem_malloc(size_t n, void *ud) {
        (void)ud;
        return malloc(n);
}
static void mem_free(void *p, void *ud) {
        (void)ud;
        free(p);
}
static void *mem_calloc(size_t a, size_t b, void *ud) {
        (void)ud;
        return calloc(a, b);
}
static void *mem_realloc(void *p, size_t n, void *ud) {
        (void)ud;
        return realloc(p, n);
}
static nghttp2_mem h2_mem = {NULL, mem_malloc, mem_free, mem_calloc, mem_realloc};

static int conn_new(dp_grpc_server *srv, uint64_t now, dp_grpc_conn **ret) {
        _cleanup_free_ dp_grpc_conn *c = calloc(1, sizeof *c);
        if (!c) return -ENOMEM;
        c->srv = srv;
        c->now = now;
        c->last_active = now;
        c->scan_skip = srv ? NGHTTP2_CLIENT_MAGIC_LEN : 0;
        c->empty_budget = DP_GRPC_EMPTY_DATA_BURST;
        c->empty_refilled = now;
        nghttp2_session_callbacks *cbs;
        if (nghttp2_session_callbacks_new(&cbs) != 0) return -ENOMEM;
        nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
        nghttp2_option *opt;
        if (nghttp2_option_new(&opt) != 0) {
                nghttp2_session_callbacks_del(cbs);
                return -ENOMEM;
        }
        /* Peers may have many streams open; idle closed-stream bookkeeping
         * stays bounded by nghttp2's defaults. */
        int r = srv ? nghttp2_session_server_new3(&c->session, cbs, c, opt, &h2_mem)
                    : nghttp2_session_client_new3(&c->session, cbs, c, opt, &h2_mem);
        nghttp2_option_del(opt);
        nghttp2_session_callbacks_del(cbs);
        if (r != 0) return -ENOMEM;
        nghttp2_settings_entry iv[3];
        size_t n = 0;
        iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_MAX_FRAME_SIZE, 16384};
        iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW};
        if (srv)
                iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
                                                   DP_GRPC_MAX_CONCURRENT_STREAMS};
        else
                iv[n++] = (nghttp2_settings_entry){NGHTTP2_SETTINGS_ENABLE_PUSH, 0};
        r = nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, n);
        if (r == 0) r = nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW);
        if (r != 0) {
                nghttp2_session_del(c->session);
                return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int dp_grpc_conn_new_server(dp_grpc_server *srv, uint64_t now_usec, dp_grpc_conn **ret) {
        assert_return(srv && ret, -EINVAL);
        return conn_new(srv, now_usec, ret);
}

int dp_grpc_conn_new_client(uint64_t now_usec, dp_grpc_conn **ret) {
        assert_return(ret, -EINVAL);
        return conn_new(NULL, now_usec, ret);
}

/* End every stream (see conn.h). Streams are popped one at a time so the
 * callbacks may finish or cancel any other stream of this connection. */
static void teardown(dp_grpc_conn *c) {
        if (c->tearing_down) return;
        c->tearing_down = true;
        c->dead = true;
        c->pending_head = c->pending_tail = NULL;
        while (c->streams) {
                dp_grpc_call *s = c->streams;
                s->pending = false;
                if (s->server) {
                        bool notify = s->dispatched && s->app_ref && !s->cancel_notified && !s->app_finished;
                        s->closed = true;
                        if (notify) {
                                s->cancel_notified = true;
                                if (s->cancel_fn) s->cancel_fn(s, DP_GRPC_UNAVAILABLE, s->cancel_ud);
                        }
                        if (s->app_ref)
                                unlink_stream(s); /* detached: the app frees it */
                        else
                                call_free(s);
                        continue;
                }
                unlink_stream(s);
                if (!s->cancelled && !s->done) {
                        s->done = true;
                        if (s->on_done)
                                s->on_done((dp_grpc_client_call *)s,
                                           s->local_error ? s->local_status : DP_GRPC_UNAVAILABLE,
                                           s->local_error && s->local_message ? s->local_message : "connection closed",
                                           s->cb_ud);
                }
                call_free(s);
        }
}

dp_grpc_conn *dp_grpc_conn_free(dp_grpc_conn *c) {
        if (!c) return NULL;
        teardown(c);
        nghttp2_session_del(c->session);
        free(c->out);
        free(c);
        return NULL;
}

void dp_grpc_conn_peer_closed(dp_grpc_conn *c) {
        if (!c) return;
        teardown(c);
        c->out_len = c->out_off = 0;
}

void dp_grpc_conn_set_wakeup(dp_grpc_conn *c, dp_grpc_conn_wakeup_fn fn, void *userdata) {
        if (!c) return;
        c->wakeup = fn;
        c->wakeup_ud = userdata;
}

/* ------------------------------------------- empty DATA frame flood */

/* Take one empty DATA frame from the budget (a token bucket:
 * DP_GRPC_EMPTY_DATA_BURST, DP_GRPC_EMPTY_DATA_RATE per second). */
static bool empty_data_allowed(dp_grpc_conn *c) {
        uint64_t per = 1000000u / DP_GRPC_EMPTY_DATA_RATE;
        if (c->now > c->empty_refilled) {
                uint64_t add = (c->now - c->empty_refilled) / per;
                c->empty_budget = (uint32_t)DP_MIN((uint64_t)c->empty_budget + add, (uint64_t)DP_GRPC_EMPTY_DATA_BURST);
                c->empty_refilled += add * per;
        }
        if (c->empty_budget == 0) return false;
        c->empty_budget--;
        return true;
}

/* Follow the frame headers of the peer's bytes and count DATA frames that
 * carry no data (none, or only padding) and do not end their stream. This
 * reads the wire itself rather than nghttp2's callbacks because nghttp2
 * drops frames for closed streams without telling us, and those cost the
 * same. False when the peer is past its budget. */
static bool count_empty_data(dp_grpc_conn *c, const uint8_t *p, size_t n) {
        while (n > 0) {
                if (c->scan_skip) {
                        size_t k = DP_MIN(c->scan_skip, n);
                        p += k;
                        n -= k;
                        c->scan_skip -= k;
                        continue;
                }
                c->scan_hdr[c->scan_have++] = *p++;
                n--;
                const uint8_t *h = c->scan_hdr;
                size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
                bool data = h[3] == NGHTTP2_DATA, padded = data && (h[4] & NGHTTP2_FLAG_PADDED) && len > 0;
                if (c->scan_have < 9 || (c->scan_have == 9 && padded)) continue;
                bool empty = data && !(h[4] & NGHTTP2_FLAG_END_STREAM) && (len == 0 || (padded && h[9] == len - 1));
                c->scan_skip = len - (c->scan_have - 9);
                c->scan_have = 0;
                if (empty && !empty_data_allowed(c)) return false;
        }
        return true;
}

/* ------------------------------------------------------------- I/O */

int dp_grpc_conn_feed(dp_grpc_conn *c, const uint8_t *data, size_t len, uint64_t now_usec) {
        assert_return(c && (data || len == 0), -EINVAL);
        if (c->dead) return -EPIPE;
        c->now = now_usec;
        if (!count_empty_data(c, data, len)) {
                /* as nghttp2 answers rapid resets: GOAWAY, then close */
                c->fatal = true;
                nghttp2_session_terminate_session(c->session, NGHTTP2_ENHANCE_YOUR_CALM);
                dispatch(c);
                return -ENOBUFS;
        }
        ssize_t n = nghttp2_session_mem_recv(c->session, data, len);
        if (n < 0) {
                c->fatal = true;
                nghttp2_session_terminate_session(c->session, NGHTTP2_PROTOCOL_ERROR);
                dispatch(c);
                return n == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
        }
        dispatch(c);
        return 0;
}

int dp_grpc_conn_output(dp_grpc_conn *c, const uint8_t **ret_data, size_t *ret_len) {
        assert_return(c && ret_data && ret_len, -EINVAL);
        int ret = 0;
        if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
        while (!c->dead && c->out_len - c->out_off < OUTPUT_CHUNK) {
                const uint8_t *p;
                ssize_t n = nghttp2_session_mem_send(c->session, &p);
                if (n < 0) {
                        c->fatal = true;
                        ret = n == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
                        break;
                }
                if (n > 0) {
                        if (buf_append(&c->out, &c->out_len, &c->out_cap, p, (size_t)n) < 0) {
                                c->fatal = true;
                                ret = -ENOMEM;
                                break;
                        }
                        continue;
                }
                if (!c->pending_head) break;
                dispatch(c); /* may submit more */
        }
        dispatch(c);
        static const uint8_t nothing[1];
        *ret_data = c->out ? c->out + c->out_off : nothing;
        *ret_len = c->out_len - c->out_off;
        return ret;
}

void dp_grpc_conn_consumed(dp_grpc_conn *c, size_t n) {
        if (!c) return;
        c->out_off += DP_MIN(n, c->out_len - c->out_off);
        if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
}

static bool stream_deadline_active(const dp_grpc_call *s) {
        if (!s->deadline) return false;
        if (s->server) return !s->closed && !s->core_finished && !s->finished;
        return !s->done && !s->cancelled && !s->local_error;
}

void dp_grpc_conn_tick(dp_grpc_conn *c, uint64_t now_usec) {
        if (!c) return;
        c->now = now_usec;
        for (dp_grpc_call *s = c->streams; s; s = s->next) {
                if (!stream_deadline_active(s) || s->deadline > now_usec) continue;
                if (s->server) {
                        s->cancel_status = DP_GRPC_DEADLINE_EXCEEDED;
                        server_fail(s, DP_GRPC_DEADLINE_EXCEEDED, "context deadline exceeded", "200");
                        enqueue(s);
                } else
                        stream_local_error(s, DP_GRPC_DEADLINE_EXCEEDED, "context deadline exceeded");
        }
        dispatch(c);
}

uint64_t dp_grpc_conn_idle_since(const dp_grpc_conn *c) {
        if (!c) return 0;
        for (const dp_grpc_call *s = c->streams; s; s = s->next)
                if (s->server && s->dispatched) return 0;
        return c->last_active ? c->last_active : 1;
}

uint64_t dp_grpc_conn_next_deadline(const dp_grpc_conn *c) {
        uint64_t best = 0;
        if (!c) return 0;
        for (const dp_grpc_call *s = c->streams; s; s = s->next)
                if (stream_deadline_active(s) && (!best || s->deadline < best)) best = s->deadline;
        return best;
}

void dp_grpc_conn_shutdown(dp_grpc_conn *c) {
        if (!c || c->dead || c->draining) return;
        c->draining = true;
        nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(c->session),
                              NGHTTP2_NO_ERROR, NULL, 0);
        wake(c);
}

bool dp_grpc_conn_is_done(const dp_grpc_conn *c) {
        if (!c || c->dead) return true;
        if (c->out_len > c->out_off) return false;
        return !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session);
}

bool dp_grpc_conn_is_draining(const dp_grpc_conn *c) { return !c || c->dead || c->draining || c->fatal; }

size_t dp_grpc_conn_stream_count(const dp_grpc_conn *c) { return c ? c->n_streams : 0; }

/* ------------------------------------------------------------ client */

int dp_grpc_conn_start_call(dp_grpc_conn *c, const char *path, const uint8_t *req, size_t len, uint64_t now_usec,
                            uint64_t timeout_usec, dp_grpc_message_fn on_message, dp_grpc_done_fn on_done,
                            void *userdata, dp_grpc_client_call **ret) {
        assert_return(c && path && path[0] == '/' && (req || len == 0), -EINVAL);
        assert_return(!c->srv, -EINVAL);
        if (dp_grpc_conn_is_draining(c)) return -ENOTCONN;
        if (len > UINT32_MAX - DP_GRPC_PREFIX_LEN) return -E2BIG;
        struct dp_grpc_client_call *cc = calloc(1, sizeof *cc);
        if (!cc) return -ENOMEM;
        dp_grpc_call *s = &cc->s;
        s->grpc_status = -1;
        s->on_message = on_message;
        s->on_done = on_done;
        s->cb_ud = userdata;
        int r = queue_message(s, req, len);
        if (r < 0) {
                free(cc);
                return r;
        }
        char tbuf[16] = "";
        if (timeout_usec) {
                dp_grpc_timeout_format(timeout_usec, tbuf);
                s->deadline = now_usec + timeout_usec;
                if (s->deadline < now_usec) s->deadline = UINT64_MAX;
        }
        nghttp2_nv hdrs[9];
        size_t n = 0;
        hdrs[n++] = (nghttp2_nv)NV(":method", "POST");
        hdrs[n++] = (nghttp2_nv)NV(":scheme", "http");
        hdrs[n++] = (nghttp2_nv)NV(":path", path);
        hdrs[n++] = (nghttp2_nv)NV(":authority", "localhost");
        if (timeout_usec) hdrs[n++] = (nghttp2_nv)NV("grpc-timeout", tbuf);
        hdrs[n++] = (nghttp2_nv)NV("content-type", "application/grpc");
        hdrs[n++] = (nghttp2_nv)NV("user-agent", "grpc-c-devplane/" DP_VERSION);
        hdrs[n++] = (nghttp2_nv)NV("te", "trailers");
        nghttp2_data_provider prd = {.source = {.ptr = NULL}, .read_callback = read_cb};
        int32_t id = nghttp2_submit_request(c->session, NULL, hdrs, n, &prd, s);
        if (id < 0) {
                dp_free_many(s->out, cc);
                return id == NGHTTP2_ERR_NOMEM ? -ENOMEM : -ENOTCONN;
        }
        s->id = id;
        link_stream(c, s);
        if (ret) *ret = cc;
        wake(c);
        return 0;
}

void dp_grpc_client_call_cancel(dp_grpc_client_call *cc) {
        if (!cc) return;
        dp_grpc_call *s = &cc->s;
        if (s->cancelled || s->done) return;
        s->cancelled = true;
        dp_grpc_conn *c = s->conn;
        if (!c) {
                call_free(s);
                return;
        }
        if (c->tearing_down) return;
        if (!s->closed) nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        (void)nghttp2_session_set_stream_user_data(c->session, s->id, NULL);
        enqueue(s);
        wake(c);
}
