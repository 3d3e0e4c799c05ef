/* SPDX-License-Identifier: Apache-2.0
 * The sans-I/O core: a server connection and a client connection wired back
 * to back in memory, time passed by hand. */
#include "grpc/conn.h"
#include "grpc/wire.h"
#include "harness.h"
#include "proto/proto.h"

/* Move bytes both ways until neither side has anything to say. */
static void pump(dp_grpc_conn *a, dp_grpc_conn *b, uint64_t now) {
        for (int i = 0; i < 100000; i++) {
                bool moved = false;
                dp_grpc_conn *from[2] = {a, b}, *to[2] = {b, a};
                for (int k = 0; k < 2; k++) {
                        const uint8_t *d;
                        size_t n;
                        dp_grpc_conn_output(from[k], &d, &n);
                        if (!n) continue;
                        uint8_t *copy = malloc(n);
                        memcpy(copy, d, n);
                        dp_grpc_conn_consumed(from[k], n);
                        dp_grpc_conn_feed(to[k], copy, n, now);
                        free(copy);
                        moved = true;
                }
                if (!moved) return;
        }
        DP_FAIL("pump did not settle");
}

typedef struct result {
        int done;
        int status;
        char message[512];
        int n_msgs;
        uint8_t last[256];
        size_t last_len;
        size_t total_len;
} result;

static void on_msg(dp_grpc_client_call *cc, const uint8_t *m, size_t len, void *ud) {
        (void)cc;
        result *r = ud;
        r->n_msgs++;
        r->total_len += len;
        r->last_len = len;
        memcpy(r->last, m, DP_MIN(len, sizeof r->last));
}

static void on_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        result *r = ud;
        r->done++;
        r->status = status;
        snprintf(r->message, sizeof r->message, "%s", message);
}

/* ---- handlers */

static void h_echo(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t len;
        const uint8_t *req = dp_grpc_call_request(call, &len);
        uint8_t out[256];
        for (size_t i = 0; i < len && i < sizeof out; i++)
                out[i] = req[len - 1 - i];
        ASSERT_OK(dp_grpc_call_send(call, out, DP_MIN(len, sizeof out)));
        ASSERT_OK(dp_grpc_call_finish(call, DP_GRPC_OK, NULL));
}

static void h_allocate(dp_grpc_call *call, void *ud) {
        (void)ud;
        const V1beta1__AllocateRequest *req = (const V1beta1__AllocateRequest *)dp_grpc_call_request_msg(call);
        ASSERT_TRUE(req);
        ASSERT_EQ(req->n_container_requests, 1);
        ASSERT_EQ(req->container_requests[0]->n_devices_ids, 2);
        V1beta1__ContainerAllocateResponse cr = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        V1beta1__ContainerAllocateResponse__EnvsEntry env = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
        env.key = "NVIDIA_VISIBLE_DEVICES";
        char val[128];
        snprintf(val, sizeof val, "%s,%s", req->container_requests[0]->devices_ids[0],
                 req->container_requests[0]->devices_ids[1]);
        env.value = val;
        V1beta1__ContainerAllocateResponse__EnvsEntry *envs[] = {&env};
        cr.n_envs = 1;
        cr.envs = envs;
        V1beta1__ContainerAllocateResponse *crs[] = {&cr};
        V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
        resp.n_container_responses = 1;
        resp.container_responses = crs;
        ASSERT_OK(dp_grpc_call_reply_msg(call, &resp.base));
}

static void h_fail(dp_grpc_call *call, void *ud) {
        (void)ud;
        ASSERT_OK(dp_grpc_call_finish(call, DP_GRPC_FAILED_PRECONDITION,
                                      "device gpu-0 is 100% \xc3\xbcnhealthy\nsee log"));
}

