/* SPDX-License-Identifier: Apache-2.0
 * Fuzz what `devplane node` reads when its checkpoint is lost or damaged
 * (node/recover.c): the input is a status file (devplane_node_status.json,
 * with pods' device ids and unproven marks) followed, after the first 0xff
 * byte, by a damaged kubelet checkpoint read without its checksum. Both are
 * salvaged into one ledger, as at start; the ledger (unproven marks
 * included) must then encode to a checkpoint that the strict loader reads
 * back to the same bytes. */
#include <stdio.h>

#include "node/ckpt.h"
#include "node/devmgr.h"

#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 1 << 16) return 0;
        const uint8_t *sep = memchr(data, 0xff, size);
        size_t slen = sep ? (size_t)(sep - data) : size;
        char *status = malloc(slen + 1);
        char *ck = sep ? malloc(size - slen) : NULL;
        dp_devmgr *dm = dp_devmgr_new();
        dp_devmgr *dm2 = dp_devmgr_new();
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        if (!status || !dm || !dm2 || (sep && !ck)) goto out;
        memcpy(status, data, slen);
        status[slen] = 0;
        size_t n = 0;
        (void)dp_node_status_salvage(dm, status, slen, &n, NULL);
        if (ck) {
                memcpy(ck, sep + 1, size - slen - 1);
                ck[size - slen - 1] = 0;
                (void)dp_node_checkpoint_salvage(dm, ck, size - slen - 1, NULL);
        }
        if (dp_node_checkpoint_encode(dm, &a) < 0 || dp_strbuf_failed(&a)) goto out;
        CHECK(dp_node_checkpoint_load(dm2, a.buf, a.len, NULL) == 0);
        CHECK(dp_devmgr_n_unproven(dm2) == dp_devmgr_n_unproven(dm));
        CHECK(dp_node_checkpoint_encode(dm2, &b) == 0);
        CHECK(a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0);
out:
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_devmgr_free(dm);
        dp_devmgr_free(dm2);
        free(status);
        free(ck);
        return 0;
}
