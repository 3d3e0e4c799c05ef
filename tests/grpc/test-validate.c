/* SPDX-License-Identifier: Apache-2.0
 * Request validation in the server core, driven by a bare nghttp2 client
 * that can send what our own client never would: other methods and
 * content-types, compressed flags, bad grpc-timeout, grpc-encoding, trailing
 * garbage, two messages on a unary call. */
#include <nghttp2/nghttp2.h>
#include <stdio.h>

#include "grpc/conn.h"
#include "harness.h"

static int pings_to_send, ping_acks;

typedef struct reply {
        char status[8];
        int grpc_status;
        char grpc_message[256];
        uint8_t data[256];
        size_t data_len;
        bool closed;
        uint32_t close_code;
        int header_blocks;
} reply;

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl, const uint8_t *value,
                     size_t vl, uint8_t flags, void *ud) {
        (void)flags;
        (void)ud;
        reply *r = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
        if (!r) return 0;
        if (nl == 7 && !memcmp(name, ":status", 7)) snprintf(r->status, sizeof r->status, "%.*s", (int)vl, value);
        if (nl == 11 && !memcmp(name, "grpc-status", 11)) r->grpc_status = atoi((const char *)value);
        if (nl == 12 && !memcmp(name, "grpc-message", 12))
                snprintf(r->grpc_message, sizeof r->grpc_message, "%.*s", (int)vl, value);
        return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud) {
        (void)ud;
        if (f->hd.type == NGHTTP2_PING && (f->hd.flags & NGHTTP2_FLAG_ACK) &&
            memcmp(f->ping.opaque_data, "\x02\x04\x10\x10\x09\x0e\x07\x07", 8) == 0)
                ping_acks++;
        reply *r = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
        if (r && f->hd.type == NGHTTP2_HEADERS) r->header_blocks++;
        return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d, size_t n, void *ud) {
        (void)flags;
        (void)ud;
        reply *r = nghttp2_session_get_stream_user_data(s, id);
        if (r && r->data_len + n <= sizeof r->data) {
                memcpy(r->data + r->data_len, d, n);
                r->data_len += n;
        }
        return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud) {
        (void)ud;
        reply *r = nghttp2_session_get_stream_user_data(s, id);
        if (r) {
                r->closed = true;
                r->close_code = code;
        }
        return 0;
}

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *ud) {
        (void)s;
        (void)id;
        (void)ud;
        struct {
                const uint8_t *p;
                size_t n;
        } *b = src->ptr;
        size_t k = DP_MIN(len, b->n);
        if (k) {
                memcpy(buf, b->p, k);
                b->p += k;
                b->n -= k;
        }
        if (!b->n) *flags |= NGHTTP2_DATA_FLAG_EOF;
        return (ssize_t)k;
}

static void h_echo(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t n;
        const uint8_t *b = dp_grpc_call_request(call, &n);
        dp_grpc_call_send(call, b, n);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

/* Send one request with the given extra headers and body; run to the end. */
static reply run(const char *method, const char *ctype, const char *extra_name, const char *extra_value,
                 const uint8_t *body, size_t body_len) {
        dp_grpc_server *srv;
        ASSERT_OK(dp_grpc_server_new(&srv));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/t.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL));
        dp_grpc_conn *sc;
        ASSERT_OK(dp_grpc_conn_new_server(srv, 0, &sc));

        nghttp2_session_callbacks *cbs;
        nghttp2_session_callbacks_new(&cbs);
        nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
        nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
        nghttp2_session *cs;
        nghttp2_session_client_new(&cs, cbs, NULL);
        nghttp2_session_callbacks_del(cbs);
        nghttp2_submit_settings(cs, NGHTTP2_FLAG_NONE, NULL, 0);
        /* grpc-go's BDP estimator ping payload */
        static const uint8_t bdp[8] = {0x02, 0x04, 0x10, 0x10, 0x09, 0x0e, 0x07, 0x07};
        ping_acks = 0;
        for (int i = 0; i < pings_to_send; i++)
                nghttp2_submit_ping(cs, NGHTTP2_FLAG_NONE, bdp);

        static reply r;
        memset(&r, 0, sizeof r);
        r.grpc_status = -1;
        nghttp2_nv nv[8];
        size_t n = 0;
