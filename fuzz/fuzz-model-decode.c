/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the object model: parse, decode, validate, default, encode. Properties: no
 * crash or leak; decoding is all or nothing; an object that decodes encodes,
 * and its encoding decodes again to an encoding that is byte-identical; a
 * claim's tree from dp_encoder prints as its tree from a doc set does. */
#include "model/model.h"

static void same_claim_trees(dp_encoder *x, const dp_resource_claim *c) {
        dp_doc_set *s = dp_doc_set_new();
        const dp_doc_node *want = s ? dp_resource_claim_encode(s, c) : NULL;
        for (int f = 0; want && f < 2; f++) {
                const dp_doc_node *got = dp_encoder_claim(x, c);
                if (!got) break;
                dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                dp_doc_emit(&a, want, f ? DP_DOC_YAML : DP_DOC_JSON_PRETTY);
                dp_doc_emit(&b, got, f ? DP_DOC_YAML : DP_DOC_JSON_PRETTY);
                if (!dp_strbuf_failed(&a) && !dp_strbuf_failed(&b) &&
                    (a.len != b.len || memcmp(dp_strbuf_str(&a), dp_strbuf_str(&b), a.len) != 0))
                        __builtin_trap();
                dp_strbuf_done(&a);
                dp_strbuf_done(&b);
        }
        dp_doc_set_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer((const char *)data, size, "fuzz", l, &err) < 0) {
                if (l->n != 0 || !err.msg[0]) __builtin_trap();
                dp_object_list_free(l);
                return 0;
        }
        (void)dp_model_validate(l, &err);
        (void)dp_model_apply_defaults(l, &err); /* the API server's defaults, then the same round trip */
        dp_encoder *x = dp_encoder_new();
        for (size_t i = 0; x && i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_RESOURCE_CLAIM) same_claim_trees(x, l->items[i].claim);
        dp_encoder_free(x);

        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *n = s ? dp_object_list_encode(s, l) : NULL;
        if (n) {
                dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                dp_doc_emit(&a, n, DP_DOC_YAML);
                dp_object_list *l2 = dp_object_list_new();
                if (l2 && !dp_strbuf_failed(&a)) {
                        if (dp_model_decode_buffer(dp_strbuf_str(&a), a.len, "re", l2, &err) < 0) __builtin_trap();
                        if (l2->n != l->n) __builtin_trap();
                        dp_doc_set *s2 = dp_doc_set_new();
                        dp_doc_node *n2 = s2 ? dp_object_list_encode(s2, l2) : NULL;
                        if (n2) {
                                dp_doc_emit(&b, n2, DP_DOC_YAML);
                                if (!dp_strbuf_failed(&b) && strcmp(dp_strbuf_str(&a), dp_strbuf_str(&b)) != 0)
                                        __builtin_trap();
                        }
                        dp_doc_set_free(s2);
                }
                dp_object_list_free(l2);
                dp_strbuf_done(&a);
                dp_strbuf_done(&b);
        }
        dp_doc_set_free(s);
        dp_object_list_free(l);
        return 0;
}
