/* SPDX-License-Identifier: Apache-2.0
 *
 * The emitters (doc/doc.c) against a reference: the first, byte-at-a-time
 * emitters, kept here as they were. The fast ones must write the same bytes
 * for every tree, in every format, whole or one List item at a time. */
#include "doc/doc.h"
#include "harness.h"

/* ---- the reference emitters ---- */

static bool ref_int_text(const char *s) {
        if (*s == '-' || *s == '+') s++;
        if (!*s) return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9') return false;
        return true;
}

static bool ref_float_text(const char *s) {
        if (streq(s, ".inf") || streq(s, "-.inf") || streq(s, "+.inf") || streq(s, ".nan") || streq(s, ".Inf") ||
            streq(s, "-.Inf") || streq(s, ".NaN") || streq(s, ".INF") || streq(s, "-.INF") || streq(s, ".NAN"))
                return true;
        const char *p = s;
        if (*p == '-' || *p == '+') p++;
        bool digits = false, dot = false;
        for (; *p && *p != 'e' && *p != 'E'; p++) {
                if (*p >= '0' && *p <= '9')
                        digits = true;
                else if (*p == '.' && !dot)
                        dot = true;
                else
                        return false;
        }
        if (!digits) return false;
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '-' || *p == '+') p++;
                if (!*p) return false;
                for (; *p; p++)
                        if (*p < '0' || *p > '9') return false;
                return true;
        }
        return dot;
}

static dp_doc_scalar_kind ref_kind(const dp_doc_node *n) {
        if (!n->plain) return DP_DOC_STR;
        const char *s = n->str;
        if (!*s || streq(s, "~") || streq(s, "null") || streq(s, "Null") || streq(s, "NULL")) return DP_DOC_NULL;
        if (streq(s, "true") || streq(s, "True") || streq(s, "TRUE") || streq(s, "false") || streq(s, "False") ||
            streq(s, "FALSE"))
                return DP_DOC_BOOL;
        if (ref_int_text(s)) return DP_DOC_INT;
        if (ref_float_text(s)) return DP_DOC_FLOAT;
        return DP_DOC_STR;
}

static void ref_json_string(dp_strbuf *o, const char *s, size_t len) {
        static const char hex[] = "0123456789abcdef";
        dp_strbuf_putc(o, '"');
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                switch (c) {
                case '"': dp_strbuf_puts(o, "\\\""); break;
                case '\\': dp_strbuf_puts(o, "\\\\"); break;
                case '\n': dp_strbuf_puts(o, "\\n"); break;
                case '\r': dp_strbuf_puts(o, "\\r"); break;
                case '\t': dp_strbuf_puts(o, "\\t"); break;
                case '<':
                case '>':
                case '&':
                        dp_strbuf_puts(o, "\\u00");
                        dp_strbuf_putc(o, hex[c >> 4]);
                        dp_strbuf_putc(o, hex[c & 15]);
                        break;
                default:
                        if (c < 0x20) {
                                dp_strbuf_puts(o, "\\u00");
                                dp_strbuf_putc(o, hex[c >> 4]);
                                dp_strbuf_putc(o, hex[c & 15]);
                        } else {
                                dp_strbuf_putc(o, (char)c);
                        }
                }
        }
        dp_strbuf_putc(o, '"');
}

