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
