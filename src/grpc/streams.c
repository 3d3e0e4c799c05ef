/* SPDX-License-Identifier: Apache-2.0
 * streams.c — the open calls of a server-streaming watch (grpc.h,
 * dp_grpc_streams): one set the device plugin and the DRA driver share. */
#include "grpc/grpc.h"

int dp_grpc_streams_add(dp_grpc_streams *s, dp_grpc_call *call) {
        assert_return(s && call, -EINVAL);
        if (DP_GROW(s->calls, s->cap, s->n + 1) < 0) return -ENOMEM;
        s->calls[s->n++] = call;
        return 0;
}

void dp_grpc_streams_remove(dp_grpc_streams *s, dp_grpc_call *call) {
        for (size_t i = 0; i < s->n; i++)
                if (s->calls[i] == call) {
                        DP_REMOVE_AT(s->calls, s->n, i);
                        return;
                }
}

size_t dp_grpc_streams_send(dp_grpc_streams *s, dp_grpc_call *only, const uint8_t *msg, size_t len, const char *why) {
        size_t dropped = 0;
        for (size_t i = 0; i < s->n;) {
                dp_grpc_call *c = s->calls[i];
                if ((only && c != only) || dp_grpc_call_send(c, msg, len) >= 0) {
                        i++;
                        continue;
                }
                dp_grpc_streams_remove(s, c);
                dp_grpc_call_finish(c, DP_GRPC_UNAVAILABLE, why);
                dropped++;
        }
        return dropped;
}

void dp_grpc_streams_finish(dp_grpc_streams *s, int status, const char *message) {
        for (size_t i = 0; i < s->n; i++)
                dp_grpc_call_finish(s->calls[i], status, message);
        s->n = 0;
}

void dp_grpc_streams_done(dp_grpc_streams *s) {
        free(s->calls);
        *s = (dp_grpc_streams){0};
}
