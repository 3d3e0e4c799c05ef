/* SPDX-License-Identifier: Apache-2.0
 * The YAML reader of src/doc/doc-read.c builds what libyaml builds: every
 * input here is parsed with the readers of our own and with libyaml alone
 * (dp_doc_parse_libyaml, dp_doc_parse_each_libyaml), and the results must be
 * the same — return code, error message, trees with every string, plain flag,
 * line and column, the documents handed to the callback of dp_doc_parse_bulk
 * (the one parse the YAML reader serves) and of dp_doc_parse. */
#include <ftw.h>

#include "base/fileio.h"
#include "doc/doc.h"
#include "harness.h"

/* every document of a parse, or its error, as one string */
static char *parse_dump(const char *in, size_t len, bool fast) {
        dp_doc_set *s = dp_doc_set_new();
        dp_error err = DP_ERROR_INIT;
        int r = fast ? dp_doc_parse(s, in, len, "in.yaml", &err) : dp_doc_parse_libyaml(s, in, len, "in.yaml", &err);
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_printf(&sb, "%d %s\n", r, dp_error_msg(&err));
        for (size_t i = 0; r == 0 && i < dp_doc_count(s); i++) {
                dp_doc_dump(&sb, dp_doc_root(s, i));
                dp_strbuf_putc(&sb, '\n');
        }
        dp_doc_set_free(s);
        return dp_strbuf_steal(&sb);
}

typedef struct {
        dp_strbuf seen;
        size_t refuse;
} each_state;

static int each_fn(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        each_state *st = userdata;
        dp_strbuf_printf(&st->seen, "[%zu %s] ", index, source);
        dp_doc_dump(&st->seen, root);
        dp_strbuf_putc(&st->seen, '\n');
        if (index == st->refuse) return dp_error_set(err, -EBADMSG, "%s: document %zu refused", source, index);
        return 0;
}

static char *each_dump(const char *in, size_t len, bool fast, size_t refuse) {
        each_state st = {.seen = DP_STRBUF_INIT, .refuse = refuse};
        dp_error err = DP_ERROR_INIT;
        int r = fast ? dp_doc_parse_bulk(in, len, "in.yaml", each_fn, &st, &err)
                     : dp_doc_parse_each_libyaml(in, len, "in.yaml", each_fn, &st, &err);
        dp_strbuf_printf(&st.seen, "-> %d %s\n", r, dp_error_msg(&err));
        return dp_strbuf_steal(&st.seen);
}

static bool same_as_libyaml(const char *in, size_t len, const char *what) {
        bool ok = true;
        for (int round = 0; round < 3 && ok; round++) {
                char *a = round == 0 ? parse_dump(in, len, true) : each_dump(in, len, true, round == 1 ? SIZE_MAX : 1);
                char *b = round == 0 ? parse_dump(in, len, false) : each_dump(in, len, false, round == 1 ? SIZE_MAX : 1);
                if (strcmp(a, b) != 0) {
                        fprintf(stderr, "%s: the readers differ from libyaml (round %d)\n--- fast:\n%.2000s\n--- libyaml:\n%.2000s\n",
                                what, round, a, b);
                        ok = false;
                }
                free(a);
                free(b);
        }
        return ok;
}

static void check_same(const char *in) { ASSERT_TRUE(same_as_libyaml(in, strlen(in), in)); }

/* how far the readers get: the whole input, or where libyaml takes over */
static size_t reach(const char *in) { return dp_doc_fast_reach(in, strlen(in)); }

TEST(common_yaml_is_read_fast) {
        static const char *const inputs[] = {
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: x\nspec:\n  containers:\n"
                "  - name: c\n    image: \"img:1\"\n    args:\n    - --a\n    - '3600'\n    resources: {}\n",
                "metadata: {name: x, namespace: y}\n"
                "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 1}}]}}\n"
                "cel: {expression: \"device.driver == 'gpu.example.com'\"}\n",
                "# comment\n\n---\na: 1 # c\n\n  # indented comment\nb:\n- x\n-\n- y: 1\n  z:\n---\n---\n- - a\n  - b\n",
                "a:\n  - 1\n  -   b: 2\n      c: [x, 'y z', \"w\"]\nd: 'it''s'\n",
                "k: v\n",
                "[a, b]\n",
                "'root'\n",
                "root plain\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                check_same(inputs[i]);
                if (reach(inputs[i]) != strlen(inputs[i])) DP_FAIL("not read fast: %s", inputs[i]);
        }
}

