/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's DRA state decoder (node/dra-state.c): any bytes on disk
 * decode or are refused with one error; what decodes encodes back to bytes
 * that decode to the same table (the checksum covers exactly what was read). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/dra-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_node_dra_state *s = NULL;
        dp_error e = DP_ERROR_INIT;
        int r = dp_node_dra_state_decode((const char *)data, size, "fuzz", &s, &e);
        if (r < 0) {
                if (r != -EBADMSG && r != -E2BIG && r != -ENOMEM) abort();
                if (!e.msg[0]) abort();
                return 0;
        }
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        dp_node_dra_state *t = NULL;
        if (dp_node_dra_state_encode(s, &a) >= 0) {
                if (dp_node_dra_state_decode(a.buf, a.len, "again", &t, NULL) < 0) abort();
                if (dp_node_dra_state_encode(t, &b) < 0 || a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0) abort();
                if (t->n_claims != s->n_claims || t->n_unknown != s->n_unknown) abort();
        }
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_node_dra_state_free(t);
        dp_node_dra_state_free(s);
        return 0;
}
