/* SPDX-License-Identifier: Apache-2.0
 *
 * conn.h — the sans-I/O gRPC-over-HTTP/2 connection core (nghttp2 session
 * plus gRPC framing). No sockets, clocks or globals: bytes go in with
 * dp_grpc_conn_feed(), bytes to write come out of dp_grpc_conn_output(), and
 * time is passed in (microseconds on any monotonic clock; the I/O glue uses
 * CLOCK_MONOTONIC). The unix-socket glue (server.c, channel.c), the unit
 * tests (two cores wired back to back) and the fuzzers all drive this.
 *
 * Callbacks into the application (server handlers, cancel handlers, client
 * message/done callbacks, the wakeup) run from inside dp_grpc_conn_feed(),
 * dp_grpc_conn_output(), dp_grpc_conn_tick() and dp_grpc_conn_free(), never
 * from inside nghttp2. They may start, send on, finish or cancel calls of
 * this connection, but must not free the connection itself.
 */
#pragma once

#include "grpc/grpc.h"

typedef struct dp_grpc_conn dp_grpc_conn;

/* Server role: requests are matched against srv's method table (srv must
 * outlive the connection). The server's SETTINGS are queued at once, so
 * they are the first bytes of dp_grpc_conn_output(). */
int dp_grpc_conn_new_server(dp_grpc_server *srv, uint64_t now_usec, dp_grpc_conn **ret);
/* Client role: the connection preface and SETTINGS are queued at once. */
int dp_grpc_conn_new_client(uint64_t now_usec, dp_grpc_conn **ret);
/* Ends every stream: server calls held by the application get their cancel
 * callback (UNAVAILABLE) and are detached; client calls get on_done with
 * UNAVAILABLE. */
dp_grpc_conn *dp_grpc_conn_free(dp_grpc_conn *c);
DEFINE_FREEP(dp_grpc_conn, dp_grpc_conn_free)

/* Bytes read from the peer. Returns 0, or -EPROTO when the peer broke HTTP/2
 * so badly the connection is over (a GOAWAY may still be queued: write what
 * dp_grpc_conn_output() gives, then close), -ENOBUFS likewise when it sent
 * more empty DATA frames than DP_GRPC_EMPTY_DATA_BURST allows (GOAWAY
 * ENHANCE_YOUR_CALM), -ENOMEM. */
int dp_grpc_conn_feed(dp_grpc_conn *c, const uint8_t *data, size_t len, uint64_t now_usec);
/* Bytes waiting to be written (points into the connection; valid until the
 * next dp_grpc_conn_* call). *ret_len is 0 when nothing is pending. */
int dp_grpc_conn_output(dp_grpc_conn *c, const uint8_t **ret_data, size_t *ret_len);
/* n bytes of the last output were written. */
void dp_grpc_conn_consumed(dp_grpc_conn *c, size_t n);
/* Expire deadlines up to now_usec (server: reply DEADLINE_EXCEEDED; client:
 * RST_STREAM(CANCEL) and on_done(DEADLINE_EXCEEDED)). */
void dp_grpc_conn_tick(dp_grpc_conn *c, uint64_t now_usec);
/* A server connection with no call in progress (none dispatched to the
 * application, or all of them ended) is idle: the time it became so (when it
 * was opened, or when its last call ended), in the clock of feed/tick; 0
 * while a call is in progress. A half-received request does not count as
 * progress, so a peer that never sends a whole request stays idle. */
uint64_t dp_grpc_conn_idle_since(const dp_grpc_conn *c);
/* Earliest pending deadline, 0 when none. */
uint64_t dp_grpc_conn_next_deadline(const dp_grpc_conn *c);
/* The peer is gone (EOF or socket error): every stream ends as in
 * dp_grpc_conn_free(), and the connection is done. */
void dp_grpc_conn_peer_closed(dp_grpc_conn *c);
/* Graceful shutdown: GOAWAY(NO_ERROR) with the last processed stream id;
 * streams in flight may finish; new ones are refused. */
void dp_grpc_conn_shutdown(dp_grpc_conn *c);
/* True when nothing more will be read or written: close the socket. */
bool dp_grpc_conn_is_done(const dp_grpc_conn *c);
/* True after GOAWAY was sent or received (no new calls). */
bool dp_grpc_conn_is_draining(const dp_grpc_conn *c);
/* Active streams. */
size_t dp_grpc_conn_stream_count(const dp_grpc_conn *c);

/* fn runs whenever output or a new deadline appears outside feed/output/tick
 * (e.g. dp_grpc_call_send() from a timer): the glue should then arrange to
 * call dp_grpc_conn_output() and re-read dp_grpc_conn_next_deadline(). */
typedef void (*dp_grpc_conn_wakeup_fn)(dp_grpc_conn *c, void *userdata);
void dp_grpc_conn_set_wakeup(dp_grpc_conn *c, dp_grpc_conn_wakeup_fn fn, void *userdata);

/* Client role: start a call (see dp_grpc_channel_start_call for the
 * contract); now_usec anchors timeout_usec. -ENOTCONN when draining/done,
 * -EINVAL on a server connection. */
int dp_grpc_conn_start_call(dp_grpc_conn *c, const char *path, const uint8_t *req, size_t len, uint64_t now_usec,
                            uint64_t timeout_usec, dp_grpc_message_fn on_message, dp_grpc_done_fn on_done,
                            void *userdata, dp_grpc_client_call **ret);