/* NEL, LS, PS, DEL or a C1 control at s[i]: their code point, or 0 */
static unsigned ref_break(const char *s, size_t len, size_t i) {
        const unsigned char *p = (const unsigned char *)s + i;
        if (p[0] == 0x7f) return 0x7f;
        if (i + 2 <= len && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) return p[1];
        if (i + 3 <= len && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
                return 0x2000u | (p[2] - 0x80u);
        return 0;
}

/* YAML: as JSON, NEL, LS and PS escaped too (readers take them for line breaks) */
static void ref_yaml_string(dp_strbuf *o, const char *s, size_t len) {
        dp_strbuf_putc(o, '"');
        size_t run = 0;
        for (size_t i = 0; i <= len; i++) {
                unsigned cp = i < len ? ref_break(s, len, i) : 0;
                if (i < len && !cp) continue;
                dp_strbuf tmp = DP_STRBUF_INIT;
                ref_json_string(&tmp, s + run, i - run);
                dp_strbuf_append(o, tmp.buf + 1, tmp.len - 2);
                dp_strbuf_done(&tmp);
                if (cp) {
                        dp_strbuf_printf(o, "\\u%04x", cp);
                        i += cp == 0x7f ? 0 : cp < 0x100 ? 1 : 2;
                        run = i + 1;
                }
        }
        dp_strbuf_putc(o, '"');
}

static void ref_indent(dp_strbuf *o, unsigned level) {
        for (unsigned i = 0; i < level; i++)
                dp_strbuf_puts(o, "  ");
}

static void ref_json(dp_strbuf *o, const dp_doc_node *n, bool pretty, unsigned level) {
        if (n->type == DP_DOC_SCALAR) {
                dp_doc_scalar_kind k = ref_kind(n);
                if (k == DP_DOC_STR || (k == DP_DOC_FLOAT && n->str[0] == '.') ||
                    (k == DP_DOC_FLOAT && strchr(n->str, 'n')))
                        ref_json_string(o, n->str, n->len);
                else if (k == DP_DOC_NULL)
                        dp_strbuf_puts(o, "null");
                else if (k == DP_DOC_BOOL)
                        dp_strbuf_puts(o, (n->str[0] == 't' || n->str[0] == 'T') ? "true" : "false");
                else
                        dp_strbuf_append(o, n->str, n->len);
                return;
        }
        bool map = n->type == DP_DOC_MAP;
        dp_strbuf_putc(o, map ? '{' : '[');
        for (size_t i = 0; i < n->n; i++) {
                if (i) dp_strbuf_putc(o, ',');
                if (pretty) {
                        dp_strbuf_putc(o, '\n');
                        ref_indent(o, level + 1);
                }
                if (map) {
                        ref_json_string(o, n->pairs[i].key, strlen(n->pairs[i].key));
                        dp_strbuf_puts(o, pretty ? ": " : ":");
                        ref_json(o, n->pairs[i].value, pretty, level + 1);
                } else {
                        ref_json(o, n->items[i], pretty, level + 1);
                }
        }
        if (pretty && n->n) {
                dp_strbuf_putc(o, '\n');
                ref_indent(o, level);
        }
        dp_strbuf_putc(o, map ? '}' : ']');
}

static bool ref_needs_quotes(const char *s, size_t len) {
        if (len == 0 || memchr(s, 0, len)) return true;
        dp_doc_node tmp = {.type = DP_DOC_SCALAR, .str = (char *)s, .len = len, .plain = true};
        if (ref_kind(&tmp) != DP_DOC_STR) return true;
        static const char *const words[] = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                            "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(s, words[i])) return true;
        if (streq(s, "<<")) return true; /* a merge key */
        if (strchr("-?:,[]{}#&*!|>'\"%@`~ ", s[0])) return true;
        if (s[len - 1] == ' ' || s[len - 1] == ':') return true;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x20 || c == 0x7f) return true;
                if (c == ':' && i + 1 < len && s[i + 1] == ' ') return true;
                if (c == '#' && i > 0 && s[i - 1] == ' ') return true;
                if (ref_break(s, len, i)) return true;
        }
        if (len >= 8 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
            s[3] >= '0' && s[3] <= '9' && s[4] == '-')
                return true;
        if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '.') {
                bool all = true;
                for (size_t i = 0; i < len && all; i++)
                        all = strchr("0123456789abcdefABCDEFxXoO_:.+-eE", s[i]) != NULL;
                if (all) return true;
        }
        return false;
}

static void ref_yaml_scalar(dp_strbuf *o, const dp_doc_node *n) {
        dp_doc_scalar_kind k = ref_kind(n);
        if ((n->plain && k != DP_DOC_STR) || !ref_needs_quotes(n->str, n->len))
                dp_strbuf_append(o, n->str, n->len);
        else
                ref_yaml_string(o, n->str, n->len);
}

