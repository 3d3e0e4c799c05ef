/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the sans-I/O gRPC server core: the input is what one client sent on
 * one connection. It is fed in pieces (sizes taken from the input's last
 * byte) with the output drained after each, then the clock jumps so every
 * deadline fires. Handlers cover unary replies, decoded protobuf requests,
 * errors, held calls finished later, and streams. */
#include "grpc/conn.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static dp_grpc_call *held[8];

static void h_echo(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t n;
        const uint8_t *b = dp_grpc_call_request(call, &n);
        dp_grpc_call_send(call, b, n);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

static void h_alloc(dp_grpc_call *call, void *ud) {
        (void)ud;
        const V1beta1__AllocateRequest *r = (const V1beta1__AllocateRequest *)dp_grpc_call_request_msg(call);
        V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
        if (r->n_container_requests == 0) {
                dp_grpc_call_finish(call, DP_GRPC_INVALID_ARGUMENT, "no containers \xc3\xbc 100%");
                return;
        }
        dp_grpc_call_reply_msg(call, &resp.base);
}

static void on_cancel(dp_grpc_call *call, int status, void *ud) {
        (void)status;
        (void)ud;
        for (size_t i = 0; i < ELEMENTSOF(held); i++)
                if (held[i] == call) held[i] = NULL;
        dp_grpc_call_finish(call, DP_GRPC_CANCELLED, NULL);
}

static void h_hold(dp_grpc_call *call, void *ud) {
        (void)ud;
        for (size_t i = 0; i < ELEMENTSOF(held); i++)
                if (!held[i]) {
                        held[i] = call;
                        dp_grpc_call_set_cancel_handler(call, on_cancel, NULL);
                        dp_grpc_call_send(call, (const uint8_t *)"first", 5);
                        return;
                }
        dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, NULL);
}

static void drain(dp_grpc_conn *c) {
        const uint8_t *d;
        size_t n;
        for (int i = 0; i < 64; i++) {
                if (dp_grpc_conn_output(c, &d, &n) < 0 || n == 0) return;
                dp_grpc_conn_consumed(c, n);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static dp_grpc_server *srv;
        if (!srv) {
                if (dp_grpc_server_new(&srv) < 0) return 0;
                dp_grpc_server_add_method(srv, "/test.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL);
                dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/Allocate", DP_GRPC_UNARY,
                                          &v1beta1__allocate_request__descriptor, h_alloc, NULL);
                dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/ListAndWatch", DP_GRPC_SERVER_STREAMING,
                                          &v1beta1__empty__descriptor, h_hold, NULL);
        }
        dp_grpc_conn *c;
        if (dp_grpc_conn_new_server(srv, 1000, &c) < 0) return 0;
        size_t chunk = size ? (size_t)data[size - 1] * 7 + 1 : 1;
        uint64_t now = 1000;
        for (size_t off = 0; off < size && !dp_grpc_conn_is_done(c);) {
                size_t n = DP_MIN(chunk, size - off);
                if (dp_grpc_conn_feed(c, data + off, n, now) < 0) break;
                off += n;
                drain(c);
                /* push on held streams between pieces, finish one now and then */
                for (size_t i = 0; i < ELEMENTSOF(held); i++)
                        if (held[i]) {
                                dp_grpc_call_send(held[i], (const uint8_t *)"more", 4);
                                if (off % 3 == 0) {
                                        dp_grpc_call *h = held[i];
                                        held[i] = NULL;
                                        dp_grpc_call_finish(h, DP_GRPC_OK, NULL);
                                }
                        }
                now += 100000;
                dp_grpc_conn_tick(c, now);
        }
        drain(c);
        dp_grpc_conn_tick(c, UINT64_MAX / 2);
        drain(c);
        dp_grpc_conn_shutdown(c);
        drain(c);
        dp_grpc_conn_free(c);
        for (size_t i = 0; i < ELEMENTSOF(held); i++)
                if (held[i]) {
                        dp_grpc_call *h = held[i];
                        held[i] = NULL;
                        dp_grpc_call_finish(h, DP_GRPC_OK, NULL);
                }
        return 0;
}
