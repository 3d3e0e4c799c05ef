/* SPDX-License-Identifier: Apache-2.0 */
#include "doc/doc.h"
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
        const char *alias = "a: &x 1\nb: *y\n";
        ASSERT_EQ(dp_doc_parse(s, alias, strlen(alias), "al.yaml", &err), -EINVAL);
        ASSERT_STREQ(err.msg, "al.yaml:2:4: alias *y names no anchor before it in this document");
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

/* ---- the JSON fast path builds what libyaml builds ---- */

static bool same_tree(const dp_doc_node *a, const dp_doc_node *b) {
        if (!a || !b) return a == b;
        if (a->type != b->type || a->line != b->line || a->col != b->col || a->n != b->n) return false;
        if (a->type == DP_DOC_SCALAR)
                return a->len == b->len && a->plain == b->plain && memcmp(a->str, b->str, a->len + 1) == 0;
        for (size_t i = 0; i < a->n; i++) {
                if (a->type == DP_DOC_SEQ) {
                        if (!same_tree(a->items[i], b->items[i])) return false;
                        continue;
                }
                if (strcmp(a->pairs[i].key, b->pairs[i].key) != 0 ||
                    !same_tree(a->pairs[i].key_node, b->pairs[i].key_node) ||
                    !same_tree(a->pairs[i].value, b->pairs[i].value))
                        return false;
        }
        return true;
}

/* parse with and without the fast path: same result, message and trees */
static void check_same(const char *in) {
        dp_doc_set *f = dp_doc_set_new(), *s = dp_doc_set_new();
        dp_error ef = DP_ERROR_INIT, es = DP_ERROR_INIT;
        int rf = dp_doc_parse(f, in, strlen(in), "in.json", &ef);
        int rs = dp_doc_parse_libyaml(s, in, strlen(in), "in.json", &es);
        if (rf != rs || strcmp(dp_error_msg(&ef), dp_error_msg(&es)) != 0)
                fprintf(stderr, "input %s: fast %d \"%s\", libyaml %d \"%s\"\n", in, rf, dp_error_msg(&ef), rs,
                        dp_error_msg(&es));
        ASSERT_EQ(rf, rs);
        ASSERT_STREQ(dp_error_msg(&ef), dp_error_msg(&es));
        ASSERT_EQ(dp_doc_count(f), dp_doc_count(s));
        for (size_t i = 0; i < dp_doc_count(f); i++)
                ASSERT_TRUE(same_tree(dp_doc_root(f, i), dp_doc_root(s, i)));
        dp_doc_set_free(f);
        dp_doc_set_free(s);
}

TEST(json_fast_path_same_tree) {
        static const char *const inputs[] = {
                ("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"kind\": \"Node\",\n"
                 "            \"metadata\": {\"name\": \"n\", \"labels\": {}}\n        }\n    ],\n    \"kind\": "
                 "\"List\"\n}\n"),
                "{\"a\":1,\"b\":[true,false,null,-1.5e+3,0],\"c\":{},\"d\":[],\"e\":\"\"}",
                "{\r\n  \"a\": [1, 2],\r\n  \"b\": \"x\"\r\n}\r\n",
                "{\"esc\": \"\\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0041\\u00e9\\u20ac\", \"k\\u00e9\": 1}",
                "{\"utf8\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"after\": [1]}",
                "[\"a\", [\"b\", [\"c\"]], {\"d\": {\"e\": [{}]}}]",
                "{\"a\" : 1, \"b\":2 }",
                "  \n{\"x\": .5, \"y\": -.inf, \"z\": True}\n\n",
                /* what the fast path leaves to libyaml */
                "{\"a\": 1,}",
                "{\"a\": 1 # comment\n}",
                "{\"a\":\t1}",
                "{\"a\": \"tab\tin\"}",
                "{\"a\": \"line\nbreak\"}",
                "{\"a\": 1, \"a\": 2}",
                "{\"a\" 1}",
                "{\"a\": [1, 2}",
                "{\"a\": 1}\n---\n{\"b\": 2}\n",
                "{\"a\": 1}\n{\"b\": 2}\n",
                "{\"a\": \"\\ud83d\\ude00\"}",
                "{\"a\": \"\\x41\"}",
                "{\"a\\u0000\": 1}",
                "{\"a\"\n: 1}",
                "[1 2, 3]",
                "[0x1f, 1_000, +1, -]",
                "[\n...\n]",
                "{\"a\": \"\xc2\x85\xe2\x80\xa8\"}",
                "{\"a\": \"\xff\"}",
                "{\"a\": \"\x7f\"}",
                "[1, 2",
                "{\"a\": 1}x",
                "{a: 1}",
                "{}",
                "[]",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++)
                check_same(inputs[i]);
        /* a key libyaml no longer takes as a simple key (over 1024 characters) */
        char big[1300] = "{\"";
        memset(big + 2, 'k', 1100);
        strcpy(big + 1102, "\": 1}");
        check_same(big);
        /* duplicates in a map past the linear check, nesting past the limit */
        char *keys = many_keys(40, 30, 7);
        check_same(keys);
        free(keys);
        char deep[256];
        memset(deep, '[', 101);
        memset(deep + 101, ']', 101);
        deep[202] = 0;
        check_same(deep);
}

/* trees built by the parser keep their arrays in the set; adding to them
 * afterwards still works */