/* Block scalars and scalars over several lines, as kubectl -o yaml writes
 * them (last-applied-configuration, long folded strings): read fast, the
 * same as libyaml to the byte and the mark. */
TEST(block_and_folded_scalars_are_read_fast) {
        static const char *const inputs[] = {
                "a: |\n  one\n    two\n\n  three\n",
                "a: |-\n  x\n\n\nb: |+\n  y\n\n\nc: >\n  f\n  g\n\n  h\n    i\n  j\nd: >-\n  x\n  y\n",
                "a: >+\n\n  lead\n\n",
                "a: |2-\n    two\n   one\nb: |1\n  x\n",
                "a: >2\n   m\n  n\n",
                "a: |\n  no newline at the end",
                "a: |-\n  x\n\n",
                "a: |\n\nb: 1\n",
                "a: |\n",
                "a: |",
                "a: | # comment\n  x\nb: >#c\n  y\n",
                "a: |\n  x\n   \n  y\n \n",
                "k: >\n folded\n\n  more\n  lines\n\n last\n",
                "- |\n  item\n- >-\n  a\n  b\n- k: |\n    nested\n  m: >\n    folded\n- - |\n    deep\n",
                "k:\n  |\n  text\n",
                "k:\n- |\n  in an indentless sequence\n- x\n",
                "|\n root\n",
                "a: |\n  x\n# comment\nb: 1\n",
                ("description: a long description that Go folds over several lines because\n  it is long, and it goes "
                 "on\n\n  after a blank line, a:b #c\nnext: x\n"),
                "- a\n  b\n- c\n  - d\n",
                "a:\n  b\n  c\nd: e\n",
                "root\nplain\n",
                "a: b\n  c # comment\nd: 1\n",
                "d: \"a \\\n  b\\ c\n  folded\n\n  para \\t\\x41\\u00e9\\U0001F600\\N\\_\\L\\P\\e\\0\\a\\v\\/\\ \"\n",
                "s: 'single\n  over lines '' with\n\n  a blank line'\n",
                "k: \"a  \n  b\"\n",
                "k: \"x\\\n\n  y\"\n",
                "- \"a\n  b\"\n- 'c\n\n  d'\n",
                "note: \"an escaped \\\"quote\\\" that Go\\\n  \\ folds with a backslash\"\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                check_same(inputs[i]);
                if (reach(inputs[i]) != strlen(inputs[i])) DP_FAIL("not read fast: %s", inputs[i]);
        }
        /* errors and what it leaves to libyaml, still the same */
        static const char *const others[] = {
                "a: |0\n x\n",
                "a: |\n    \n  less\n",
                "a: |x\n",
                "a: |\t\n  x\n",
                "a: |\n\t x\n",
                "k: \"a\n---\n b\"\n",
                "k: \"a\n",
                "k: 'a\n",
                "k: \"a\\'\"\n",
                "a: b\n  c: d\n",
                "a\n b: c\n",
                "'a\n b': c\n",
                "\"a\n b\": c\n",
                "- a\n\tb\n",
                "k: \"a\tb\"\n",
                "{a: \"b\n c\"}\n",
                "[a\n, b]\n",
                "a: \"\\ud800\"\n",
                "a: \"\\U00110000\"\n",
                "a: \"\\x4\"\n",
                "--- |\n  x\n",
                "a: b\n...\n",
                "a: |\n  x\n  ---\n",
                "a: >\n  x\n---\nb\n",
                "a: b\n  #c\n  d\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(others); i++)
                check_same(others[i]);
}

TEST(marks) {
        /* empty values are plain empty scalars just after ':' or '-';
         * block mappings start at their first key, sequences at '-' (an
         * indentless one too), flow collections at their bracket */
        const char *in = "a:\nb:   # c\nc:\n- x\n-\n- y: 1\n  z:\nq: {k: 'v'}\n";
        check_same(in);
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, in, strlen(in), "t", NULL));
        dp_doc_node *r = dp_doc_root(s, 0), *a = dp_doc_get(r, "a"), *b = dp_doc_get(r, "b"), *c = dp_doc_get(r, "c");
        ASSERT_TRUE(a->plain && a->len == 0 && a->line == 1 && a->col == 3);
        ASSERT_TRUE(b->line == 2 && b->col == 3);
        ASSERT_TRUE(c->type == DP_DOC_SEQ && c->line == 4 && c->col == 1);
        ASSERT_TRUE(c->items[1]->line == 5 && c->items[1]->col == 2 && c->items[1]->plain);
        ASSERT_TRUE(c->items[2]->type == DP_DOC_MAP && c->items[2]->line == 6 && c->items[2]->col == 3);
        dp_doc_node *z = dp_doc_get(c->items[2], "z");
        ASSERT_TRUE(z->line == 7 && z->col == 5);
        dp_doc_node *q = dp_doc_get(r, "q");
        ASSERT_TRUE(q->line == 8 && q->col == 4 && dp_doc_get(q, "k")->col == 8 && !dp_doc_get(q, "k")->plain);
        dp_doc_set_free(s);
        /* columns count characters, not bytes */
        check_same("caf\xc3\xa9: \"\xe2\x82\xac\" \n\xc3\xa9: [\xc3\xa9\xc3\xa9, 'x\xc3\xa9', \"y\"]\n");
        ASSERT_EQ(reach("caf\xc3\xa9: [\xc3\xa9, b]\n"), strlen("caf\xc3\xa9: [\xc3\xa9, b]\n"));
}