static bool ref_empty(const dp_doc_node *n) { return n->type != DP_DOC_SCALAR && n->n == 0; }

static void ref_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item);

static void ref_yaml_value(dp_strbuf *o, const dp_doc_node *v, unsigned level) {
        if (v->type == DP_DOC_SCALAR) {
                dp_strbuf_putc(o, ' ');
                ref_yaml_scalar(o, v);
                dp_strbuf_putc(o, '\n');
        } else if (ref_empty(v)) {
                dp_strbuf_puts(o, v->type == DP_DOC_MAP ? " {}\n" : " []\n");
        } else {
                dp_strbuf_putc(o, '\n');
                ref_yaml(o, v, v->type == DP_DOC_SEQ ? level : level + 1, false);
        }
}

static void ref_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item) {
        if (n->type == DP_DOC_SCALAR) {
                ref_yaml_scalar(o, n);
                dp_strbuf_putc(o, '\n');
                return;
        }
        if (ref_empty(n)) {
                dp_strbuf_puts(o, n->type == DP_DOC_MAP ? "{}\n" : "[]\n");
                return;
        }
        for (size_t i = 0; i < n->n; i++) {
                if (!(in_seq_item && i == 0)) ref_indent(o, level);
                if (n->type == DP_DOC_MAP) {
                        const char *key = n->pairs[i].key;
                        dp_doc_node k = {.type = DP_DOC_SCALAR, .str = (char *)key, .len = strlen(key)};
                        ref_yaml_scalar(o, &k);
                        dp_strbuf_putc(o, ':');
                        ref_yaml_value(o, n->pairs[i].value, level);
                } else {
                        const dp_doc_node *it = n->items[i];
                        dp_strbuf_puts(o, "- ");
                        if (it->type == DP_DOC_SCALAR || ref_empty(it))
                                ref_yaml(o, it, 0, false);
                        else if (it->type == DP_DOC_MAP)
                                ref_yaml(o, it, level + 1, true);
                        else {
                                dp_strbuf_putc(o, '\n');
                                ref_yaml(o, it, level + 1, false);
                        }
                }
        }
}

static void ref_emit(dp_strbuf *out, const dp_doc_node *n, dp_doc_format fmt) {
        if (fmt == DP_DOC_YAML) {
                ref_yaml(out, n, 0, false);
        } else {
                ref_json(out, n, fmt == DP_DOC_JSON_PRETTY, 0);
                if (fmt == DP_DOC_JSON_PRETTY) dp_strbuf_putc(out, '\n');
        }
}

/* ---- random trees ---- */

static uint64_t rng_state;
static unsigned rnd(unsigned n) {
        rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
        return (unsigned)((rng_state >> 33) % n);
}

/* pieces that strings are made of: escapes, YAML indicators, words and
 * numbers readers resolve, non-ASCII (UTF-8), a NUL */
static const char *const pieces[] = {
        "a",
        "claim-0",
        "gpu.example.com",
        "Z",
        "0",
        "1",
        "42",
        "-",
        "+",
        ".",
        ":",
        ": ",
        " ",
        " #",
        "#",
        "\"",
        "\\",
        "\n",
        "\r",
        "\t",
        "\x01",
        "\x1f",
        "\x7f",
        "\xc2\x85",
        "\xe2\x80\xa8",
        "\xe2\x80\xa9",
        "\xe2\x80",
        "<",
        ">",
        "&",
        "\xc3\xa9",
        "\xe6\x97\xa5\xe6\x9c\xac",
        "\xf0\x9f\x98\x80",
        "~",
        "null",
        "Null",
        "NULL",
        "true",
        "False",
        "yes",
        "No",
        "on",
        "OFF",
        "y",
        "n",
        "0x1f",
        "1_000",
        "0o7",
        "2026-11-01",
        "T10:10:00Z",
        ".inf",
        "-.Inf",
        ".nan",
        "1e5",
        "1.5",
        "-3",
        "E",
        "x",
        "{",
        "}",
        "[",
        "]",
        "'",
        "%",
        "@",
        "`",
        "!",
        "|",
        "*",
        "?",
        ",",
        "nan",
        "inf",
        "\0",
};