static void h_big(dp_grpc_call *call, void *ud) {
        size_t n = (size_t)(uintptr_t)ud;
        uint8_t *b = calloc(1, n);
        ASSERT_OK(dp_grpc_call_send(call, b, n));
        free(b);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

/* Streaming: the test keeps the calls and pushes later. */
static dp_grpc_call *held[64];
static int n_held;
static int cancel_status[64];
static int n_cancel;

static void on_cancel(dp_grpc_call *call, int status, void *ud) {
        (void)ud;
        cancel_status[n_cancel++] = status;
        for (int i = 0; i < n_held; i++)
                if (held[i] == call) held[i] = NULL;
        dp_grpc_call_finish(call, DP_GRPC_CANCELLED, NULL);
}

static void h_hold(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_call_set_cancel_handler(call, on_cancel, NULL);
        held[n_held++] = call;
}

static dp_grpc_server *make_server(void) {
        dp_grpc_server *srv;
        ASSERT_OK(dp_grpc_server_new(&srv));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/Allocate", DP_GRPC_UNARY,
                                            &v1beta1__allocate_request__descriptor, h_allocate, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Fail", DP_GRPC_UNARY, NULL, h_fail, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Watch", DP_GRPC_SERVER_STREAMING, NULL, h_hold, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Hold", DP_GRPC_UNARY, NULL, h_hold, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Big", DP_GRPC_UNARY, NULL, h_big,
                                            (void *)(uintptr_t)(DP_GRPC_MAX_RECV_MESSAGE + 1)));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Max", DP_GRPC_UNARY, NULL, h_big,
                                            (void *)(uintptr_t)DP_GRPC_MAX_RECV_MESSAGE));
        ASSERT_EQ(dp_grpc_server_add_method(srv, "/test.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL), -EEXIST);
        return srv;
}

typedef struct pair {
        dp_grpc_server *srv;
        dp_grpc_conn *s, *c;
} pair;

static pair make_pair(void) {
        pair p;
        p.srv = make_server();
        ASSERT_OK(dp_grpc_conn_new_server(p.srv, 1000, &p.s));
        ASSERT_OK(dp_grpc_conn_new_client(1000, &p.c));
        return p;
}

static void free_pair(pair *p) {
        p->c = dp_grpc_conn_free(p->c);
        p->s = dp_grpc_conn_free(p->s);
        p->srv = dp_grpc_server_free(p->srv);
}

TEST(unary_raw) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", (const uint8_t *)"abc", 3, 1000, 0, on_msg, on_done, &r,
                                          NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.done, 1);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ASSERT_EQ(r.n_msgs, 1);
        ASSERT_EQ(r.last_len, 3);
        ASSERT_TRUE(memcmp(r.last, "cba", 3) == 0);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.c), 0);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.s), 0);
        free_pair(&p);
}

TEST(unary_empty_request) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ASSERT_EQ(r.n_msgs, 1);
        ASSERT_EQ(r.last_len, 0);
        free_pair(&p);
}

TEST(unary_protobuf) {
        pair p = make_pair();
        result r = {0};
        char *ids[] = {"gpu-0", "gpu-1"};
        V1beta1__ContainerAllocateRequest creq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        creq.n_devices_ids = 2;
        creq.devices_ids = ids;
        V1beta1__ContainerAllocateRequest *creqs[] = {&creq};
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        req.n_container_requests = 1;
        req.container_requests = creqs;
        uint8_t *data;
        size_t len;
        ASSERT_OK(dp_proto_pack(&req.base, &data, &len));
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/v1beta1.DevicePlugin/Allocate", data, len, 1000, 0, on_msg, on_done,
                                          &r, NULL));
        free(data);
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ProtobufCMessage *m;
        ASSERT_OK(dp_proto_unpack(&v1beta1__allocate_response__descriptor, r.last, r.last_len, &m));
        V1beta1__AllocateResponse *resp = (V1beta1__AllocateResponse *)m;
        ASSERT_EQ(resp->n_container_responses, 1);
        ASSERT_STREQ(resp->container_responses[0]->envs[0]->value, "gpu-0,gpu-1");
        protobuf_c_message_free_unpacked(m, NULL);
        free_pair(&p);
}

TEST(undecodable_request_is_internal) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/v1beta1.DevicePlugin/Allocate", (const uint8_t *)"\x0a\x05", 2, 1000,
                                          0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_INTERNAL);
        ASSERT_EQ(r.n_msgs, 0);
        free_pair(&p);
}

/* A device id with a NUL byte ("gpu-0\0x") would reach the handler as
 * "gpu-0": refused as INVALID_ARGUMENT naming the field; so is invalid UTF-8. */
