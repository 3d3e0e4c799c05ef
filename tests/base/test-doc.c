/* SPDX-License-Identifier: Apache-2.0 */
#include "base/doc.h"
#include "harness.h"

static char *emit(const dp_doc_node *n, dp_doc_format f) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, n, f);
        return dp_strbuf_steal(&sb);
}

TEST(parse_multi_document) {
        dp_doc_set *s = dp_doc_set_new();
        const char *y = "a: 1\nb: [x, 'y', null]\n---\n---\nkind: List\n";
        ASSERT_OK(dp_doc_parse(s, y, strlen(y), "t.yaml", NULL));
        ASSERT_EQ(dp_doc_count(s), 2);
        dp_doc_node *r = dp_doc_root(s, 0);
        int64_t v;
        ASSERT_OK(dp_doc_get_int64(dp_doc_get(r, "a"), &v, NULL));
        ASSERT_EQ(v, 1);
        dp_doc_node *b = dp_doc_get(r, "b");
        ASSERT_EQ(b->type, DP_DOC_SEQ);
        ASSERT_EQ(b->n, 3);
        ASSERT_EQ(dp_doc_kind(b->items[1]), DP_DOC_STR);
        ASSERT_TRUE(dp_doc_is_null(b->items[2]));
        ASSERT_EQ(dp_doc_get(r, "b")->line, 2);
        ASSERT_STREQ(dp_doc_source(s, 1), "t.yaml");
        dp_doc_set_free(s);
}

TEST(json_input_and_roundtrip) {
        dp_doc_set *s = dp_doc_set_new();
        const char *j = "{\"x\": {\"s\": \"a<b\", \"num\": 12, \"f\": 1.5, \"t\": true, \"e\": [], \"m\": {}}}";
        ASSERT_OK(dp_doc_parse(s, j, strlen(j), "t.json", NULL));
        char *c = emit(dp_doc_root(s, 0), DP_DOC_JSON_COMPACT);
        ASSERT_STREQ(c, "{\"x\":{\"s\":\"a\\u003cb\",\"num\":12,\"f\":1.5,\"t\":true,\"e\":[],\"m\":{}}}");
        free(c);
        char *y = emit(dp_doc_root(s, 0), DP_DOC_YAML);
        ASSERT_STREQ(y, "x:\n  s: a<b\n  num: 12\n  f: 1.5\n  t: true\n  e: []\n  m: {}\n");
        free(y);
        dp_doc_set_free(s);
}

TEST(yaml_emit_quotes_ambiguous_strings) {
        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *m = dp_doc_new_map(s);
        ASSERT_OK(dp_doc_map_add(s, m, "a", dp_doc_new_str(s, "123")));
        ASSERT_OK(dp_doc_map_add(s, m, "b", dp_doc_new_str(s, "true")));
        ASSERT_OK(dp_doc_map_add(s, m, "c", dp_doc_new_str(s, "")));
        ASSERT_OK(dp_doc_map_add(s, m, "d", dp_doc_new_str(s, "yes")));
        ASSERT_OK(dp_doc_map_add(s, m, "e", dp_doc_new_str(s, "a: b")));
        ASSERT_OK(dp_doc_map_add(s, m, "t", dp_doc_new_str(s, "2026-11-01T10:10:00Z")));
        dp_doc_node *seq = dp_doc_new_seq(s);
        dp_doc_node *item = dp_doc_new_map(s);
        ASSERT_OK(dp_doc_map_add(s, item, "k", dp_doc_new_int(s, -3)));
        ASSERT_OK(dp_doc_map_add(s, item, "l", dp_doc_new_str(s, "v")));
        ASSERT_OK(dp_doc_seq_add(s, seq, item));
        ASSERT_OK(dp_doc_seq_add(s, seq, dp_doc_new_str(s, "plain")));
        ASSERT_OK(dp_doc_map_add(s, m, "list", seq));
        char *y = emit(m, DP_DOC_YAML);
        ASSERT_STREQ(y, "a: \"123\"\nb: \"true\"\nc: \"\"\nd: \"yes\"\ne: \"a: b\"\nt: \"2026-11-01T10:10:00Z\"\nlist:\n- k: -3\n  l: v\n- plain\n");
        /* and it reads back to the same tree */
        dp_doc_set *s2 = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s2, y, strlen(y), "y", NULL));
        char *y2 = emit(dp_doc_root(s2, 0), DP_DOC_YAML);
        ASSERT_STREQ(y2, y);
        free(y);
        free(y2);
        dp_doc_set_free(s2);
        dp_doc_set_free(s);
}