static size_t random_text(char *buf, size_t cap, bool nul_ok) {
        size_t len = 0, parts = rnd(5);
        for (size_t i = 0; i < parts; i++) {
                size_t k = rnd(ELEMENTSOF(pieces));
                /* "\0" is one byte; strlen of it is 0 */
                size_t pl = strlen(pieces[k]);
                if (pl == 0 && !nul_ok) continue;
                if (pl == 0) pl = 1;
                if (len + pl >= cap) break;
                memcpy(buf + len, pieces[k], pl);
                len += pl;
        }
        buf[len] = 0;
        return len;
}

static dp_doc_node *random_tree(dp_doc_set *s, unsigned depth) {
        char buf[128];
        unsigned what = depth == 0 ? 0 : rnd(5);
        if (what <= 1) {
                bool plain = rnd(2);
                size_t len = random_text(buf, sizeof buf, !plain);
                dp_doc_node *n = plain ? dp_doc_new_raw(s, buf) : dp_doc_new_strn(s, buf, len);
                ASSERT_TRUE(n);
                return n;
        }
        unsigned n = rnd(5);
        if (what <= 3) {
                dp_doc_node *m = dp_doc_new_map(s);
                for (unsigned i = 0; i < n; i++) {
                        random_text(buf, sizeof buf, false);
                        ASSERT_OK(dp_doc_map_add(s, m, buf, random_tree(s, depth - 1)));
                }
                return m;
        }
        dp_doc_node *q = dp_doc_new_seq(s);
        for (unsigned i = 0; i < n; i++)
                ASSERT_OK(dp_doc_seq_add(s, q, random_tree(s, depth - 1)));
        return q;
}

static void check_tree(const dp_doc_node *t) {
        static const dp_doc_format formats[] = {DP_DOC_JSON_COMPACT, DP_DOC_JSON_PRETTY, DP_DOC_YAML};
        for (size_t f = 0; f < ELEMENTSOF(formats); f++) {
                _cleanup_strbuf_ dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                ref_emit(&a, t, formats[f]);
                dp_doc_emit(&b, t, formats[f]);
                if (a.len != b.len || memcmp(dp_strbuf_str(&a), dp_strbuf_str(&b), a.len) != 0)
                        DP_FAIL("format %zu:\nreference:\n%s\nemitted:\n%s", f, dp_strbuf_str(&a), dp_strbuf_str(&b));
                ASSERT_EQ(strlen(dp_strbuf_str(&b)), b.len);
        }
}

TEST(emit_same_as_reference_on_random_trees) {
        rng_state = 1;
        for (int round = 0; round < 3000; round++) {
                dp_doc_set *s = dp_doc_set_new();
                check_tree(random_tree(s, 1 + (unsigned)rnd(6)));
                dp_doc_set_free(s);
        }
}

/* A List written item by item is the List written whole. */
TEST(emit_top_item_same_as_whole_list) {
        rng_state = 7;
        static const dp_doc_format formats[] = {DP_DOC_JSON_COMPACT, DP_DOC_JSON_PRETTY, DP_DOC_YAML};
        for (int round = 0; round < 500; round++) {
                dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *items = dp_doc_new_seq(s), *list = dp_doc_new_map(s);
                unsigned n = 1 + rnd(4);
                for (unsigned i = 0; i < n; i++)
                        ASSERT_OK(dp_doc_seq_add(s, items, random_tree(s, rnd(5))));
                ASSERT_OK(dp_doc_map_add(s, list, "items", items));
                for (size_t f = 0; f < ELEMENTSOF(formats); f++) {
                        _cleanup_strbuf_ dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                        ref_emit(&a, list, formats[f]);
                        bool json = formats[f] != DP_DOC_YAML, pretty = formats[f] == DP_DOC_JSON_PRETTY;
                        dp_strbuf_puts(&b, !json ? "items:\n" : pretty ? "{\n  \"items\": [" : "{\"items\":[");
                        for (unsigned i = 0; i < n; i++)
                                dp_doc_emit_top_item(&b, items->items[i], i, formats[f]);
                        if (json) dp_strbuf_puts(&b, pretty ? "\n  ]\n}\n" : "]}");
                        ASSERT_STREQ(dp_strbuf_str(&b), dp_strbuf_str(&a));
                }
                dp_doc_set_free(s);
        }
}