TEST(nul_or_bad_utf8_in_a_string_is_invalid_argument) {
        static const struct {
                const char *bytes;
                size_t len;
                const char *why;
        } cases[] = {
                {"\x0a\x09\x0a\x07gpu-0\0x", 11, "devices_ids contains a NUL byte"},
                {"\x0a\x08\x0a\x06gpu-\xff\x30", 10, "devices_ids contains invalid UTF-8"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                pair p = make_pair();
                result r = {0};
                ASSERT_OK(dp_grpc_conn_start_call(p.c, "/v1beta1.DevicePlugin/Allocate", (const uint8_t *)cases[i].bytes,
                                                  cases[i].len, 1000, 0, on_msg, on_done, &r, NULL));
                pump(p.c, p.s, 1000);
                ASSERT_EQ(r.status, DP_GRPC_INVALID_ARGUMENT);
                ASSERT_CONTAINS(r.message, "v1beta1.ContainerAllocateRequest.");
                ASSERT_CONTAINS(r.message, cases[i].why);
                ASSERT_EQ(r.n_msgs, 0);
                free_pair(&p);
        }
}

TEST(error_status_percent_encoded) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Fail", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_FAILED_PRECONDITION);
        ASSERT_STREQ(r.message, "device gpu-0 is 100% \xc3\xbcnhealthy\nsee log");
        ASSERT_EQ(r.n_msgs, 0);
        free_pair(&p);
}

TEST(unknown_method) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/v1beta1.DevicePlugin/Nope", NULL, 0, 1000, 0, on_msg, on_done, &r,
                                          NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_UNIMPLEMENTED);
        ASSERT_CONTAINS(r.message, "/v1beta1.DevicePlugin/Nope");
        free_pair(&p);
}

TEST(server_streaming_push_later) {
        pair p = make_pair();
        n_held = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(n_held, 1);
        for (int i = 0; i < 3; i++) {
                char m[16];
                snprintf(m, sizeof m, "list-%d", i);
                ASSERT_OK(dp_grpc_call_send(held[0], (const uint8_t *)m, strlen(m)));
                pump(p.c, p.s, 1000);
                ASSERT_EQ(r.n_msgs, i + 1);
                ASSERT_TRUE(memcmp(r.last, m, strlen(m)) == 0);
        }
        ASSERT_EQ(r.done, 0);
        ASSERT_OK(dp_grpc_call_finish(held[0], DP_GRPC_OK, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.done, 1);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.s), 0);
        free_pair(&p);
}

TEST(streaming_many_messages_one_round) {
        pair p = make_pair();
        n_held = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        uint8_t blob[10000];
        memset(blob, 7, sizeof blob);
        for (int i = 0; i < 200; i++)
                ASSERT_OK(dp_grpc_call_send(held[0], blob, sizeof blob));
        ASSERT_OK(dp_grpc_call_finish(held[0], DP_GRPC_OK, "done"));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.n_msgs, 200);
        ASSERT_EQ(r.total_len, 200 * sizeof blob);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        free_pair(&p);
}

TEST(concurrent_streams) {
        pair p = make_pair();
        enum { N = 100 };
        static result rs[N];
        memset(rs, 0, sizeof rs);
        for (int i = 0; i < N; i++) {
                char m[16];
                int n = snprintf(m, sizeof m, "%03d", i);
                ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", (const uint8_t *)m, (size_t)n, 1000, 0, on_msg,
                                                  on_done, &rs[i], NULL));
        }
        pump(p.c, p.s, 1000);
        for (int i = 0; i < N; i++) {
                char m[16];
                snprintf(m, sizeof m, "%03d", i);
                ASSERT_EQ(rs[i].status, DP_GRPC_OK);
                ASSERT_EQ(rs[i].last[0], m[2]);
                ASSERT_EQ(rs[i].last[2], m[0]);
        }
        free_pair(&p);
}

TEST(client_deadline) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Hold", NULL, 0, 1000, 5000, on_msg, on_done, &r, NULL));
        ASSERT_EQ(dp_grpc_conn_next_deadline(p.c), 6000);
        pump(p.c, p.s, 1000);
        ASSERT_EQ(n_held, 1);
        /* the server saw grpc-timeout: its deadline is relative to its clock */
        ASSERT_EQ(dp_grpc_call_deadline(held[0]), 6000);
        dp_grpc_conn_tick(p.c, 5999);
        ASSERT_EQ(r.done, 0);
        dp_grpc_conn_tick(p.c, 6000);
        ASSERT_EQ(r.done, 1);
        ASSERT_EQ(r.status, DP_GRPC_DEADLINE_EXCEEDED);
        pump(p.c, p.s, 6000); /* RST_STREAM(CANCEL) reaches the server */
        ASSERT_EQ(n_cancel, 1);
        ASSERT_EQ(cancel_status[0], DP_GRPC_CANCELLED);
        free_pair(&p);
}

