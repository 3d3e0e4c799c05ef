/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the sans-I/O gRPC client core: the input is what a server sent back
 * on one connection that carries three calls (unary, server stream with a
 * deadline, one cancelled from a message callback). Fed in pieces, output
 * drained, then time jumps past every deadline. */
#include "grpc/conn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int done_calls;

static void on_msg(dp_grpc_client_call *cc, const uint8_t *m, size_t n, void *ud) {
        (void)m;
        if (ud && n > 3) dp_grpc_client_call_cancel(cc);
}

static void on_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        (void)ud;
        if (status < 0 || !message) __builtin_trap();
        done_calls++;
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
        dp_grpc_conn *c;
        if (dp_grpc_conn_new_client(0, &c) < 0) return 0;
        done_calls = 0;
        int started = 0;
        started += dp_grpc_conn_start_call(c, "/test.T/Echo", (const uint8_t *)"hello", 5, 0, 0, on_msg, on_done, NULL,
                                           NULL) == 0;
        started += dp_grpc_conn_start_call(c, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, 5000000, on_msg,
                                           on_done, NULL, NULL) == 0;
        dp_grpc_client_call *cc = NULL;
        int r = dp_grpc_conn_start_call(c, "/test.T/Cancel", NULL, 0, 0, 0, on_msg, on_done, (void *)1, &cc);
        drain(c);
        size_t chunk = size ? (size_t)data[size - 1] * 5 + 1 : 1;
        uint64_t now = 0;
        for (size_t off = 0; off < size && !dp_grpc_conn_is_done(c);) {
                size_t n = DP_MIN(chunk, size - off);
                if (dp_grpc_conn_feed(c, data + off, n, now) < 0) break;
                off += n;
                drain(c);
                now += 1000000;
                dp_grpc_conn_tick(c, now);
        }
        dp_grpc_conn_tick(c, UINT64_MAX / 2);
        drain(c);
        dp_grpc_conn_free(c);
        /* every call not cancelled got exactly one on_done */
        if (done_calls > started + (r == 0)) __builtin_trap();
        return 0;
}