TEST(emit_kind_same_as_reference) {
        rng_state = 3;
        char buf[128];
        for (int i = 0; i < 20000; i++) {
                random_text(buf, sizeof buf, false);
                dp_doc_node n = {.type = DP_DOC_SCALAR, .str = buf, .len = strlen(buf), .plain = true};
                if (dp_doc_kind(&n) != ref_kind(&n))
                        DP_FAIL("kind of \"%s\": %d, reference %d", buf, dp_doc_kind(&n), ref_kind(&n));
        }
}

/* Deeper than the emitters' string of spaces, and nested sequences. */
TEST(emit_deep_trees) {
        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *leaf = dp_doc_new_str(s, "deep: value"), *t = leaf;
        for (int i = 0; i < 90; i++) {
                dp_doc_node *m = i % 3 == 2 ? dp_doc_new_seq(s) : dp_doc_new_map(s);
                if (m->type == DP_DOC_SEQ) {
                        ASSERT_OK(dp_doc_seq_add(s, m, t));
                        ASSERT_OK(dp_doc_seq_add(s, m, dp_doc_new_int(s, i)));
                } else {
                        ASSERT_OK(dp_doc_map_add(s, m, i % 2 ? "k" : "a key", t));
                }
                t = m;
        }
        check_tree(t);
        dp_doc_set_free(s);
}

/* Strings longer than what the JSON emitter escapes in one go. */
TEST(emit_long_strings) {
        rng_state = 11;
        static char buf[20000];
        for (int round = 0; round < 20; round++) {
                size_t len = 0, want = 4000 + rnd(12000);
                while (len < want) {
                        const char *p = pieces[rnd(ELEMENTSOF(pieces))];
                        size_t pl = strlen(p) ? strlen(p) : 1;
                        memcpy(buf + len, p, pl);
                        len += pl;
                }
                dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *m = dp_doc_new_map(s);
                ASSERT_OK(dp_doc_map_add(s, m, "s", dp_doc_new_strn(s, buf, len)));
                buf[len] = 0;
                ASSERT_OK(dp_doc_map_add(s, m, buf + len / 2, dp_doc_new_str(s, "v")));
                check_tree(m);
                dp_doc_set_free(s);
        }
}

/* Fixed expectations for what needs escaping and quoting. */
TEST(emit_escapes_and_quotes) {
        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *m = dp_doc_new_map(s);
        ASSERT_OK(dp_doc_map_add(s, m, "esc", dp_doc_new_strn(s, "a\"b\\c\n\t\r\x01<>&\x7f\0z", 15)));
        ASSERT_OK(dp_doc_map_add(s, m, "utf8", dp_doc_new_str(s, "caf\xc3\xa9 \xe6\x97\xa5")));
        ASSERT_OK(dp_doc_map_add(s, m, "empty map", dp_doc_new_map(s)));
        ASSERT_OK(dp_doc_map_add(s, m, "[]", dp_doc_new_seq(s)));
        ASSERT_OK(dp_doc_map_add(s, m, "num", dp_doc_new_str(s, "0x1F")));
        ASSERT_OK(dp_doc_map_add(s, m, "inf", dp_doc_new_raw(s, ".inf")));
        ASSERT_OK(dp_doc_map_add(s, m, "neg", dp_doc_new_raw(s, "-12")));
        ASSERT_OK(dp_doc_map_add(s, m, "hash", dp_doc_new_str(s, "a #b")));
        ASSERT_OK(dp_doc_map_add(s, m, "colon", dp_doc_new_str(s, "a:b")));
        dp_strbuf j = DP_STRBUF_INIT, y = DP_STRBUF_INIT;
        dp_doc_emit(&j, m, DP_DOC_JSON_COMPACT);
        ASSERT_STREQ(dp_strbuf_str(&j),
                     "{\"esc\":\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u003c\\u003e\\u0026\x7f\\u0000z\","
                     "\"utf8\":\"caf\xc3\xa9 \xe6\x97\xa5\",\"empty map\":{},\"[]\":[],"
                     "\"num\":\"0x1F\",\"inf\":\".inf\",\"neg\":-12,\"hash\":\"a #b\",\"colon\":\"a:b\"}");
        dp_doc_emit(&y, m, DP_DOC_YAML);
        ASSERT_STREQ(dp_strbuf_str(&y), "esc: \"a\\\"b\\\\c\\n\\t\\r\\u0001\\u003c\\u003e\\u0026\\u007f\\u0000z\"\n"
                                        "utf8: caf\xc3\xa9 \xe6\x97\xa5\nempty map: {}\n\"[]\": []\nnum: \"0x1F\"\n"
                                        "inf: .inf\nneg: -12\nhash: \"a #b\"\ncolon: a:b\n");
        dp_strbuf_done(&j);
        dp_strbuf_done(&y);
        dp_doc_set_free(s);
}