TEST(server_deadline) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Hold", NULL, 0, 1000, 5000, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(dp_grpc_conn_next_deadline(p.s), 6000);
        dp_grpc_conn_tick(p.s, 7000);
        ASSERT_EQ(n_cancel, 1);
        ASSERT_EQ(cancel_status[0], DP_GRPC_DEADLINE_EXCEEDED);
        pump(p.c, p.s, 7000);
        ASSERT_EQ(r.done, 1);
        ASSERT_EQ(r.status, DP_GRPC_DEADLINE_EXCEEDED);
        free_pair(&p);
}

TEST(client_cancel) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0};
        dp_grpc_client_call *cc;
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, &cc));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(n_held, 1);
        dp_grpc_client_call_cancel(cc);
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.done, 0);
        ASSERT_EQ(n_cancel, 1);
        ASSERT_EQ(cancel_status[0], DP_GRPC_CANCELLED);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.s), 0);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.c), 0);
        free_pair(&p);
}

TEST(oversize_request) {
        pair p = make_pair();
        result r = {0};
        size_t n = DP_GRPC_MAX_RECV_MESSAGE + 1;
        uint8_t *b = calloc(1, n);
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", b, n, 1000, 0, on_msg, on_done, &r, NULL));
        free(b);
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_RESOURCE_EXHAUSTED);
        ASSERT_CONTAINS(r.message, "larger than max");
        free_pair(&p);
}

TEST(oversize_reply) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Big", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_RESOURCE_EXHAUSTED);
        ASSERT_EQ(r.n_msgs, 0);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.s), 0);
        free_pair(&p);
}

TEST(max_size_reply_ok) {
        pair p = make_pair();
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Max", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ASSERT_EQ(r.total_len, DP_GRPC_MAX_RECV_MESSAGE);
        free_pair(&p);
}

TEST(goaway_lets_inflight_finish) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0}, r2 = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(n_held, 1);
        dp_grpc_conn_shutdown(p.s);
        pump(p.c, p.s, 1000);
        ASSERT_TRUE(dp_grpc_conn_is_draining(p.c));
        ASSERT_EQ(dp_grpc_conn_start_call(p.c, "/test.T/Echo", NULL, 0, 1000, 0, on_msg, on_done, &r2, NULL),
                  -ENOTCONN);
        ASSERT_FALSE(dp_grpc_conn_is_done(p.s));
        ASSERT_OK(dp_grpc_call_send(held[0], (const uint8_t *)"x", 1));
        ASSERT_OK(dp_grpc_call_finish(held[0], DP_GRPC_OK, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        ASSERT_EQ(r.n_msgs, 1);
        ASSERT_TRUE(dp_grpc_conn_is_done(p.s));
        free_pair(&p);
}

TEST(conn_free_cancels_held_calls) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(n_held, 1);
        p.s = dp_grpc_conn_free(p.s);
        ASSERT_EQ(n_cancel, 1);
        ASSERT_EQ(cancel_status[0], DP_GRPC_UNAVAILABLE);
        dp_grpc_conn_peer_closed(p.c);
        ASSERT_EQ(r.done, 1);
        ASSERT_EQ(r.status, DP_GRPC_UNAVAILABLE);
        free_pair(&p);
}

static dp_grpc_call *late;
static void h_late(dp_grpc_call *call, void *ud) {
        (void)ud;
        late = call;
}

TEST(call_outlives_conn) {
        dp_grpc_server *srv = make_server();
        ASSERT_OK(dp_grpc_server_add_method(srv, "/test.T/Late", DP_GRPC_UNARY, NULL, h_late, NULL));
        dp_grpc_conn *s, *c;
        ASSERT_OK(dp_grpc_conn_new_server(srv, 0, &s));
        ASSERT_OK(dp_grpc_conn_new_client(0, &c));
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(c, "/test.T/Late", NULL, 0, 0, 0, on_msg, on_done, &r, NULL));
        pump(c, s, 0);
        ASSERT_TRUE(late);
        ASSERT_TRUE(dp_grpc_call_is_alive(late));
        s = dp_grpc_conn_free(s);
        ASSERT_FALSE(dp_grpc_call_is_alive(late));
        ASSERT_EQ(dp_grpc_call_send(late, (const uint8_t *)"x", 1), -ECANCELED);
        ASSERT_EQ(dp_grpc_call_finish(late, DP_GRPC_OK, NULL), -ECANCELED);
        c = dp_grpc_conn_free(c);
        ASSERT_EQ(r.status, DP_GRPC_UNAVAILABLE);
        dp_grpc_server_free(srv);
}

