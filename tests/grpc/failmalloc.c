/* SPDX-License-Identifier: Apache-2.0
 * grpc-failmalloc — run a server core and a client core through a full
 * scenario (unary, protobuf, streaming, errors, deadline, cancel, GOAWAY,
 * teardown) once per allocation, failing exactly that allocation. Nothing
 * may crash, and LeakSanitizer checks at exit that every failure path freed
 * what it had. Allocations made by devplane code are intercepted with the
 * linker's --wrap, and so are nghttp2's and protobuf-c's (they allocate
 * through devplane's malloc: an nghttp2_mem, dp_proto_unpack's allocator). */
#include <stdio.h>

#include "grpc/conn.h"
#include "proto/proto.h"

#include "failmalloc.h"

static dp_grpc_call *held[4];

static void forget(dp_grpc_call *c) {
        for (int i = 0; i < 4; i++)
                if (held[i] == c) held[i] = NULL;
}
static void on_cancel(dp_grpc_call *c, int status, void *ud) {
        (void)ud;
        forget(c);
        dp_grpc_call_finish(c, status, "cancelled");
}
static void h_hold(dp_grpc_call *c, void *ud) {
        (void)ud;
        for (int i = 0; i < 4; i++)
                if (!held[i]) {
                        held[i] = c;
                        dp_grpc_call_set_cancel_handler(c, on_cancel, NULL);
                        dp_grpc_call_send(c, (const uint8_t *)"first", 5);
                        return;
                }
        dp_grpc_call_finish(c, DP_GRPC_RESOURCE_EXHAUSTED, NULL);
}
static void h_echo(dp_grpc_call *c, void *ud) {
        (void)ud;
        size_t n;
        const uint8_t *b = dp_grpc_call_request(c, &n);
        dp_grpc_call_send(c, b, n);
        dp_grpc_call_finish(c, DP_GRPC_OK, NULL);
}
static void h_alloc(dp_grpc_call *c, void *ud) {
        (void)ud;
        V1beta1__ContainerAllocateResponse cr = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        V1beta1__ContainerAllocateResponse *crs[] = {&cr};
        V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
        r.n_container_responses = 1;
        r.container_responses = crs;
        dp_grpc_call_reply_msg(c, &r.base);
}
static void h_fail(dp_grpc_call *c, void *ud) {
        (void)ud;
        dp_grpc_call_finishf(c, DP_GRPC_NOT_FOUND, "device %s: 100%% gone", "gpu-\xc3\xbc");
}

static int dones;
static void on_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        (void)status;
        (void)message;
        if (ud) *(dp_grpc_client_call **)ud = NULL; /* the pointer dies now */
        dones++;
}

static void pump(dp_grpc_conn *a, dp_grpc_conn *b, uint64_t now) {
        for (int i = 0; i < 200; i++) {
                bool moved = false;
                dp_grpc_conn *from[2] = {a, b}, *to[2] = {b, a};
                for (int k = 0; k < 2; k++) {
                        const uint8_t *d;
                        size_t n;
                        dp_grpc_conn_output(from[k], &d, &n);
                        if (!n) continue;
                        uint8_t *copy = __real_malloc(n);
                        memcpy(copy, d, n);
                        dp_grpc_conn_consumed(from[k], n);
                        dp_grpc_conn_feed(to[k], copy, n, now);
                        free(copy);
                        moved = true;
                }
                if (!moved) return;
        }
}

