/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the DRA driver checkpoint decoder (dra/prepared.h). A checkpoint that
 * decodes must encode, decode again, and encode to the same bytes. */
#include <stdio.h>

#include "dra/prepared.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_dra_checkpoint *c = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_checkpoint_decode((const char *)data, size, "fuzz", &c, &err) < 0) {
                if (!err.msg[0]) abort(); /* every failure explains itself */
                return 0;
        }
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        if (dp_dra_checkpoint_encode(c, &a) == 0) {
                dp_dra_checkpoint *d = NULL;
                if (dp_dra_checkpoint_decode(a.buf, a.len, "re", &d, &err) < 0) {
                        fprintf(stderr, "re-decode failed: %s\n%s\n", err.msg, a.buf);
                        abort();
                }
                if (dp_dra_checkpoint_encode(d, &b) == 0 && (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)) {
                        fprintf(stderr, "not a fixed point:\n%s\n%s\n", a.buf, b.buf);
                        abort();
                }
                /* every claim survives a copy and a remove */
                for (size_t i = 0; d && i < d->n_claims; i++) {
                        dp_dra_prepared_claim copy;
                        if (dp_dra_prepared_claim_copy(&copy, &d->claims[i]) == 0) dp_dra_prepared_claim_done(&copy);
                }
                while (d && d->n_claims)
                        if (dp_dra_checkpoint_remove(d, d->claims[0].uid, NULL) < 0) abort();
                dp_dra_checkpoint_free(d);
        }
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_dra_checkpoint_free(c);
        return 0;
}