TEST(indentless_and_compact) {
        static const char *const inputs[] = {
                "a:\n- x\n- y\nb: 1\n",
                "a:\n- x:\n  - y\n  z: 1\n- w\nb:\n- - q\n",
                "- a: 1\n  b:\n    c: 2\n  d:\n  - e\n- - f\n  -\n  - g\n",
                "-   a: 1\n    b: 2\n-\n  c: 3\n",
                "a:\n  - 1\n  - 2\nb:\n    c: d\n",
                "  a: 1\n  b: 2\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                check_same(inputs[i]);
                ASSERT_EQ(reach(inputs[i]), strlen(inputs[i]));
        }
}

TEST(documents) {
        static const char *const inputs[] = {
                "---\na: 1\n", "a: 1\n---\n", "---\n---\n", "--- # c\nk: v\n--- \n- 1\n",
                "# only a comment\n", "", "\n\n", "---", "a: 1\n---\n\n# c\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                check_same(inputs[i]);
                ASSERT_EQ(reach(inputs[i]), strlen(inputs[i]));
        }
        /* what the reader leaves to libyaml, from the document it is in */
        ASSERT_EQ(reach("a: 1\n...\n"), 0);
        ASSERT_EQ(reach("a: 1\n--- b\n"), 5);
        ASSERT_EQ(reach("a: 1\n---\nb: 2\n%YAML 1.1\n---\nc: 3\n"), 5);
        check_same("a: 1\n...\n---\nb: 2\n");
        check_same("a: 1\n--- b\n");
        check_same("a: 1\n---\nb: 2\n%YAML 1.1\n---\nc: 3\n");
        check_same("a: 1\n---\nb: 2\n...\n%YAML 1.1\n---\nc: 3\n");
}

TEST(gives_up_in_third_document) {
        /* documents 1 and 2 are read here, the third (an anchor) and the rest
         * by libyaml: the error further on still names its line */
        const char *in = "a: 1\n---\nb: 2\n---\nc: &x 1\nd: 2\n---\ne: 1\n---\nf: [1,\n";
        ASSERT_EQ(reach(in), strlen("a: 1\n---\nb: 2\n"));
        check_same(in);
        dp_doc_set *s = dp_doc_set_new();
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_doc_parse(s, in, strlen(in), "s.yaml", &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "s.yaml:11:1: invalid YAML");
        /* the same input with the error mended: marks after the give-up */
        const char *ok = "a: 1\n---\nb: 2\n---\nc: &x 1\nd: 2\n---\ne: 1\n---\nf: [1, 2]\n";
        dp_doc_set_clear(s);
        ASSERT_OK(dp_doc_parse(s, ok, strlen(ok), "s.yaml", &err));
        ASSERT_EQ(dp_doc_count(s), 5);
        ASSERT_EQ(dp_doc_root(s, 4)->line, 10);
        ASSERT_EQ(dp_doc_get(dp_doc_root(s, 2), "d")->line, 6);
        check_same(ok);
        /* a duplicate key (the tree builder's error) in the third document */
        const char *dup = "a: 1\n---\nb: 2\n---\nc: 1\n# x\nc: 2\n";
        dp_doc_set_clear(s);
        ASSERT_EQ(dp_doc_parse(s, dup, strlen(dup), "s.yaml", &err), -EINVAL);
        ASSERT_STREQ(err.msg, "s.yaml:7:1: duplicate key \"c\"");
        check_same(dup);
        dp_doc_set_free(s);
}

