/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the kubelet checkpoint decoder. A checkpoint that decodes must
 * encode, decode again with a valid checksum, and encode to the same bytes
 * (a fixed point). */
#include <stdio.h>

#include "devices/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_checkpoint *c = NULL;
        /* Unverified, so mutated inputs get past the checksum and reach the
         * encoder; the re-decode below is verified. */
        if (dp_checkpoint_decode_unverified((const char *)data, size, &c, NULL) < 0) return 0;
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        if (dp_checkpoint_encode(c, &a) == 0) {
                dp_checkpoint *d = NULL;
                if (dp_checkpoint_decode(a.buf, a.len, &d, NULL) < 0) {
                        fprintf(stderr, "re-decode failed: %s\n", a.buf);
                        abort();
                }
                if (dp_checkpoint_encode(d, &b) == 0 && (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)) {
                        fprintf(stderr, "not a fixed point:\n%s\n%s\n", a.buf, b.buf);
                        abort();
                }
                dp_checkpoint_free(d);
        }
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_checkpoint_free(c);
        return 0;
}