static void scenario(void) {
        dp_grpc_server *srv = NULL;
        dp_grpc_conn *s = NULL, *c = NULL;
        if (dp_grpc_server_new(&srv) < 0) return;
        dp_grpc_server_add_method(srv, "/t.T/Echo", DP_GRPC_UNARY, NULL, h_echo, NULL);
        dp_grpc_server_add_method(srv, "/t.T/Fail", DP_GRPC_UNARY, NULL, h_fail, NULL);
        dp_grpc_server_add_method(srv, "/t.T/Watch", DP_GRPC_SERVER_STREAMING, NULL, h_hold, NULL);
        dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/Allocate", DP_GRPC_UNARY,
                                  &v1beta1__allocate_request__descriptor, h_alloc, NULL);
        if (dp_grpc_conn_new_server(srv, 0, &s) < 0 || dp_grpc_conn_new_client(0, &c) < 0) goto out;
        char *ids[] = {"gpu-0"};
        V1beta1__ContainerAllocateRequest creq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        creq.n_devices_ids = 1;
        creq.devices_ids = ids;
        V1beta1__ContainerAllocateRequest *creqs[] = {&creq};
        V1beta1__AllocateRequest areq = V1BETA1__ALLOCATE_REQUEST__INIT;
        areq.n_container_requests = 1;
        areq.container_requests = creqs;
        uint8_t *abuf = NULL;
        size_t alen = 0;
        dp_proto_pack(&areq.base, &abuf, &alen);
        dp_grpc_client_call *cancel_me = NULL;
        dp_grpc_conn_start_call(c, "/t.T/Echo", (const uint8_t *)"hi", 2, 0, 0, NULL, on_done, NULL, NULL);
        dp_grpc_conn_start_call(c, "/t.T/Fail", NULL, 0, 0, 0, NULL, on_done, NULL, NULL);
        dp_grpc_conn_start_call(c, "/t.T/Watch", NULL, 0, 0, 0, NULL, on_done, NULL, NULL);
        dp_grpc_conn_start_call(c, "/t.T/Watch", NULL, 0, 0, 0, NULL, on_done, &cancel_me, &cancel_me);
        dp_grpc_conn_start_call(c, "/t.T/Watch", NULL, 0, 0, 5000, NULL, on_done, NULL, NULL);
        dp_grpc_conn_start_call(c, "/no.Such/Method", NULL, 0, 0, 0, NULL, on_done, NULL, NULL);
        if (abuf)
                dp_grpc_conn_start_call(c, "/v1beta1.DevicePlugin/Allocate", abuf, alen, 0, 30000000, NULL, on_done,
                                        NULL, NULL);
        free(abuf);
        pump(c, s, 0);
        if (cancel_me) dp_grpc_client_call_cancel(cancel_me);
        for (int i = 0; i < 4; i++)
                if (held[i]) dp_grpc_call_send(held[i], (const uint8_t *)"more", 4);
        pump(c, s, 0);
        dp_grpc_conn_tick(c, 10000);
        dp_grpc_conn_tick(s, 10000);
        dp_grpc_conn_shutdown(s);
        pump(c, s, 10000);
        for (int i = 0; i < 4; i++)
                if (held[i]) {
                        dp_grpc_call *h = held[i];
                        held[i] = NULL;
                        dp_grpc_call_finish(h, DP_GRPC_OK, NULL);
                }
        pump(c, s, 10000);
out:
        dp_grpc_conn_free(c);
        dp_grpc_conn_free(s);
        for (int i = 0; i < 4; i++)
                if (held[i]) {
                        dp_grpc_call *h = held[i];
                        held[i] = NULL;
                        dp_grpc_call_finish(h, DP_GRPC_OK, NULL);
                }
        dp_grpc_server_free(srv);
}

/* One scenario; the run without failures must complete every call but the
 * cancelled one. Runs with a failure only must not crash or leak. */
static bool run(void *ctx) {
        (void)ctx;
        dones = 0;
        scenario();
        if (fail_at == 0 && dones != 6) {
                fprintf(stderr, "grpc-failmalloc: %d calls completed without failures, expected 6\n", dones);
                return false;
        }
        return true;
}

int main(void) {
        dp_failmalloc fm = {.name = "grpc-failmalloc", .run = run, .absorb = true, .min_points = 1};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("grpc-failmalloc: %lu allocations in the scenario, each failed in turn\n", r.points);
        /* a failure must not end the loop early: the last run reached at least
         * half of the reference run's allocations */
        if (!rc && r.points < r.reference / 2) {
                fprintf(stderr, "grpc-failmalloc: %lu failure points of %lu allocations\n", r.points, r.reference);
                rc = 1;
        }
        return rc;
}