TEST(garbage_preface_closes) {
        dp_grpc_server *srv = make_server();
        dp_grpc_conn *s;
        ASSERT_OK(dp_grpc_conn_new_server(srv, 0, &s));
        const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        ASSERT_TRUE(dp_grpc_conn_feed(s, (const uint8_t *)junk, sizeof junk - 1, 0) < 0);
        const uint8_t *d;
        size_t n;
        for (int i = 0; i < 10 && !dp_grpc_conn_is_done(s); i++) {
                dp_grpc_conn_output(s, &d, &n);
                dp_grpc_conn_consumed(s, n);
        }
        ASSERT_TRUE(dp_grpc_conn_is_done(s));
        dp_grpc_conn_free(s);
        dp_grpc_server_free(srv);
}

TEST(server_first_frame_is_settings) {
        dp_grpc_server *srv = make_server();
        dp_grpc_conn *s;
        ASSERT_OK(dp_grpc_conn_new_server(srv, 0, &s));
        const uint8_t *d;
        size_t n;
        ASSERT_OK(dp_grpc_conn_output(s, &d, &n));
        ASSERT_TRUE(n >= 9);
        ASSERT_EQ(d[3], 0x4); /* frame type SETTINGS */
        ASSERT_EQ(d[4], 0x0); /* not an ACK */
        dp_grpc_conn_free(s);
        dp_grpc_server_free(srv);
}

TEST(timeout_values) {
        uint64_t us;
        ASSERT_OK(dp_grpc_timeout_parse("29999872u", 9, &us));
        ASSERT_EQ(us, 29999872);
        ASSERT_OK(dp_grpc_timeout_parse("1S", 2, &us));
        ASSERT_EQ(us, 1000000);
        ASSERT_OK(dp_grpc_timeout_parse("2H", 2, &us));
        ASSERT_EQ(us, 7200ull * 1000000ull);
        ASSERT_OK(dp_grpc_timeout_parse("1n", 2, &us));
        ASSERT_EQ(us, 1);
        ASSERT_OK(dp_grpc_timeout_parse("0n", 2, &us));
        ASSERT_EQ(us, 0);
        ASSERT_TRUE(dp_grpc_timeout_parse("123456789S", 10, &us) < 0);
        ASSERT_TRUE(dp_grpc_timeout_parse("S", 1, &us) < 0);
        ASSERT_TRUE(dp_grpc_timeout_parse("12x", 3, &us) < 0);
        ASSERT_TRUE(dp_grpc_timeout_parse("-1S", 3, &us) < 0);
        char b[16];
        dp_grpc_timeout_format(30000000, b);
        ASSERT_STREQ(b, "30000000u");
        dp_grpc_timeout_format(45000000, b);
        ASSERT_STREQ(b, "45000000u");
        dp_grpc_timeout_format(1000000, b);
        ASSERT_STREQ(b, "1000000u");
        dp_grpc_timeout_format(1, b);
        ASSERT_STREQ(b, "1000n");
        dp_grpc_timeout_format(200000000, b);
        ASSERT_STREQ(b, "200000m");
        dp_grpc_timeout_format(0, b);
        ASSERT_STREQ(b, "0n");
}

TEST(percent_encoding) {
        dp_strbuf sb = DP_STRBUF_INIT;
        const char in[] = "a 100% \xc3\xbc\n~";
        dp_grpc_percent_encode(&sb, in, strlen(in));
        ASSERT_STREQ(dp_strbuf_str(&sb), "a 100%25 %C3%BC%0A~");
        dp_strbuf out = DP_STRBUF_INIT;
        dp_grpc_percent_decode(&out, sb.buf, sb.len);
        ASSERT_STREQ(dp_strbuf_str(&out), in);
        dp_strbuf_truncate(&out, 0);
        dp_grpc_percent_decode(&out, "bad %zz %4", 10);
        ASSERT_STREQ(dp_strbuf_str(&out), "bad %zz %4");
        dp_strbuf_done(&sb);
        dp_strbuf_done(&out);
}