TEST(takes_over_after_libyaml) {
        /* libyaml reads the documents the reader gives up in (a block scalar,
         * an anchor, a directive, a flow collection over two lines), the
         * reader the others; documents, marks and errors as libyaml's */
        const char *in = "a: 1\n---\nb: |\n  x\n---\nc: 2\n---\nd: &x 3\n...\n---\ne: 4\n---\n%YAML 1.1\n---\n"
                         "f: 5\n---\ng: [1,\n 2]\n---\nh: 6\n";
        check_same(in);
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, in, strlen(in), "t", NULL));
        ASSERT_EQ(dp_doc_count(s), 8);
        ASSERT_EQ(dp_doc_root(s, 7)->line, 20);
        ASSERT_EQ(dp_doc_get(dp_doc_root(s, 2), "c")->line, 6);
        dp_doc_set_free(s);
        check_same("a: 1\n---\nb: >\n  folded\n---\nc: [1\n---\nd: 2\n");
        check_same("a: 1\n---\nb: >\n  folded\n---\nc: 1\nc: 2\n---\nd: 2\n");
        check_same("a: &x 1\n---\nb: 2\n--- x\nc: 2\n---\nd: *x\n---\ne: 1\n");
}

TEST(gives_up) {
        /* each is left to libyaml (a few, block and multi-line scalars, are read
         * fast since), which must read it as before */
        static const char *const inputs[] = {
                "a: b: c\n", "a: b\n  c\n", "a:\n  b\n  c\nd: e\n", "a: |\n  text\n", "a: >\n  text\n",
                "a:\tb\n", "a: b\t# c\n", "a: 1\r\nb: 2\r\n", "%YAML 1.1\n---\na: 1\n", "a: !!str 1\n",
                "a: &x 1\nb: *x\n", "? a\n: b\n", "{a: b,\n c: d}\n", "[a:b, c]\n", "a: 1\n  b: 2\n",
                "- a\nb: c\n", "a: 1\n- b\n", "k: \"a\\x41\\N\\_\"\n", "\xef\xbb\xbf\x61: 1\n", "a: \"x\"y\n",
                "a: [a, b,]\n", "a: 'x\n  y'\n", "a: \"x\n  y\"\n", "a: 1\n \n  # c\n b: 2\n", "a: -\n",
                "a: - b\n", "- - a\n - b\n", "a: {b}\n", "a: {b: }\n", "{a: 1}: 2\n", "[1]: 2\n",
                "'a' b: c\n", "a:b\n", "a :b\n", "a: 1\n1\n", "---x\n", "...\n", "--- a: 1\n",
                "a: \xc2\x85x\n", "a: \xe2\x80\xa8x\n", "a: \x01\n", "a: \xff\n", "a: 1\na: 2\n",
                "a: 1 #c\n#d\n  e: 2\n", "a:#b\n", "a: b #c: d\n", "a: [b] c\n", "a: \"b\" #c\n \"d\"\n",
                "a:\n\t- b\n", "- a\n  - b\n", "a:\n  - b\n - c\n", "a:\n- b\n  - c\n", "-\ta\n", "- -a\n",
                "a: x:\n", "a: 'x'\n  : b\n", "!a\n", "a: ,b\n", "a: ]\n", "a: }\n", "a: b]\n", "a: [b]]\n",
                "@a\n", "`a\n", "a: %b\n", "[a, [b, {c: d, e: [f]}]]\n", "{a: [b, c], d: {e: f}} # c\n",
                "{\"a\": 1, 'b': 2, c: \"x\\ty\"}\n", "{a: 1, a: 2}\n", "a: [b, b]\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(inputs); i++)
                check_same(inputs[i]);
        /* a key libyaml no longer takes as a simple key */
        char big[1300];
        memset(big, 'k', 1100);
        strcpy(big + 1100, ": 1\n");
        check_same(big);
        ASSERT_EQ(reach(big), 0);
        big[0] = '{';
        strcpy(big + 1100, ": 1}\n");
        check_same(big);
        /* nesting past the limit, block and flow */
        dp_strbuf sb = DP_STRBUF_INIT;
        for (int d = 0; d < 101; d++) {
                for (int i = 0; i < d; i++) dp_strbuf_putc(&sb, ' ');
                dp_strbuf_puts(&sb, "k:\n");
        }
        check_same(dp_strbuf_str(&sb));
        dp_strbuf_truncate(&sb, 0);
        for (int d = 0; d < 101; d++) dp_strbuf_puts(&sb, "- ");
        dp_strbuf_puts(&sb, "x\n");
        check_same(dp_strbuf_str(&sb));
        dp_strbuf_truncate(&sb, 0);
        dp_strbuf_puts(&sb, "a: ");
        for (int d = 0; d < 101; d++) dp_strbuf_putc(&sb, '[');
        for (int d = 0; d < 101; d++) dp_strbuf_putc(&sb, ']');
        dp_strbuf_putc(&sb, '\n');
        check_same(dp_strbuf_str(&sb));
        /* duplicates in a map past the linear check */
        dp_strbuf_truncate(&sb, 0);
        for (int i = 0; i < 40; i++) dp_strbuf_printf(&sb, "k%d: %d\n", i == 30 ? 7 : i, i);
        check_same(dp_strbuf_str(&sb));
        dp_strbuf_done(&sb);
}

/* ---- every YAML file of the repository and of the shared conformance data ---- */

static size_t n_files, n_fast, n_partial, n_libyaml, n_diff, n_emitted, n_emitted_fast, n_emitted_other, n_emitted_slow;

/* each document written as YAML by dp_doc_emit (kubectl's style) */
static void check_emitted(const char *buf, size_t len, const char *path) {
        dp_doc_set *s = dp_doc_set_new();
        if (dp_doc_parse(s, buf, len, path, NULL) == 0)
                for (size_t i = 0; i < dp_doc_count(s); i++) {
                        dp_strbuf y = DP_STRBUF_INIT;
                        dp_doc_emit(&y, dp_doc_root(s, i), DP_DOC_YAML);
                        n_emitted++;
                        if (!same_as_libyaml(dp_strbuf_str(&y), y.len, path)) n_diff++;
                        /* all but those with characters it leaves to libyaml (controls, NEL, LS, PS) */
                        bool plain_text = true;
                        for (size_t k = 0; k < y.len; k++)
                                if (((uint8_t)y.buf[k] < 0x20 && y.buf[k] != '\n') || (uint8_t)y.buf[k] >= 0x7f)
                                        plain_text = false;
                        if (!plain_text) n_emitted_other++;
                        if (dp_doc_fast_reach(dp_strbuf_str(&y), y.len) == y.len)
                                n_emitted_fast++;
                        else if (plain_text)
                                n_emitted_slow++;
                        if (dp_doc_fast_reach(dp_strbuf_str(&y), y.len) != y.len && getenv("DP_YAML_GIVEUPS"))
                                fprintf(stderr, "gave up on document %zu of %s written as YAML\n", i, path);
                        dp_strbuf_done(&y);
                }
        dp_doc_set_free(s);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        const char *base = path + ftw->base;
        if (type == FTW_D && ftw->level > 0 && (base[0] == '.' || strncmp(base, "build", 5) == 0))
                return FTW_SKIP_SUBTREE;
        if (type != FTW_F) return FTW_CONTINUE;
        size_t l = strlen(base);
        if (!((l > 5 && streq(base + l - 5, ".yaml")) || (l > 4 && streq(base + l - 4, ".yml")))) return FTW_CONTINUE;
        char *buf = NULL;
        size_t len = 0;
        if (dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, NULL) < 0) return FTW_CONTINUE;
        n_files++;
        if (!same_as_libyaml(buf, len, path)) n_diff++;
        check_emitted(buf, len, path);
        size_t r = dp_doc_fast_reach(buf, len);
        if (r == len)
                n_fast++;
        else if (r > 0)
                n_partial++;
        else
                n_libyaml++;
        if (r != len && getenv("DP_YAML_GIVEUPS")) fprintf(stderr, "gave up at byte %zu of %zu: %s\n", r, len, path);
        free(buf);
        return FTW_CONTINUE;
}

TEST(repository_files) {
        const char *src = getenv("DP_SOURCE_DIR"), *shared = getenv("DP_SHARED_DIR");
        if (!src) src = "../..";
        ASSERT_EQ(nftw(src, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL), 0);
        size_t repo = n_files;
        char conf[4096];
        snprintf(conf, sizeof conf, "%s/conformance", shared ? shared : "../../../shared");
        if (access(conf, R_OK) == 0) ASSERT_EQ(nftw(conf, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL), 0);
        fprintf(stderr,
                "%zu YAML files (%zu in the repository, %zu conformance): %zu read fast whole, %zu partly, %zu by "
                "libyaml from the start; their %zu documents written as YAML: %zu read fast (%zu of them with non-ASCII "
                "text); %zu differ\n",
                n_files, repo, n_files - repo, n_fast, n_partial, n_libyaml, n_emitted, n_emitted_fast,
                n_emitted_other, n_diff);
        ASSERT_TRUE(repo > 100);
        ASSERT_EQ(n_diff, 0);
        ASSERT_EQ(n_emitted_slow, 0);
}
