/* SPDX-License-Identifier: Apache-2.0
 *
 * grpc.h — gRPC (unary and server-streaming) over cleartext HTTP/2 on unix
 * sockets, wire-compatible with grpc-go as the kubelet uses it
 * (shared/reference/wire-protocols.md section 7). See docs/grpc.md.
 *
 * Pieces:
 *   dp_grpc_server   a method table (full path -> handler) that can also
 *                    listen on unix sockets through a dp_loop;
 *   dp_grpc_call     one incoming RPC on the server side; the handler (or
 *                    anyone later) sends messages and finishes it;
 *   dp_grpc_channel  one client connection to a unix socket through a
 *                    dp_loop; starts calls (dp_grpc_client_call), async or
 *                    synchronously (dp_grpc_channel_call_sync*).
 * The sans-I/O HTTP/2 connection both build on is in conn.h.
 *
 * Threads: none. Every callback runs from the dp_loop (or, with the bare
 * sans-I/O core, from the dp_grpc_conn_* function that was called).
 * Errors: negative errno (macros.h); gRPC outcomes are status codes below.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/macros.h"
#include "grpc/loop.h"

/* gRPC status codes (wire-protocols.md 7.5). */
enum {
        DP_GRPC_OK = 0,
        DP_GRPC_CANCELLED = 1,
        DP_GRPC_UNKNOWN = 2,
        DP_GRPC_INVALID_ARGUMENT = 3,
        DP_GRPC_DEADLINE_EXCEEDED = 4,
        DP_GRPC_NOT_FOUND = 5,
        DP_GRPC_ALREADY_EXISTS = 6,
        DP_GRPC_PERMISSION_DENIED = 7,
        DP_GRPC_RESOURCE_EXHAUSTED = 8,
        DP_GRPC_FAILED_PRECONDITION = 9,
        DP_GRPC_ABORTED = 10,
        DP_GRPC_OUT_OF_RANGE = 11,
        DP_GRPC_UNIMPLEMENTED = 12,
        DP_GRPC_INTERNAL = 13,
        DP_GRPC_UNAVAILABLE = 14,
        DP_GRPC_DATA_LOSS = 15,
        DP_GRPC_UNAUTHENTICATED = 16,
};
/* "OK", "CANCELLED", ...; "UNKNOWN_STATUS" outside 0..16. */
const char *dp_grpc_status_name(int status);

/* grpc-go's default receive cap, both directions (7.7). */
#define DP_GRPC_MAX_RECV_MESSAGE (4u * 1024u * 1024u)
/* A server stream whose queued, unsent output passes this gets -ENOBUFS from
 * dp_grpc_call_send() (a peer that stopped reading). */
#define DP_GRPC_MAX_QUEUED_OUTPUT (64u * 1024u * 1024u)

/* Request bytes a connection buffers across its streams before a stream
 * that needs more gets RESOURCE_EXHAUSTED (many streams x 4 MiB otherwise):
 * two requests of the largest size. */
#define DP_GRPC_MAX_CONN_BUFFERED (2u * (DP_GRPC_MAX_RECV_MESSAGE + 5u))
/* The same across all connections of one server, so half-sent requests on
 * many connections hold at most this much of a daemon's memory. */
#define DP_GRPC_MAX_SERVER_BUFFERED (32u * 1024u * 1024u)
/* Connections one server keeps open (all its listeners together). At the
 * cap a new one replaces the connection idle longest (no call in progress);
 * when every one has a call in progress it is accepted and closed at once.
 * The kubelet holds one or two per socket. */
#define DP_GRPC_MAX_SERVER_CONNECTIONS 64u
/* A server connection with no call in progress for this long (never sent a
 * whole request, or its last call ended that long ago) gets GOAWAY and is
 * closed; grpc-go clients reconnect on their next call. */