TEST(parsed_collections_grow) {
        dp_doc_set *s = dp_doc_set_new();
        const char *in = "{\"m\": {\"a\": 1}, \"l\": [1, 2]}";
        ASSERT_OK(dp_doc_parse(s, in, strlen(in), "t", NULL));
        dp_doc_node *r = dp_doc_root(s, 0), *m = dp_doc_get(r, "m"), *l = dp_doc_get(r, "l");
        for (int i = 0; i < 20; i++) {
                ASSERT_OK(dp_doc_map_add(s, m, i % 2 ? "x" : "y", dp_doc_new_int(s, i)));
                ASSERT_OK(dp_doc_seq_add(s, l, dp_doc_new_int(s, i)));
        }
        ASSERT_EQ(m->n, 21);
        ASSERT_EQ(l->n, 22);
        char *j = emit(l, DP_DOC_JSON_COMPACT);
        ASSERT_STREQ(j, "[1,2,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]");
        free(j);
        dp_doc_set_free(s);
}

typedef struct {
        size_t calls, fail_at;
        char seen[256];
} each_state;

static int each_fn(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        each_state *st = userdata;
        st->calls++;
        const char *k = NULL;
        (void)dp_doc_get_str(dp_doc_get(root, "k"), true, &k, NULL);
        size_t n = strlen(st->seen);
        snprintf(st->seen + n, sizeof st->seen - n, "%s%zu:%s@%u", n ? " " : "", index, k ? k : "?",
                 dp_doc_get(root, "k") ? dp_doc_get(root, "k")->line : 0);
        if (index == st->fail_at) return dp_error_set(err, -EINVAL, "%s: document %zu refused", source, index);
        return 0;
}

TEST(parse_each_hands_documents_one_at_a_time) {
        const char *y = "k: a\n---\n---\nk: b\n---\n{\"k\": \"c\"}\n";
        each_state st = {.fail_at = SIZE_MAX};
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_doc_parse_each(y, strlen(y), "s.yaml", each_fn, &st, &err));
        ASSERT_STREQ(st.seen, "0:a@1 1:b@4 2:c@6");
        /* fn fails: no more documents for it, its message stands */
        st = (each_state){.fail_at = 1};
        ASSERT_EQ(dp_doc_parse_each(y, strlen(y), "s.yaml", each_fn, &st, &err), -EINVAL);
        ASSERT_EQ(st.calls, 2);
        ASSERT_STREQ(err.msg, "s.yaml: document 1 refused");
        /* ... unless the input has a syntax error or a duplicate key further on */
        const char *bad = "k: a\n---\nk: b\n---\nk: [1\n";
        st = (each_state){.fail_at = 0};
        ASSERT_EQ(dp_doc_parse_each(bad, strlen(bad), "s.yaml", each_fn, &st, &err), -EINVAL);
        ASSERT_EQ(st.calls, 1);
        ASSERT_CONTAINS(err.msg, "s.yaml:6:1: invalid YAML");
        const char *dup = "k: a\n---\nk: b\nk: c\n";
        st = (each_state){.fail_at = 0};
        ASSERT_EQ(dp_doc_parse_each(dup, strlen(dup), "s.yaml", each_fn, &st, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "s.yaml:4:1: duplicate key \"k\"");
        /* a JSON input (fast path) is one document */
        const char *json = "\n{\"k\": \"j\"}\n";
        st = (each_state){.fail_at = SIZE_MAX};
        ASSERT_OK(dp_doc_parse_each(json, strlen(json), "s.json", each_fn, &st, &err));
        ASSERT_STREQ(st.seen, "0:j@2");
}

static int check_big(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        (void)source;
        (void)err;
        size_t *n = userdata;
        const dp_doc_node *a = dp_doc_get(root, "a"), *b = dp_doc_get(root, "b");
        if (!a || !b || a->len != 100 + index * 300 || b->len != 3000) return -EBADMSG;
        for (size_t i = 0; i < a->len; i++)
                if (a->str[i] != (char)('a' + index % 26)) return -EBADMSG;
        (*n)++;
        return 0;
}

/* documents whose strings fill a string block, or get blocks of their own,
 * one after another through the reused blocks */
TEST(parse_each_reuses_blocks) {
        dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t d = 0; d < 120; d++) {
                dp_strbuf_puts(&sb, "---\na: ");
                for (size_t i = 0; i < 100 + d * 300; i++) dp_strbuf_putc(&sb, (char)('a' + d % 26));
                dp_strbuf_puts(&sb, "\nb: ");
                for (size_t i = 0; i < 3000; i++) dp_strbuf_putc(&sb, 'x');
                dp_strbuf_puts(&sb, "\nl: [1, 2, 3, {x: y}]\n");
        }
        size_t n = 0;
        ASSERT_OK(dp_doc_parse_each(dp_strbuf_str(&sb), sb.len, "big", check_big, &n, NULL));
        ASSERT_EQ(n, 120);
        dp_strbuf_done(&sb);
}

/* one set for many trees in a row */
TEST(set_clear_reuses) {
        dp_doc_set *s = dp_doc_set_new();
        for (int round = 0; round < 3000; round++) {
                dp_doc_set_clear(s);
                dp_doc_node *m = dp_doc_new_map(s);
                ASSERT_OK(dp_doc_map_add(s, m, "round", dp_doc_new_int(s, round)));
                dp_doc_node *l = dp_doc_new_seq(s);
                for (int i = 0; i < 40; i++)
                        ASSERT_OK(dp_doc_seq_add(s, l, dp_doc_new_str(s, "some text to fill")));
                ASSERT_OK(dp_doc_map_add(s, m, "l", l));
                if (round % 1000 == 0) {
                        char *j = emit(m, DP_DOC_JSON_COMPACT);
                        ASSERT_TRUE(strncmp(j, "{\"round\":", 9) == 0);
                        free(j);
                }
        }
        dp_doc_set_clear(s);
        const char *in = "{\"a\": [1]}";
        ASSERT_OK(dp_doc_parse(s, in, strlen(in), "t", NULL));
        ASSERT_EQ(dp_doc_count(s), 1);
        dp_doc_set_free(s);
}