/* NEL, LS and PS are line breaks to a YAML reader: written plain (or raw
 * inside double quotes) they would come back as spaces or line ends */
TEST(emit_yaml_escapes_unicode_line_breaks_and_controls) {
        static const char *const strs[] = {"a\xe2\x80\xa8\x62",        "\xc2\x85",
                                           "x \xe2\x80\xa9 y",         "caf\xc3\xa9\xc2\x85",
                                           "\xe2\x80\xa8\xe2\x80\xa8", "a\"\xe2\x80\xa9<",
                                           "a\177b",
                                           "\xc2\x80x\xc2\x9f"};
        static const char *const want[] = {"k: \"a\\u2028b\"\n",      "k: \"\\u0085\"\n",
                                           "k: \"x \\u2029 y\"\n",    "k: \"caf\xc3\xa9\\u0085\"\n",
                                           "k: \"\\u2028\\u2028\"\n", "k: \"a\\\"\\u2029\\u003c\"\n",
                                           "k: \"a\\u007fb\"\n",         "k: \"\\u0080x\\u009f\"\n"};
        for (size_t i = 0; i < ELEMENTSOF(strs); i++) {
                dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *m = dp_doc_new_map(s);
                ASSERT_OK(dp_doc_map_add(s, m, "k", dp_doc_new_str(s, strs[i])));
                dp_strbuf y = DP_STRBUF_INIT;
                dp_doc_emit(&y, m, DP_DOC_YAML);
                ASSERT_STREQ(dp_strbuf_str(&y), want[i]);
                /* libyaml reads the same string back, as a key too */
                dp_doc_set *back = dp_doc_set_new();
                ASSERT_OK(dp_doc_parse_libyaml(back, dp_strbuf_str(&y), y.len, "back", NULL));
                ASSERT_STREQ(dp_doc_get(dp_doc_root(back, 0), "k")->str, strs[i]);
                dp_doc_node *m2 = dp_doc_new_map(s);
                ASSERT_OK(dp_doc_map_add(s, m2, strs[i], dp_doc_new_str(s, "v")));
                dp_strbuf_truncate(&y, 0);
                dp_doc_emit(&y, m2, DP_DOC_YAML);
                dp_doc_set_clear(back);
                ASSERT_OK(dp_doc_parse_libyaml(back, dp_strbuf_str(&y), y.len, "back", NULL));
                ASSERT_TRUE(dp_doc_get(dp_doc_root(back, 0), strs[i]) != NULL);
                /* JSON leaves them as they are */
                dp_strbuf_truncate(&y, 0);
                dp_doc_emit(&y, m, DP_DOC_JSON_COMPACT);
                ASSERT_TRUE(!strstr(dp_strbuf_str(&y), "\\u2028") && !strstr(dp_strbuf_str(&y), "\\u2029") &&
                            !strstr(dp_strbuf_str(&y), "\\u0085"));
                dp_strbuf_done(&y);
                dp_doc_set_free(back);
                dp_doc_set_free(s);
        }
}