#define ADD(a, b) nv[n++] = (nghttp2_nv){(uint8_t *)(a), (uint8_t *)(b), strlen(a), strlen(b), 0}
        ADD(":method", method);
        ADD(":scheme", "http");
        ADD(":path", "/t.T/Echo");
        ADD(":authority", "%2Fvar%2Flib%2Fkubelet%2Fplugins_registry%2Fx-reg.sock");
        if (ctype) ADD("content-type", ctype);
        if (extra_name) ADD(extra_name, extra_value);
        struct {
                const uint8_t *p;
                size_t n;
        } b = {body, body_len};
        nghttp2_data_provider prd = {.source = {.ptr = &b}, .read_callback = body_read};
        ASSERT_TRUE(nghttp2_submit_request(cs, NULL, nv, n, &prd, &r) > 0);
        for (int i = 0; i < 100; i++) {
                const uint8_t *d;
                ssize_t k = nghttp2_session_mem_send(cs, &d);
                bool moved = k > 0;
                if (k > 0) dp_grpc_conn_feed(sc, d, (size_t)k, 0);
                size_t m;
                dp_grpc_conn_output(sc, &d, &m);
                if (m) {
                        nghttp2_session_mem_recv(cs, d, m);
                        dp_grpc_conn_consumed(sc, m);
                        moved = true;
                }
                if (!moved) break;
        }
        nghttp2_session_del(cs);
        dp_grpc_conn_free(sc);
        dp_grpc_server_free(srv);
        return r;
}

static const uint8_t hello[] = {0, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};

TEST(plain_request_works_without_te) {
        reply r = run("POST", "application/grpc+proto", NULL, NULL, hello, sizeof hello);
        ASSERT_STREQ(r.status, "200");
        ASSERT_EQ(r.grpc_status, 0);
        ASSERT_EQ(r.data_len, sizeof hello);
        ASSERT_TRUE(memcmp(r.data, hello, sizeof hello) == 0);
        ASSERT_EQ(r.header_blocks, 2); /* headers, then trailers */
        ASSERT_TRUE(r.closed);
        ASSERT_EQ(r.close_code, 0);
}

TEST(content_type_variants) {
        reply r = run("POST", "application/grpc;charset=utf-8", NULL, NULL, hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, 0);
        r = run("POST", "application/grpcx", NULL, NULL, hello, sizeof hello);
        ASSERT_STREQ(r.status, "415");
        ASSERT_EQ(r.grpc_status, DP_GRPC_INVALID_ARGUMENT);
        r = run("POST", "application/json", NULL, NULL, hello, sizeof hello);
        ASSERT_STREQ(r.status, "415");
        r = run("POST", NULL, NULL, NULL, hello, sizeof hello);
        ASSERT_STREQ(r.status, "415");
}

TEST(method_must_be_post) {
        reply r = run("PUT", "application/grpc", NULL, NULL, hello, sizeof hello);
        ASSERT_STREQ(r.status, "405");
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        ASSERT_EQ(r.header_blocks, 1); /* trailers-only */
}

TEST(compressed_flag_rejected) {
        const uint8_t comp[] = {1, 0, 0, 0, 1, 'x'};
        reply r = run("POST", "application/grpc", NULL, NULL, comp, sizeof comp);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        ASSERT_CONTAINS(r.grpc_message, "compressed");
}

TEST(grpc_encoding_rejected) {
        reply r = run("POST", "application/grpc", "grpc-encoding", "gzip", hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, DP_GRPC_UNIMPLEMENTED);
        r = run("POST", "application/grpc", "grpc-encoding", "identity", hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, DP_GRPC_OK);
}