TEST(status_mapping) {
        ASSERT_STREQ(dp_grpc_status_name(12), "UNIMPLEMENTED");
        ASSERT_STREQ(dp_grpc_status_name(99), "UNKNOWN_STATUS");
        ASSERT_EQ(dp_grpc_status_from_rst(0x8), DP_GRPC_CANCELLED);
        ASSERT_EQ(dp_grpc_status_from_rst(0x7), DP_GRPC_UNAVAILABLE);
        ASSERT_EQ(dp_grpc_status_from_rst(0xb), DP_GRPC_RESOURCE_EXHAUSTED);
        ASSERT_EQ(dp_grpc_status_from_rst(0x2), DP_GRPC_INTERNAL);
        ASSERT_EQ(dp_grpc_status_from_http(404), DP_GRPC_UNIMPLEMENTED);
        ASSERT_EQ(dp_grpc_status_from_http(503), DP_GRPC_UNAVAILABLE);
        ASSERT_EQ(dp_grpc_status_from_http(500), DP_GRPC_UNKNOWN);
}

TEST(connection_buffer_cap) {
        /* 20 requests of almost 4 MiB in flight at once exceed the 8 MiB a
         * connection buffers: some are refused, the others complete */
        pair p = make_pair();
        enum { N = 20 };
        static result rs[N];
        memset(rs, 0, sizeof rs);
        size_t n = DP_GRPC_MAX_RECV_MESSAGE - 16;
        uint8_t *b = calloc(1, n);
        for (int i = 0; i < N; i++)
                ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", b, n, 1000, 0, on_msg, on_done, &rs[i], NULL));
        free(b);
        pump(p.c, p.s, 1000);
        int ok = 0, refused = 0;
        for (int i = 0; i < N; i++) {
                ASSERT_EQ(rs[i].done, 1);
                if (rs[i].status == DP_GRPC_OK)
                        ok++;
                else if (rs[i].status == DP_GRPC_RESOURCE_EXHAUSTED)
                        refused++;
        }
        ASSERT_EQ(ok + refused, N);
        ASSERT_TRUE(refused > 0);
        ASSERT_TRUE(ok > 0);
        free_pair(&p);
}

TEST(cancel_and_expire_before_headers_left) {
        pair p = make_pair();
        result r1 = {0}, r2 = {0}, r3 = {0};
        dp_grpc_client_call *cc;
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", NULL, 0, 1000, 0, on_msg, on_done, &r1, &cc));
        dp_grpc_client_call_cancel(cc);
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", NULL, 0, 1000, 10, on_msg, on_done, &r2, NULL));
        dp_grpc_conn_tick(p.c, 2000);
        ASSERT_EQ(r2.status, DP_GRPC_DEADLINE_EXCEEDED);
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Echo", (const uint8_t *)"ok", 2, 2000, 0, on_msg, on_done, &r3,
                                          NULL));
        pump(p.c, p.s, 2000);
        ASSERT_EQ(r1.done, 0);
        ASSERT_EQ(r2.done, 1);
        ASSERT_EQ(r3.status, DP_GRPC_OK);
        ASSERT_EQ(dp_grpc_conn_stream_count(p.c), 0);
        free_pair(&p);
}

TEST(stalled_reader_gets_enobufs) {
        pair p = make_pair();
        n_held = n_cancel = 0;
        result r = {0};
        ASSERT_OK(dp_grpc_conn_start_call(p.c, "/test.T/Watch", NULL, 0, 1000, 0, on_msg, on_done, &r, NULL));
        pump(p.c, p.s, 1000);
        size_t n = 1u << 20;
        uint8_t *b = calloc(1, n);
        int rc = 0, sent = 0;
        while ((rc = dp_grpc_call_send(held[0], b, n)) == 0)
                sent++;
        ASSERT_EQ(rc, -ENOBUFS);
        ASSERT_TRUE(sent >= 60 && sent <= 64);
        free(b);
        /* once the peer reads, the stream flows again */
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.n_msgs, sent);
        ASSERT_OK(dp_grpc_call_send(held[0], (const uint8_t *)"x", 1));
        ASSERT_OK(dp_grpc_call_finish(held[0], DP_GRPC_OK, NULL));
        pump(p.c, p.s, 1000);
        ASSERT_EQ(r.status, DP_GRPC_OK);
        free_pair(&p);
}
