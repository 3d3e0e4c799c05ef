/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's DRA state decoder (node/dra-state.c): any bytes on disk
 * decode or are refused with one error; what decodes encodes back to bytes
 * that decode to the same table (the checksum covers exactly what was read);
 * and the same bytes as strings a driver sends are stored only when the file
 * can hold them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/dra-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Whatever a driver sends as a claim name, CDI id or reason: stored only if
 * the file can hold it, and then read back the same. */
static void store_bytes(const uint8_t *data, size_t size) {
        char str[257];
        size_t n = size < 256 ? size : 256;
        memcpy(str, data, n);
        str[n] = 0;
        dp_node_dra_state *s = dp_node_dra_state_new(), *t = NULL;
        dp_node_dra_claim *c = NULL;
        char *v[] = {str};
        dp_node_dra_device dev = {str, str, v, 1, v, 1};
        dp_strbuf sb = DP_STRBUF_INIT;
        if (s && dp_node_dra_state_add(s, "u", str, str, "d", &c) >= 0) {
                (void)dp_node_dra_claim_set_devices(c, &dev, 1);
                (void)dp_node_dra_claim_add_pod(c, "p", str, str);
        }
        if (s) (void)dp_node_dra_state_set_unknown(s, "d", str);
        if (s && dp_node_dra_state_encode(s, &sb) >= 0) {
                dp_error e = DP_ERROR_INIT;
                int r = dp_node_dra_state_decode(sb.buf, sb.len, "stored", &t, &e);
                if (r < 0 && r != -ENOMEM) abort();
                if (r >= 0 && (t->n_claims != s->n_claims || t->n_unknown != s->n_unknown)) abort();
        }
        dp_strbuf_done(&sb);
        dp_node_dra_state_free(t);
        dp_node_dra_state_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        store_bytes(data, size);
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
