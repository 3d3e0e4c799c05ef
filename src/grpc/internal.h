/* SPDX-License-Identifier: Apache-2.0
 *
 * internal.h — structures shared by the core (conn.c) and the glue
 * (server.c, channel.c). Not part of the API.
 */
#pragma once

#include <nghttp2/nghttp2.h>

#include "base/hashmap.h"
#include "grpc/conn.h"

/* Both ends (server.c, channel.c) read a connection the same way: pieces of
 * DP_GRPC_READ_CHUNK bytes (on the stack) fed to the core, and at most
 * DP_GRPC_READ_BUDGET bytes per loop round before other sources get a turn
 * (a fast peer cannot starve the other connections, timers and signals). */
#define DP_GRPC_READ_CHUNK (64u * 1024u)
#define DP_GRPC_READ_BUDGET (1024u * 1024u)

typedef struct dp_grpc_method {
        char *path;
        dp_grpc_kind kind;
        const ProtobufCMessageDescriptor *request_type;
        dp_grpc_handler_fn handler;
        void *userdata;
} dp_grpc_method;

typedef struct dp_grpc_listener dp_grpc_listener;
typedef struct dp_grpc_sconn dp_grpc_sconn;

struct dp_grpc_server {
        dp_hashmap *methods; /* path -> dp_grpc_method* (owned) */
        dp_loop *loop;
        dp_grpc_listener *listeners;
        dp_grpc_sconn *conns;
        size_t n_conns;
        size_t buffered;       /* request bytes held by all its connections */
        size_t n_refused;      /* connections refused at the cap, accept pauses */
        size_t n_evicted;      /* idle connections closed at the cap for a new one */
        uint64_t flood_logged; /* the last warning about a flooding peer */
        dp_grpc_server_limits limits;
        bool shutting_down;
        int busy;            /* depth of our loop callbacks on the stack */
        bool free_requested; /* dp_grpc_server_free() called while busy */
};

const dp_grpc_method *dp_grpc_server_find_method(const dp_grpc_server *srv, const char *path);

/* One HTTP/2 stream: a server call or a client call. */
struct dp_grpc_call {
        dp_grpc_conn *conn; /* NULL once detached from a freed connection */
        int32_t id;
        bool server;
        struct dp_grpc_call *prev, *next;  /* conn->streams */
        struct dp_grpc_call *pending_next; /* conn->pending queue */
        bool pending;

        /* receive side */
        uint8_t *in;
        size_t in_len, in_cap, in_scan; /* in_scan: end of the complete messages */
        size_t n_complete;              /* complete messages in in[0..in_scan) */
        bool remote_closed;             /* END_STREAM received */
        bool closed;                    /* nghttp2 closed the stream */
        uint32_t close_code;
        uint64_t deadline;

        /* send side */
        uint8_t *out;
        size_t out_len, out_off;
        bool data_started, deferred, finished, trailers_submitted;
        int status;
        char *status_message; /* percent-encoded */
        size_t n_sent;

        /* server */
        char *path;
        const dp_grpc_method *method;
        bool bad_method, bad_content_type, bad_timeout, bad_encoding, seen_method, seen_ct;
        ProtobufCMessage *req_msg;
        uint8_t *req;
        size_t req_len;
        bool dispatched, app_ref, app_finished, cancel_notified, core_finished;
        int cancel_status;
        dp_grpc_cancel_fn cancel_fn;
        void *cancel_ud;
        void *userdata;

        /* client */
        dp_grpc_message_fn on_message;
        dp_grpc_done_fn on_done;
        void *cb_ud;
        int http_status;
        bool got_headers, ct_ok, cancelled, done;
        int grpc_status; /* -1 until seen */
        char *grpc_message;
        bool local_error;
        int local_status;
        char *local_message;
};

struct dp_grpc_client_call {
        struct dp_grpc_call s;
};
