/* SPDX-License-Identifier: Apache-2.0
 * grpc-peer-client SOCKET PATH MODE [TIMEOUT_MS] [PAYLOAD] — a dp_grpc client
 * for the interop tests. MODE: "unary" (synchronous call), "stream" (async,
 * prints every message), "register" (a v1beta1 RegisterRequest as payload,
 * unary), "concurrent" (20 unary calls at once on one connection).
 * Prints "MSG <hex>" per response message, then "STATUS <code> <message>". */
#include <stdio.h>

#include "grpc/grpc.h"
#include "proto/proto.h"

static void print_msg(const uint8_t *m, size_t n) {
        printf("MSG ");
        for (size_t i = 0; i < n && i < 64; i++)
                printf("%02x", m[i]);
        if (n > 64) printf("...(%zu bytes)", n);
        printf("\n");
}

typedef struct state {
        dp_loop *loop;
        int pending;
        int last_status;
} state;

static void on_msg(dp_grpc_client_call *cc, const uint8_t *m, size_t n, void *ud) {
        (void)cc;
        (void)ud;
        print_msg(m, n);
}

static void on_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        state *s = ud;
        printf("STATUS %d %s\n", status, message);
        s->last_status = status;
        if (--s->pending == 0) dp_loop_exit(s->loop, 0);
}

int main(int argc, char **argv) {
        if (argc < 4) {
                fprintf(stderr, "usage: grpc-peer-client SOCKET PATH MODE [TIMEOUT_MS] [PAYLOAD]\n");
                return 2;
        }
        const char *mode = argv[3];
        uint64_t timeout = argc > 4 ? strtoull(argv[4], NULL, 10) * 1000 : 0;
        const char *payload = argc > 5 ? argv[5] : "";
        dp_loop *l = NULL;
        dp_grpc_channel *ch;
        int r = dp_loop_new(&l);
        if (r >= 0) r = dp_grpc_channel_connect_unix(l, argv[1], &ch);
        if (r < 0) {
                fprintf(stderr, "grpc-peer-client: %s\n", strerror(-r));
                dp_loop_free(l);
                return 1;
        }
        state s = {.loop = l};
        if (streq(mode, "unary") || streq(mode, "register")) {
                dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
                if (streq(mode, "register")) {
                        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
                        o.get_preferred_allocation_available = 1;
                        V1beta1__RegisterRequest rr = V1BETA1__REGISTER_REQUEST__INIT;
                        rr.version = "v1beta1";
                        rr.endpoint = "peer.sock";
                        rr.resource_name = (char *)payload;
                        rr.options = &o;
                        dp_grpc_channel_call_sync_msg(ch, argv[2], &rr.base, &v1beta1__empty__descriptor, timeout, &rep,
                                                      NULL);
                } else
                        dp_grpc_channel_call_sync(ch, argv[2], (const uint8_t *)payload, strlen(payload), timeout, &rep,
                                                  NULL);
                if (rep.data) print_msg(rep.data, rep.len);
                printf("STATUS %d %s\n", rep.status, rep.message ? rep.message : "");
                dp_grpc_reply_done(&rep);
        } else if (streq(mode, "stream") || streq(mode, "concurrent")) {
                int n = streq(mode, "stream") ? 1 : 20;
                for (int i = 0; i < n && r >= 0; i++) {
                        r = dp_grpc_channel_start_call(ch, argv[2], (const uint8_t *)payload, strlen(payload), timeout,
                                                       on_msg, on_done, &s, NULL);
                        if (r >= 0) s.pending++;
                }
                if (r >= 0) r = dp_loop_run(l);
        } else {
                fprintf(stderr, "grpc-peer-client: unknown mode %s\n", mode);
                r = -EINVAL;
        }
        fflush(stdout);
        dp_grpc_channel_free(ch);
        dp_loop_free(l);
        return r < 0 ? 1 : 0;
}