#define DP_GRPC_IDLE_TIMEOUT_USEC (30ull * 1000 * 1000)
/* A server connection that is done (GOAWAY sent, no stream left) shuts its
 * writing side down and reads until the peer closes, at most this long,
 * before it closes: a close with the peer still writing (a WINDOW_UPDATE,
 * a PING ack) fails the peer's write with EPIPE, and grpc's core then fails
 * the streams whose trailers it has not yet read. As nginx's lingering
 * close and Go's http2 server do. */
#define DP_GRPC_LINGER_USEC (1000ull * 1000)
/* When accept(2) fails for want of file descriptors (EMFILE, ENFILE) or
 * memory, a listener stops accepting for this long instead of spinning. */
#define DP_GRPC_ACCEPT_PAUSE_USEC (100ull * 1000)
/* SETTINGS_MAX_CONCURRENT_STREAMS a server advertises. grpc-go advertises
 * none; the kubelet opens a handful, so this only bounds a hostile peer. */
#define DP_GRPC_MAX_CONCURRENT_STREAMS 1024u
/* DATA frames with no payload and no END_STREAM carry nothing: a peer may
 * send this many in a burst, refilled at DP_GRPC_EMPTY_DATA_RATE per
 * second; past that the connection gets GOAWAY(ENHANCE_YOUR_CALM). The
 * numbers are nghttp2's for rapid resets (1000, 33/s); grpc-go never sends
 * an empty DATA frame without END_STREAM. */
#define DP_GRPC_EMPTY_DATA_BURST 1000u
#define DP_GRPC_EMPTY_DATA_RATE 33u
/* Registering on a unix socket that has just appeared (kubelet.sock for the
 * agent, a DRA driver's registration socket for the node): the file exists
 * from bind(), a moment before listen(), so a refused connection is retried
 * with doubling delays, DP_GRPC_SOCKET_RETRY_FIRST_USEC << try, for
 * DP_GRPC_SOCKET_RETRY_MAX tries (100 us up to 3.3 s, 6.5 s in all: enough
 * for a loaded node's gap between the two calls, short enough that a socket
 * nobody serves is left to the next inotify event within seconds). */
#define DP_GRPC_SOCKET_RETRY_FIRST_USEC 100ull
#define DP_GRPC_SOCKET_RETRY_MAX 16u
static inline uint64_t dp_grpc_socket_retry_delay(unsigned tries) { return DP_GRPC_SOCKET_RETRY_FIRST_USEC << tries; }

typedef struct dp_grpc_server dp_grpc_server;
typedef struct dp_grpc_call dp_grpc_call;
typedef struct dp_grpc_channel dp_grpc_channel;
typedef struct dp_grpc_client_call dp_grpc_client_call;

typedef enum dp_grpc_kind {
        DP_GRPC_UNARY,            /* exactly one response message, then status */
        DP_GRPC_SERVER_STREAMING, /* zero or more response messages, then status */
} dp_grpc_kind;

/* ---------------------------------------------------------------- server */

/* A handler runs once per RPC after the whole request (one message and the
 * client's END_STREAM) has arrived and, when the method was registered with
 * a request type, decoded. The handler receives one reference to the call,
 * which the application must give back exactly once with
 * dp_grpc_call_finish() / dp_grpc_call_reply_msg() — in the handler or at any
 * later time (keep the pointer for a stream such as ListAndWatch). */
typedef void (*dp_grpc_handler_fn)(dp_grpc_call *call, void *userdata);

int dp_grpc_server_new(dp_grpc_server **ret);
/* Shuts every connection down hard (calls still held by the application get
 * their cancel callback with UNAVAILABLE and stay valid until finished),
 * closes listeners and unlinks the socket paths they created. Safe to call
 * from any callback of this server: listeners close at once, no handler runs
 * any more, and the rest is released when that callback returns. */
dp_grpc_server *dp_grpc_server_free(dp_grpc_server *srv);
DEFINE_FREEP(dp_grpc_server, dp_grpc_server_free)