TEST(bad_timeout) {
        reply r = run("POST", "application/grpc", "grpc-timeout", "10x", hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        r = run("POST", "application/grpc", "grpc-timeout", "123456789S", hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        r = run("POST", "application/grpc", "grpc-timeout", "29999872u", hello, sizeof hello);
        ASSERT_EQ(r.grpc_status, DP_GRPC_OK);
}

TEST(message_framing_errors) {
        const uint8_t two[] = {0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 1, 'b'};
        reply r = run("POST", "application/grpc", NULL, NULL, two, sizeof two);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        const uint8_t trunc[] = {0, 0, 0, 0, 9, 'a'};
        r = run("POST", "application/grpc", NULL, NULL, trunc, sizeof trunc);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        r = run("POST", "application/grpc", NULL, NULL, NULL, 0);
        ASSERT_EQ(r.grpc_status, DP_GRPC_INTERNAL);
        ASSERT_CONTAINS(r.grpc_message, "without a message");
        const uint8_t huge[] = {0, 0xff, 0xff, 0xff, 0xff};
        r = run("POST", "application/grpc", NULL, NULL, huge, sizeof huge);
        ASSERT_EQ(r.grpc_status, DP_GRPC_RESOURCE_EXHAUSTED);
}

TEST(early_reply_resets_open_stream) {
        /* the header block is rejected before the client's END_STREAM: the
         * server answers trailers-only and resets with NO_ERROR */
        reply r = run("POST", "application/json", NULL, NULL, hello, sizeof hello);
        ASSERT_TRUE(r.closed);
        ASSERT_EQ(r.close_code, NGHTTP2_NO_ERROR);
}

TEST(pings_are_answered_never_punished) {
        /* grpc-go sends BDP pings as data arrives; a burst of them must be
         * acknowledged and the call must still succeed */
        pings_to_send = 50;
        reply r = run("POST", "application/grpc", NULL, NULL, hello, sizeof hello);
        pings_to_send = 0;
        ASSERT_EQ(ping_acks, 50);
        ASSERT_EQ(r.grpc_status, DP_GRPC_OK);
        ASSERT_EQ(r.close_code, 0);
}

/* ---- empty DATA frames (issue 21, F12): raw frames, as a hostile peer
 * writes them */

typedef struct bytes {
        uint8_t *p;
        size_t n;
} bytes;

static void put(bytes *b, const void *d, size_t n) {
        b->p = realloc(b->p, b->n + n);
        ASSERT_TRUE(b->p != NULL);
        memcpy(b->p + b->n, d, n);
        b->n += n;
}

static void put_frame(bytes *b, uint8_t type, uint8_t flags, uint32_t sid, const void *payload, size_t len) {
        uint8_t h[9] = {(uint8_t)(len >> 16), (uint8_t)(len >> 8),  (uint8_t)len,        type,        flags,
                        (uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8), (uint8_t)sid};
        put(b, h, sizeof h);
        if (len) put(b, payload, len);
}

/* The preface, SETTINGS, and the header block of an Echo on stream 1 (HPACK
 * literals without indexing) with that content-type. */
static void put_request_start_ct(bytes *b, const char *ctype) {
        put(b, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
        put_frame(b, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
        const char *const hdrs[][2] = {{":method", "POST"},
                                       {":scheme", "http"},
                                       {":path", "/t.T/Echo"},
                                       {":authority", "localhost"},
                                       {"content-type", ctype}};
        bytes blk = {0};
        for (size_t i = 0; i < ELEMENTSOF(hdrs); i++) {
                uint8_t nl = (uint8_t)strlen(hdrs[i][0]), vl = (uint8_t)strlen(hdrs[i][1]);
                put(&blk, "\0", 1);
                put(&blk, &nl, 1);
                put(&blk, hdrs[i][0], nl);
                put(&blk, &vl, 1);
                put(&blk, hdrs[i][1], vl);
        }
        put_frame(b, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 1, blk.p, blk.n);
        free(blk.p);
}

static void put_request_start(bytes *b) { put_request_start_ct(b, "application/grpc"); }

static void put_empty_data(bytes *b, size_t n, bool padded) {
        static const uint8_t pad[4] = {3, 0, 0, 0}; /* pad length 3, then the padding: no data */
        for (size_t i = 0; i < n; i++)
                put_frame(b, NGHTTP2_DATA, padded ? NGHTTP2_FLAG_PADDED : 0, 1, pad, padded ? sizeof pad : 0);
}

typedef struct flood_result {
        int feed;      /* the last dp_grpc_conn_feed() result */
        long goaway;   /* the GOAWAY error code, -1: none */
        bool answered; /* a HEADERS frame came back on stream 1 */
} flood_result;

/* Read everything the server wrote: a GOAWAY's code and whether stream 1
 * got response headers. */
static void scan_output(dp_grpc_conn *sc, flood_result *fr) {
        const uint8_t *d;
        size_t n;
        dp_grpc_conn_output(sc, &d, &n);
        for (size_t off = 0; off + 9 <= n;) {
                size_t len = (size_t)d[off] << 16 | (size_t)d[off + 1] << 8 | d[off + 2];
                uint32_t sid = (uint32_t)d[off + 5] << 24 | (uint32_t)d[off + 6] << 16 | (uint32_t)d[off + 7] << 8 |
                               d[off + 8];
                if (d[off + 3] == NGHTTP2_GOAWAY && len >= 8)
                        fr->goaway = (long)((uint32_t)d[off + 13] << 24 | (uint32_t)d[off + 14] << 16 |
                                            (uint32_t)d[off + 15] << 8 | d[off + 16]);
                if (d[off + 3] == NGHTTP2_HEADERS && sid == 1) fr->answered = true;
                off += 9 + len;
        }
        dp_grpc_conn_consumed(sc, n);
}

/* Feed a server core the steps in order (each at its time), reading its
 * output after each. */
static flood_result feed_steps(const bytes *steps, const uint64_t *at, size_t n) {
        dp_grpc_server *srv;
        ASSERT_OK(dp_grpc_server_new(&srv));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/t.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL));
        dp_grpc_conn *sc;
        ASSERT_OK(dp_grpc_conn_new_server(srv, 0, &sc));
        flood_result fr = {.goaway = -1};
        for (size_t i = 0; i < n && fr.goaway < 0; i++) {
                fr.feed = dp_grpc_conn_feed(sc, steps[i].p, steps[i].n, at[i]);
                scan_output(sc, &fr);
        }
        if (fr.goaway >= 0) ASSERT_TRUE(dp_grpc_conn_is_done(sc)); /* the glue closes it now */
        dp_grpc_conn_free(sc);
        dp_grpc_server_free(srv);
        return fr;
}

static const uint8_t hello_msg[] = {0, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};

TEST(empty_data_flood_gets_goaway) {
        for (int padded = 0; padded <= 1; padded++) {
                bytes b = {0};
                put_request_start(&b);
                put_empty_data(&b, DP_GRPC_EMPTY_DATA_BURST + 1, padded);
                uint64_t t = 0;
                flood_result fr = feed_steps(&b, &t, 1);
                ASSERT_EQ(fr.feed, -ENOBUFS);
                ASSERT_EQ(fr.goaway, NGHTTP2_ENHANCE_YOUR_CALM);
                free(b.p);
        }
}

TEST(empty_data_within_budget_is_served) {
        bytes b = {0};
        put_request_start(&b);
        put_empty_data(&b, DP_GRPC_EMPTY_DATA_BURST, false);
        put_frame(&b, NGHTTP2_DATA, 0, 1, hello_msg, sizeof hello_msg);
        put_frame(&b, NGHTTP2_DATA, NGHTTP2_FLAG_END_STREAM, 1, NULL, 0); /* ends the stream: not counted */
        uint64_t t = 0;
        flood_result fr = feed_steps(&b, &t, 1);
        ASSERT_EQ(fr.goaway, -1);
        ASSERT_TRUE(fr.answered);
        free(b.p);
}

TEST(empty_data_budget_refills) {
        /* the burst at t=0, then DP_GRPC_EMPTY_DATA_RATE more a second later
         * are allowed; one past that is not */
        bytes s[3] = {{0}};
        put_request_start(&s[0]);
        put_empty_data(&s[0], DP_GRPC_EMPTY_DATA_BURST, false);
        put_empty_data(&s[1], DP_GRPC_EMPTY_DATA_RATE, false);
        put_empty_data(&s[2], 1, false);
        uint64_t at[3] = {0, 1000000, 1000000};
        flood_result fr = feed_steps(s, at, 2);
        ASSERT_EQ(fr.goaway, -1);
        fr = feed_steps(s, at, 3);
        ASSERT_EQ(fr.goaway, NGHTTP2_ENHANCE_YOUR_CALM);
        for (size_t i = 0; i < 3; i++)
                free(s[i].p);
}

TEST(empty_data_on_a_reset_stream_counts) {
        /* a request refused at its headers is answered and reset at once;
         * nghttp2 then drops the stream's DATA frames without a callback, so
         * the flood is counted on the wire */
        bytes s[2] = {{0}};
        put_request_start_ct(&s[0], "application/json");
        put_empty_data(&s[1], DP_GRPC_EMPTY_DATA_BURST + 1, false);
        uint64_t at[2] = {0, 0};
        flood_result fr = feed_steps(s, at, 2);
        ASSERT_TRUE(fr.answered);
        ASSERT_EQ(fr.goaway, NGHTTP2_ENHANCE_YOUR_CALM);
        for (size_t i = 0; i < 2; i++)
                free(s[i].p);
}
