/* SPDX-License-Identifier: Apache-2.0
 * doc/builder.c: the sticky-error builder and the strict field readers
 * every durable file shares. */
#include "base/strv.h"
#include "doc/builder.h"
#include "harness.h"

static char *emit(const dp_doc_node *n) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, n, DP_DOC_JSON_COMPACT);
        return dp_strbuf_steal(&sb);
}

TEST(builds_in_order) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *m = dp_doc_b_map(&b);
        char *v[] = {(char *)"x", (char *)"y"};
        dp_doc_b_put_str(&b, m, "name", "n");
        dp_doc_b_put_str(&b, m, "absent", NULL);
        dp_doc_b_put_int(&b, m, "count", -3);
        dp_doc_b_put_uint(&b, m, "big", UINT64_MAX);
        dp_doc_b_put_bool(&b, m, "ok", true);
        dp_doc_b_put_strv(&b, m, "list", v, 2);
        dp_doc_b_put_strv(&b, m, "none", NULL, 0);
        ASSERT_EQ(b.r, 0);
        _cleanup_free_ char *out = emit(m);
        ASSERT_STREQ(out, "{\"name\":\"n\",\"count\":-3,\"big\":18446744073709551615,\"ok\":true,\"list\":[\"x\",\"y\"],\"none\":[]}");
}

TEST(failure_is_sticky) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *m = dp_doc_b_map(&b);
        dp_doc_b_put(&b, m, "lost", NULL); /* a node that could not be made */
        ASSERT_EQ(b.r, -ENOMEM);
        ASSERT_TRUE(dp_doc_b_map(&b) == NULL);
        ASSERT_TRUE(dp_doc_b_str(&b, "x") == NULL);
        dp_doc_b_put_str(&b, m, "after", "x");
        ASSERT_EQ(m->n, 0);
        ASSERT_EQ(b.r, -ENOMEM);
}

static const dp_doc_node *parse(dp_doc_set *s, const char *text) {
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_doc_parse(s, text, strlen(text), "f.json", &e));
        return dp_doc_root(s, 0);
}

TEST(decoder_messages_name_the_field) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        const dp_doc_node *m = parse(s, "{\"a\":\"x\",\"b\":1,\"e\":\"\",\"t\":true,\"l\":[\"p\",2],\"big\":[1,2,3]}");
        dp_error e = DP_ERROR_INIT;
        dp_doc_decoder d = {"f.json", "state", &e};
        static const char *const keys[] = {"a", "b", "e", "t", "l", NULL};
        ASSERT_EQ(dp_doc_dec_only_keys(&d, m, "data", keys), -EBADMSG);
        ASSERT_STREQ(e.msg, "f.json: state corrupt: data.big: unknown field (line 1)");
        _cleanup_free_ char *str = NULL;
        ASSERT_OK(dp_doc_dec_str(&d, m, "a", 0, "data", &str));
        ASSERT_STREQ(str, "x");
        char *other = NULL;
        ASSERT_EQ(dp_doc_dec_str(&d, m, "b", 0, "data", &other), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.b: expected a string");
        ASSERT_EQ(dp_doc_dec_str(&d, m, "e", DP_DOC_DEC_NONEMPTY, "data", &other), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.e: empty");
        ASSERT_EQ(dp_doc_dec_str(&d, m, "missing", 0, "data", &other), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.missing: required");
        ASSERT_OK(dp_doc_dec_str(&d, m, "missing", DP_DOC_DEC_OPTIONAL, "data", &other));
        ASSERT_TRUE(other == NULL);
        bool t = false;
        ASSERT_OK(dp_doc_dec_bool(&d, m, "t", "data", &t));
        ASSERT_TRUE(t);
        ASSERT_EQ(dp_doc_dec_bool(&d, m, "a", "data", &t), -EBADMSG);
        char **v = NULL;
        size_t n = 0;
        ASSERT_EQ(dp_doc_dec_strv(&d, m, "l", 8, "data", &v, &n), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.l[1]: expected a string");
        ASSERT_EQ(n, 1); /* what was copied is the caller's to free */
        dp_strv_free_n(v, n);
        const dp_doc_node *q = NULL;
        ASSERT_EQ(dp_doc_dec_seq(&d, m, "big", 2, "data", &q), -E2BIG);
        ASSERT_CONTAINS(e.msg, "data.big: more than 2 entries");
}

TEST(decoder_refuses_nul_in_strings) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        const dp_doc_node *m = parse(s, "{\"a\":\"x\\u0000y\"}");
        dp_error e = DP_ERROR_INIT;
        dp_doc_decoder d = {"f.json", "state", &e};
        char *str = NULL;
        ASSERT_EQ(dp_doc_dec_str(&d, m, "a", 0, "", &str), -EBADMSG);
}

TEST(scratch_trees_emit_the_same) {
        _cleanup_(dp_doc_scratch_freep) dp_doc_scratch *x = dp_doc_scratch_new();
        ASSERT_TRUE(x != NULL);
        for (int round = 0; round < 3; round++) {
                dp_doc_scratch_reset(x); /* the blocks of the last tree are reused */
                dp_doc_builder b = DP_DOC_BUILDER_SCRATCH(x);
                dp_doc_node *m = dp_doc_b_map(&b);
                char key[8];
                for (int i = 0; i < 40; i++) { /* past the first array's room */
                        static char keys[40][8];
                        snprintf(keys[i], sizeof keys[i], "k%02d", i);
                        dp_doc_b_put_int(&b, m, keys[i], i - round);
                }
                dp_doc_set *params = dp_doc_set_new();
                ASSERT_OK(dp_doc_parse(params, "{\"a\":[1,\"x\"]}", 13, "p", NULL));
                dp_doc_b_put(&b, m, "p", dp_doc_b_adopt(&b, params, dp_doc_root(params, 0)));
                ASSERT_EQ(b.r, 0);
                _cleanup_free_ char *out = emit(m);
                ASSERT_CONTAINS(out, "\"k39\":");
                ASSERT_CONTAINS(out, ",\"p\":{\"a\":[1,\"x\"]}}");
                /* the same tree built in a set emits the same bytes */
                _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
                dp_doc_builder c = DP_DOC_BUILDER_INIT(s);
                dp_doc_node *n = dp_doc_b_map(&c);
                for (int i = 0; i < 40; i++) {
                        snprintf(key, sizeof key, "k%02d", i);
                        dp_doc_b_put_int(&c, n, key, i - round);
                }
                dp_doc_set *p2 = dp_doc_set_new();
                ASSERT_OK(dp_doc_parse(p2, "{\"a\":[1,\"x\"]}", 13, "p", NULL));
                dp_doc_b_put(&c, n, "p", dp_doc_b_adopt(&c, p2, dp_doc_root(p2, 0)));
                ASSERT_EQ(c.r, 0);
                _cleanup_free_ char *out2 = emit(n);
                ASSERT_STREQ(out, out2);
        }
}