/* Register a method by its full path ("/v1beta1.DevicePlugin/Allocate"; the
 * string is copied). request_type: the protobuf-c descriptor of the request
 * (then an undecodable request gets INTERNAL and the handler is not run), or
 * NULL for raw bytes. Returns 0, -EEXIST, -EINVAL, -ENOMEM. Unregistered
 * paths get UNIMPLEMENTED. */
int dp_grpc_server_add_method(dp_grpc_server *srv, const char *path, dp_grpc_kind kind,
                              const ProtobufCMessageDescriptor *request_type, dp_grpc_handler_fn handler,
                              void *userdata);

/* Listen on a unix socket path through loop l: a stale socket file at path is
 * removed first (-EEXIST if path exists and is not a socket), the socket is
 * chmod'ed to mode (e.g. 0600; 0 leaves the umask's result). Several
 * listeners per server are allowed; all share the method table. */
int dp_grpc_server_listen_unix(dp_grpc_server *srv, dp_loop *l, const char *path, mode_t mode);
/* Graceful stop: close the listeners (and unlink their paths), send GOAWAY on
 * every connection; in-flight calls may still finish, and each connection
 * closes once its streams are done (on a later loop round; safe to call from
 * any callback). Streams the application never finishes
 * (e.g. ListAndWatch) keep their connection open: finish them. */
void dp_grpc_server_shutdown(dp_grpc_server *srv);
/* Limits of one server (defaults: the DP_GRPC_* constants above). Tests and
 * daemons with other needs change them before listening. */
typedef struct dp_grpc_server_limits {
        size_t max_connections;     /* DP_GRPC_MAX_SERVER_CONNECTIONS */
        uint64_t idle_timeout_usec; /* DP_GRPC_IDLE_TIMEOUT_USEC; 0: none */
        uint64_t accept_pause_usec; /* DP_GRPC_ACCEPT_PAUSE_USEC */
} dp_grpc_server_limits;
void dp_grpc_server_get_limits(const dp_grpc_server *srv, dp_grpc_server_limits *ret);
int dp_grpc_server_set_limits(dp_grpc_server *srv, const dp_grpc_server_limits *limits);
/* Connections refused at the cap and accept pauses so far (for tests and
 * metrics). */
size_t dp_grpc_server_refused_count(const dp_grpc_server *srv);
/* Idle connections closed at the cap to let a new one in. */
size_t dp_grpc_server_evicted_count(const dp_grpc_server *srv);
/* Open connections (accepted and not yet closed). */
size_t dp_grpc_server_connection_count(const dp_grpc_server *srv);

/* --------------------------------------------------------- a server call */

/* The :path of the call ("/v1beta1.DevicePlugin/ListAndWatch"). */
const char *dp_grpc_call_path(const dp_grpc_call *call);
/* The raw request message (valid while the call is held). */
const uint8_t *dp_grpc_call_request(const dp_grpc_call *call, size_t *ret_len);
/* The decoded request when the method has a request type, else NULL. Owned
 * by the call. */
const ProtobufCMessage *dp_grpc_call_request_msg(const dp_grpc_call *call);
/* The call's deadline from grpc-timeout (the now_usec clock the connection
 * is fed with), or 0 when the client set none. */
uint64_t dp_grpc_call_deadline(const dp_grpc_call *call);
/* False once the stream is gone (client cancelled, deadline passed,
 * connection closed); sending is then pointless and returns -ECANCELED. */
bool dp_grpc_call_is_alive(const dp_grpc_call *call);
void dp_grpc_call_set_userdata(dp_grpc_call *call, void *userdata);
void *dp_grpc_call_get_userdata(const dp_grpc_call *call);

/* Called at most once, when the stream ends before the application finished
 * the call: status is CANCELLED (client RST_STREAM), DEADLINE_EXCEEDED (the
 * core already replied so) or UNAVAILABLE (connection closed, server freed).
 * Runs from the loop; the call stays valid, and the application must still
 * release it with dp_grpc_call_finish() (from the callback is fine). */
