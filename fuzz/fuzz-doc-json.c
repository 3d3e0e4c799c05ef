/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the JSON fast path of dp_doc_parse against libyaml: every input is
 * parsed twice, with the fast path and without it (dp_doc_parse_libyaml), and
 * both must agree — the same result, the same error message, the same
 * trees (node types, strings, plain flags, line and column of every node,
 * keys and their positions). */
#include <stdlib.h>

#include "doc/doc.h"

/* the same tree, marks included (dp_doc_dump of both) */
static void same_tree(const dp_doc_node *a, const dp_doc_node *b) {
        dp_strbuf da = DP_STRBUF_INIT, db = DP_STRBUF_INIT;
        dp_doc_dump(&da, a);
        dp_doc_dump(&db, b);
        if (!dp_strbuf_failed(&da) && !dp_strbuf_failed(&db) && strcmp(dp_strbuf_str(&da), dp_strbuf_str(&db)) != 0)
                abort();
        dp_strbuf_done(&da);
        dp_strbuf_done(&db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_doc_set *fast = dp_doc_set_new(), *slow = dp_doc_set_new();
        if (!fast || !slow) goto out;
        dp_error ef = DP_ERROR_INIT, es = DP_ERROR_INIT;
        int rf = dp_doc_parse(fast, (const char *)data, size, "fuzz", &ef);
        int rs = dp_doc_parse_libyaml(slow, (const char *)data, size, "fuzz", &es);
        if (rf == -ENOMEM || rs == -ENOMEM) goto out;
        if (rf != rs || strcmp(dp_error_msg(&ef), dp_error_msg(&es)) != 0) abort();
        if (rf == 0) {
                if (dp_doc_count(fast) != dp_doc_count(slow)) abort();
                for (size_t i = 0; i < dp_doc_count(fast); i++)
                        same_tree(dp_doc_root(fast, i), dp_doc_root(slow, i));
        }
out:
        dp_doc_set_free(fast);
        dp_doc_set_free(slow);
        return 0;
}