TEST(errors_have_positions) {
        dp_doc_set *s = dp_doc_set_new();
        dp_error err = DP_ERROR_INIT;
        const char *bad = "a: 1\nb: [1, 2\n";
        ASSERT_EQ(dp_doc_parse(s, bad, strlen(bad), "bad.yaml", &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "bad.yaml:");
        ASSERT_EQ(dp_doc_count(s), 0);
        const char *dup = "a: 1\na: 2\n";
        ASSERT_EQ(dp_doc_parse(s, dup, strlen(dup), "dup.yaml", &err), -EINVAL);
        ASSERT_STREQ(err.msg, "dup.yaml:2:1: duplicate key \"a\"");
        const char *alias = "a: &x 1\nb: *x\n";
        ASSERT_EQ(dp_doc_parse(s, alias, strlen(alias), "al.yaml", &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "aliases");
        dp_doc_set_free(s);
}

/* A map of many keys (a manifest with 250,000 labels) is checked for
 * duplicates in O(n log n): pair by pair it took minutes and stalled the
 * daemon reading it. The alarm is a generous bound, not a measurement
 * (figures: docs/benchmarks.md, "Duplicate keys"). */
static char *many_keys(size_t n, size_t dup_at, size_t dup_of) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "metadata:\n  labels:\n");
        for (size_t i = 0; i < n; i++)
                dp_strbuf_printf(&sb, "    label-%zu: v\n", i == dup_at ? dup_of : i);
        dp_strbuf_puts(&sb, "  name: x\n");
        return dp_strbuf_steal(&sb);
}

TEST(duplicate_keys_in_large_maps) {
        alarm(60);
        dp_error err = DP_ERROR_INIT;
        const size_t n = 250000;
        char *ok = many_keys(n, SIZE_MAX, 0);
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, ok, strlen(ok), "big.yaml", &err));
        ASSERT_EQ(dp_doc_get(dp_doc_get(dp_doc_root(s, 0), "metadata"), "labels")->n, n);
        dp_doc_set_free(s);
        free(ok);
        /* two duplicates: the first one in document order is named, at the
         * position of the repeated key (line 3 holds label-0) */
        char *bad = many_keys(n, 200000, 17);
        char *p = strstr(bad, "label-150000:");
        ASSERT_TRUE(p);
        memcpy(p, "label-100000", 12);
        s = dp_doc_set_new();
        ASSERT_EQ(dp_doc_parse(s, bad, strlen(bad), "dup.yaml", &err), -EINVAL);
        ASSERT_STREQ(err.msg, "dup.yaml:150003:5: duplicate key \"label-100000\"");
        dp_doc_set_free(s);
        free(bad);
        /* small maps keep failing at the repeated key */
        const char *small = "a: 1\nb:\n  c: 1\n  c: 2\n";
        s = dp_doc_set_new();
        ASSERT_EQ(dp_doc_parse(s, small, strlen(small), "s.yaml", &err), -EINVAL);
        ASSERT_STREQ(err.msg, "s.yaml:4:3: duplicate key \"c\"");
        dp_doc_set_free(s);
}

TEST(depth_limit) {
        dp_doc_set *s = dp_doc_set_new();
        dp_error err = DP_ERROR_INIT;
        char buf[512];
        memset(buf, '[', 200);
        buf[200] = 0;
        ASSERT_EQ(dp_doc_parse(s, buf, 200, "deep", &err), -E2BIG);
        ASSERT_CONTAINS(err.msg, "nesting");
        dp_doc_set_free(s);
}

TEST(typed_reads) {
        dp_doc_set *s = dp_doc_set_new();
        const char *y = "i: 9223372036854775808\ns: '5'\nb: false\nf: 1e3\n";
        ASSERT_OK(dp_doc_parse(s, y, strlen(y), "t", NULL));
        dp_doc_node *r = dp_doc_root(s, 0);
        dp_error err = DP_ERROR_INIT;
        int64_t v;
        ASSERT_EQ(dp_doc_get_int64(dp_doc_get(r, "i"), &v, &err), -ERANGE);
        ASSERT_EQ(dp_doc_get_int64(dp_doc_get(r, "s"), &v, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "expected integer, got string");
        bool b = true;
        ASSERT_OK(dp_doc_get_bool(dp_doc_get(r, "b"), &b, NULL));
        ASSERT_FALSE(b);
        ASSERT_EQ(dp_doc_kind(dp_doc_get(r, "f")), DP_DOC_FLOAT);
        const char *str;
        ASSERT_EQ(dp_doc_get_str(dp_doc_get(r, "b"), false, &str, NULL), -EINVAL);
        ASSERT_OK(dp_doc_get_str(dp_doc_get(r, "b"), true, &str, NULL));
        ASSERT_STREQ(str, "false");
        dp_doc_set_free(s);
}