typedef void (*dp_grpc_cancel_fn)(dp_grpc_call *call, int status, void *userdata);
void dp_grpc_call_set_cancel_handler(dp_grpc_call *call, dp_grpc_cancel_fn fn, void *userdata);

/* Queue one response message (copied). Returns 0; -ECANCELED when the stream
 * is gone; -EINVAL on a unary call that already has its message, or after
 * finish; -ENOBUFS past DP_GRPC_MAX_QUEUED_OUTPUT; -ENOMEM. Output leaves on
 * the next loop round. */
int dp_grpc_call_send(dp_grpc_call *call, const uint8_t *msg, size_t len);
int dp_grpc_call_send_msg(dp_grpc_call *call, const ProtobufCMessage *msg);
/* End the call with status (DP_GRPC_*) and an optional message (UTF-8, sent
 * percent-encoded as grpc-message), and release the application's reference:
 * call is invalid afterwards. A unary call finished with OK but without a
 * message gets INTERNAL instead (grpc-go clients would fail anyway).
 * Always releases; returns 0, or -ECANCELED if the stream was already gone
 * (nothing sent). */
int dp_grpc_call_finish(dp_grpc_call *call, int status, const char *message);
int dp_grpc_call_finishf(dp_grpc_call *call, int status, const char *fmt, ...) _printf_(3, 4);
/* Unary convenience: send msg and finish with OK (on a packing failure,
 * finish with INTERNAL). Always releases the call. */
int dp_grpc_call_reply_msg(dp_grpc_call *call, const ProtobufCMessage *msg);

/* The open calls of one server-streaming watch (the device plugin's
 * ListAndWatch, the DRA driver's NodeWatchResources): every new message goes
 * to each of them. The set holds the application's references: a call leaves
 * it when it is cancelled (the owner's cancel handler removes it), when a
 * send fails, or when the set is finished. Zero-initialise; release the
 * array with dp_grpc_streams_done() after dp_grpc_streams_finish(). */
typedef struct dp_grpc_streams {
        dp_grpc_call **calls;
        size_t n, cap;
} dp_grpc_streams;

/* 0, or -ENOMEM (the call is not added; the caller finishes it). */
int dp_grpc_streams_add(dp_grpc_streams *s, dp_grpc_call *call);
/* Forget call (nothing when it is not in the set); does not finish it. */
void dp_grpc_streams_remove(dp_grpc_streams *s, dp_grpc_call *call);
/* Send msg to every call, or only to `only` when it is not NULL. A call
 * that cannot take it is removed and finished with UNAVAILABLE and `why`.
 * Returns how many were dropped so. */
size_t dp_grpc_streams_send(dp_grpc_streams *s, dp_grpc_call *only, const uint8_t *msg, size_t len, const char *why);
/* Finish every call with status and message, and empty the set. */
void dp_grpc_streams_finish(dp_grpc_streams *s, int status, const char *message);
void dp_grpc_streams_done(dp_grpc_streams *s);

/* ---------------------------------------------------------------- client */

/* One response message (borrowed for the callback's duration). */
typedef void (*dp_grpc_message_fn)(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *userdata);
/* The call's outcome; message is the decoded grpc-message ("" if none).
 * Called exactly once unless the call was cancelled with
 * dp_grpc_client_call_cancel(); cc is freed right after it returns. */
typedef void (*dp_grpc_done_fn)(dp_grpc_client_call *cc, int status, const char *message, void *userdata);
/* Called when a channel's connection ends (EOF, error, GOAWAY drained),
 * after the pending calls got their done callbacks. */
typedef void (*dp_grpc_channel_closed_fn)(dp_grpc_channel *ch, void *userdata);

/* Connect to a unix socket path (connect(2) on a unix socket completes at
 * once; it never blocks the loop). Returns 0, -ENOENT (no socket),
 * -ECONNREFUSED (nobody listening), -EAGAIN (the server's backlog is full:
 * retry later), -ENAMETOOLONG, -errno. The HTTP/2 preface and SETTINGS go
 * out on the next loop round. */
int dp_grpc_channel_connect_unix(dp_loop *l, const char *path, dp_grpc_channel **ret);
/* Close the connection; pending calls get their done callback with
 * UNAVAILABLE first. Safe to call from any callback of this channel (the
 * memory is released once that callback returns). */
dp_grpc_channel *dp_grpc_channel_free(dp_grpc_channel *ch);
DEFINE_FREEP(dp_grpc_channel, dp_grpc_channel_free)
bool dp_grpc_channel_is_connected(const dp_grpc_channel *ch);
void dp_grpc_channel_set_closed_handler(dp_grpc_channel *ch, dp_grpc_channel_closed_fn fn, void *userdata);

/* Start a call: path is the full method path, req the serialized request
 * (copied), timeout_usec 0 for no deadline (else sent as grpc-timeout and
 * enforced locally: DEADLINE_EXCEEDED). on_message may be NULL. The call
 * pointer (optional *ret) is valid until on_done returns. Returns 0,
 * -ENOTCONN (connection gone or draining after GOAWAY), -EINVAL, -ENOMEM,
 * -ENOBUFS (request over DP_GRPC_MAX_QUEUED_OUTPUT). Safe from any callback,
 * including this channel's own. */
int dp_grpc_channel_start_call(dp_grpc_channel *ch, const char *path, const uint8_t *req, size_t len,
                               uint64_t timeout_usec, dp_grpc_message_fn on_message, dp_grpc_done_fn on_done,
                               void *userdata, dp_grpc_client_call **ret);
/* Cancel: RST_STREAM(CANCEL) to the server, no more callbacks, cc freed. */
void dp_grpc_client_call_cancel(dp_grpc_client_call *cc);

/* Outcome of a synchronous call. */
typedef struct dp_grpc_reply {
        int status;    /* DP_GRPC_* */
        char *message; /* decoded grpc-message (NULL only after OOM) */
        uint8_t *data; /* the (last) response message, or NULL */
        size_t len;
        ProtobufCMessage *msg; /* decoded data when a reply type was given */
} dp_grpc_reply;
#define DP_GRPC_REPLY_INIT                                                                                             \
        { 0, NULL, NULL, 0, NULL }
void dp_grpc_reply_done(dp_grpc_reply *r);
static inline void dp_grpc_reply_donep(dp_grpc_reply *r) { dp_grpc_reply_done(r); }
#define _cleanup_grpc_reply_ _cleanup_(dp_grpc_reply_donep)

/* Run the channel's loop (dispatching every other source too, so a server on
 * the same loop keeps answering) until the call completes. ret is always
 * filled (after dp_grpc_reply_done() of its old content); local failures
 * show up as statuses (no connection: UNAVAILABLE). Returns 0 when status is
 * OK (and, with reply_type, the reply decoded), else a negative errno for
 * the caller's convenience: -ETIMEDOUT (DEADLINE_EXCEEDED), -ENOTCONN
 * (UNAVAILABLE), -EBADMSG (reply undecodable: status set to INTERNAL),
 * -EREMOTEIO (any other status), -EDEADLK (called from inside a callback of
 * this same channel, where the reply could never be dispatched: use
 * dp_grpc_channel_start_call there). err (may be NULL) gets
 * "<path>: <STATUS_NAME>: <message>". Without a timeout it waits as long as
 * the server takes. */
int dp_grpc_channel_call_sync(dp_grpc_channel *ch, const char *path, const uint8_t *req, size_t len,
                              uint64_t timeout_usec, dp_grpc_reply *ret, dp_error *err);
int dp_grpc_channel_call_sync_msg(dp_grpc_channel *ch, const char *path, const ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *reply_type, uint64_t timeout_usec,
                                  dp_grpc_reply *ret, dp_error *err);
