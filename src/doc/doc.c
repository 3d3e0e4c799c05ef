/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>

#include "doc/doc-internal.h"

/* Nodes and strings live in blocks owned by the set (one allocation per
 * DOC_NODE_BLOCK nodes or DOC_STR_BLOCK bytes of strings, not one or two per
 * node): parsing a manifest of 100,000 nodes costs a few hundred mallocs
 * instead of 200,000, and freeing the set is a walk over the blocks. The
 * parser gathers a collection's children on one stack and copies them into
 * the string blocks when the collection ends (one exact-size array, no
 * realloc; such arrays have cap 0); only maps and sequences built with
 * dp_doc_map_add/dp_doc_seq_add grow arrays of their own. */
#define DOC_NODE_BLOCK 1024
#define DOC_STR_BLOCK (64u << 10)

dp_doc_set *dp_doc_set_new(void) { return calloc(1, sizeof(dp_doc_set)); }

/* the arrays of maps and sequences that have their own allocation (cap > 0) */
static void free_arrays(dp_doc_set *s) {
        for (size_t i = 0; i < s->n_nodes; i++) {
                dp_doc_node *n = &s->node_blocks[i / DOC_NODE_BLOCK][i % DOC_NODE_BLOCK];
                if (n->cap == 0) continue;
                dp_free_many(n->pairs, n->items);
        }
}

void doc_set_drop_all(dp_doc_set *s) {
        free_arrays(s);
        for (size_t i = 1; i < s->n_node_blocks; i++)
                free(s->node_blocks[i]);
        if (s->n_node_blocks > 1) s->n_node_blocks = 1;
        s->n_dropped += s->n_nodes;
        s->n_nodes = 0;
        /* the current string block stays too (it was DOC_STR_BLOCK long) */
        char *cur = s->str_free ? s->str_free + s->str_left - DOC_STR_BLOCK : NULL;
        for (size_t i = 0; i < s->n_str_blocks; i++)
                if (s->str_blocks[i] != cur) free(s->str_blocks[i]);
        s->n_str_blocks = 0;
        s->str_free = NULL;
        s->str_left = 0;
        if (cur) {
                s->str_blocks[s->n_str_blocks++] = cur;
                s->str_free = cur;
                s->str_left = DOC_STR_BLOCK;
        }
        for (size_t i = 0; i < s->n_roots; i++)
                free(s->sources[i]);
        s->n_roots = 0;
}

void dp_doc_set_clear(dp_doc_set *s) {
        if (!s) return;
        doc_set_drop_all(s);
        s->n_dropped = 0;
}

dp_doc_set *dp_doc_set_free(dp_doc_set *s) {
        if (!s) return NULL;
        free_arrays(s);
        for (size_t i = 0; i < s->n_node_blocks; i++)
                free(s->node_blocks[i]);
        for (size_t i = 0; i < s->n_str_blocks; i++)
                free(s->str_blocks[i]);
        for (size_t i = 0; i < s->n_roots; i++) free(s->sources[i]);
        dp_free_many(s->node_blocks, s->str_blocks, s->roots, s->sources);
        free(s);
        return NULL;
}

dp_doc_node *doc_node_new(dp_doc_set *s, dp_doc_type t) {
        if (doc_nodes_full(s)) return NULL;
        if (s->n_nodes % DOC_NODE_BLOCK == 0 && s->n_nodes / DOC_NODE_BLOCK == s->n_node_blocks) {
                if (DP_GROW(s->node_blocks, s->cap_node_blocks, s->n_node_blocks + 1) < 0) return NULL;
                dp_doc_node *b = malloc(DOC_NODE_BLOCK * sizeof *b);
                if (!b) return NULL;
                s->node_blocks[s->n_node_blocks++] = b;
        }
        dp_doc_node *n = &s->node_blocks[s->n_nodes / DOC_NODE_BLOCK][s->n_nodes % DOC_NODE_BLOCK];
        s->n_nodes++;
        *n = (dp_doc_node){.type = t};
        return n;
}

/* len + 1 bytes owned by the set (not NUL-terminated by this call) */
static char *str_alloc(dp_doc_set *s, size_t len) {
        size_t need = len + 1;
        if (need > s->str_left) {
                size_t size = need > DOC_STR_BLOCK / 4 ? need : DOC_STR_BLOCK;
                if (DP_GROW(s->str_blocks, s->cap_str_blocks, s->n_str_blocks + 1) < 0) return NULL;
                char *b = malloc(size);
                if (!b) return NULL;
                s->str_blocks[s->n_str_blocks++] = b;
                if (size != DOC_STR_BLOCK) return b; /* a long string: the current block stays */
                s->str_free = b;
                s->str_left = size;
        }
        char *d = s->str_free;
        s->str_free += need;
        s->str_left -= need;
        return d;
}

/* `size` bytes aligned for pointers, owned by the set */
void *doc_arena_alloc(dp_doc_set *s, size_t size) {
        size_t pad = (size_t)(-(uintptr_t)s->str_free & (sizeof(void *) - 1));
        if (s->str_left >= pad + size + 1) {
                s->str_free += pad;
                s->str_left -= pad;
        } else if (s->str_left && size + 1 <= DOC_STR_BLOCK / 4) {
                s->str_free += s->str_left; /* a new block (malloc aligns it) */
                s->str_left = 0;
        }
        return str_alloc(s, size);
}

static const char *own_string(dp_doc_set *s, const char *str) {
        size_t len = strlen(str);
        char *d = str_alloc(s, len);
        if (!d) return NULL;
        memcpy(d, str, len + 1);
        return d;
}

dp_doc_node *dp_doc_new_map(dp_doc_set *s) { return doc_node_new(s, DP_DOC_MAP); }
dp_doc_node *dp_doc_new_seq(dp_doc_set *s) { return doc_node_new(s, DP_DOC_SEQ); }

dp_doc_node *dp_doc_new_strn(dp_doc_set *s, const char *str, size_t len) {
        dp_doc_node *n = doc_node_new(s, DP_DOC_SCALAR);
        if (!n) return NULL;
        n->str = str_alloc(s, len);
        if (!n->str) return NULL; /* the node is freed with the set */
        memcpy(n->str, str, len);
        n->str[len] = 0;
        n->len = len;
        n->plain = false;
        return n;
}

dp_doc_node *dp_doc_new_str(dp_doc_set *s, const char *str) { return dp_doc_new_strn(s, str, strlen(str)); }

dp_doc_node *dp_doc_new_raw(dp_doc_set *s, const char *text) {
        dp_doc_node *n = dp_doc_new_str(s, text);
        if (n) n->plain = true;
        return n;
}

dp_doc_node *dp_doc_new_int(dp_doc_set *s, int64_t v) {
        char b[32];
        snprintf(b, sizeof b, "%" PRId64, v);
        return dp_doc_new_raw(s, b);
}
dp_doc_node *dp_doc_new_uint(dp_doc_set *s, uint64_t v) {
        char b[32];
        snprintf(b, sizeof b, "%" PRIu64, v);
        return dp_doc_new_raw(s, b);
}
dp_doc_node *dp_doc_new_bool(dp_doc_set *s, bool v) { return dp_doc_new_raw(s, v ? "true" : "false"); }
dp_doc_node *dp_doc_new_null(dp_doc_set *s) { return dp_doc_new_raw(s, "null"); }

/* `key` must stay as long as the set (a string it owns) */
/* A parsed collection's array lives in the set's blocks (cap 0): copy it to
 * an allocation of its own before it grows. */
static int own_array(dp_doc_node *n) {
        if (n->cap || n->n == 0) return 0;
        size_t esz = n->type == DP_DOC_MAP ? sizeof(dp_doc_pair) : sizeof(dp_doc_node *);
        void *old = n->type == DP_DOC_MAP ? (void *)n->pairs : (void *)n->items, *a = NULL;
        size_t cap = 0;
        if (dp_grow(&a, &cap, n->n, esz) < 0) return -ENOMEM;
        memcpy(a, old, n->n * esz);
        if (n->type == DP_DOC_MAP)
                n->pairs = a;
        else
                n->items = a;
        n->cap = cap;
        return 0;
}

static int map_add_owned(dp_doc_node *map, const char *key, dp_doc_node *value) {
        if (!map || !value || map->type != DP_DOC_MAP) return -ENOMEM;
        if (own_array(map) < 0 || DP_GROW(map->pairs, map->cap, map->n + 1) < 0) return -ENOMEM;
        map->pairs[map->n++] = (dp_doc_pair){key, NULL, value};
        return 0;
}

int dp_doc_map_add(dp_doc_set *s, dp_doc_node *map, const char *key, dp_doc_node *value) {
        if (!map || !value || map->type != DP_DOC_MAP) return -ENOMEM;
        const char *k = own_string(s, key);
        if (!k) return -ENOMEM;
        return map_add_owned(map, k, value);
}

int dp_doc_seq_add(dp_doc_set *s, dp_doc_node *seq, dp_doc_node *item) {
        (void)s;
        if (!seq || !item || seq->type != DP_DOC_SEQ) return -ENOMEM;
        if (own_array(seq) < 0 || DP_GROW(seq->items, seq->cap, seq->n + 1) < 0) return -ENOMEM;
        seq->items[seq->n++] = item;
        return 0;
}

int dp_doc_add_root(dp_doc_set *s, dp_doc_node *root, const char *source) {
        if (!root) return -ENOMEM;
        size_t cap = s->cap_roots;
        if (DP_GROW(s->roots, s->cap_roots, s->n_roots + 1) < 0) return -ENOMEM;
        if (DP_GROW(s->sources, cap, s->n_roots + 1) < 0) return -ENOMEM;
        char *src = strdup(source ? source : "<input>");
        if (!src) return -ENOMEM;
        s->roots[s->n_roots] = root;
        s->sources[s->n_roots++] = src;
        return 0;
}

size_t dp_doc_count(const dp_doc_set *s) { return s ? s->n_roots : 0; }
dp_doc_node *dp_doc_root(const dp_doc_set *s, size_t i) { return s && i < s->n_roots ? s->roots[i] : NULL; }
const char *dp_doc_source(const dp_doc_set *s, size_t i) { return s && i < s->n_roots ? s->sources[i] : NULL; }

/* ---- access ---- */

dp_doc_node *dp_doc_get(const dp_doc_node *map, const char *key) {
        if (!map || map->type != DP_DOC_MAP) return NULL;
        for (size_t i = 0; i < map->n; i++)
                if (streq(map->pairs[i].key, key)) return map->pairs[i].value;
        return NULL;
}

static bool is_int_text(const char *s) {
        if (*s == '-' || *s == '+') s++;
        if (!*s) return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9') return false;
        return true;
}

static bool is_float_text(const char *s) {
        if ((s[0] == '.' || ((s[0] == '-' || s[0] == '+') && s[1] == '.')) &&
            (streq(s, ".inf") || streq(s, "-.inf") || streq(s, "+.inf") || streq(s, ".nan") || streq(s, ".Inf") ||
            streq(s, "-.Inf") || streq(s, ".NaN") || streq(s, ".INF") || streq(s, "-.INF") || streq(s, ".NAN")))
                return true;
        const char *p = s;
        if (*p == '-' || *p == '+') p++;
        bool digits = false, dot = false;
        for (; *p && *p != 'e' && *p != 'E'; p++) {
                if (*p >= '0' && *p <= '9') digits = true;
                else if (*p == '.' && !dot) dot = true;
                else return false;
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

/* How the text of a plain scalar resolves. Only a few first bytes can start
 * anything but a string, so most text is told apart by its first byte. */
static dp_doc_scalar_kind plain_kind(const char *s) {
        switch (s[0]) {
        case 0: return DP_DOC_NULL;
        case '~': return s[1] ? DP_DOC_STR : DP_DOC_NULL;
        case 'n':
        case 'N':
                if (s[1] != 'u' && s[1] != 'U') return DP_DOC_STR; /* "name", "node-a" */
                return streq(s, "null") || streq(s, "Null") || streq(s, "NULL") ? DP_DOC_NULL : DP_DOC_STR;
        case 't':
        case 'T':
                if (s[1] != 'r' && s[1] != 'R') return DP_DOC_STR;
                return streq(s, "true") || streq(s, "True") || streq(s, "TRUE") ? DP_DOC_BOOL : DP_DOC_STR;
        case 'f':
        case 'F':
                if (s[1] != 'a' && s[1] != 'A') return DP_DOC_STR;
                return streq(s, "false") || streq(s, "False") || streq(s, "FALSE") ? DP_DOC_BOOL : DP_DOC_STR;
        default:
                if (!(s[0] == '+' || s[0] == '-' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return DP_DOC_STR;
                if (is_int_text(s)) return DP_DOC_INT;
                if (is_float_text(s)) return DP_DOC_FLOAT;
                return DP_DOC_STR;
        }
}

dp_doc_scalar_kind dp_doc_kind(const dp_doc_node *n) {
        if (!n) return DP_DOC_NULL;
        if (n->type != DP_DOC_SCALAR) return DP_DOC_STR; /* not meaningful; callers check type first */
        if (!n->plain) return DP_DOC_STR;
        return plain_kind(n->str);
}

bool dp_doc_is_null(const dp_doc_node *n) {
        return !n || (n->type == DP_DOC_SCALAR && dp_doc_kind(n) == DP_DOC_NULL);
}

const char *dp_doc_type_name(const dp_doc_node *n) {
        if (!n) return "null";
        if (n->type == DP_DOC_MAP) return "map";
        if (n->type == DP_DOC_SEQ) return "list";
        switch (dp_doc_kind(n)) {
        case DP_DOC_NULL: return "null";
        case DP_DOC_BOOL: return "boolean";
        case DP_DOC_INT: return "integer";
        case DP_DOC_FLOAT: return "number";
        default: return "string";
        }
}

int dp_doc_get_bool(const dp_doc_node *n, bool *ret, dp_error *err) {
        if (!n || n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_BOOL)
                return dp_error_set(err, -EINVAL, "expected boolean, got %s", dp_doc_type_name(n));
        *ret = n->str[0] == 't' || n->str[0] == 'T';
        return 0;
}

int dp_doc_get_int64(const dp_doc_node *n, int64_t *ret, dp_error *err) {
        if (!n || n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_INT)
                return dp_error_set(err, -EINVAL, "expected integer, got %s", dp_doc_type_name(n));
        errno = 0;
        char *end;
        long long v = strtoll(n->str, &end, 10);
        if (errno == ERANGE || *end) return dp_error_set(err, -ERANGE, "integer %s out of range", n->str);
        *ret = v;
        return 0;
}

int dp_doc_get_str(const dp_doc_node *n, bool lenient, const char **ret, dp_error *err) {
        if (!n || n->type != DP_DOC_SCALAR)
                return dp_error_set(err, -EINVAL, "expected string, got %s", dp_doc_type_name(n));
        dp_doc_scalar_kind k = dp_doc_kind(n);
        if (k == DP_DOC_NULL || (k != DP_DOC_STR && !lenient))
                return dp_error_set(err, -EINVAL, "expected string, got %s", dp_doc_type_name(n));
        if (memchr(n->str, 0, n->len)) return dp_error_set(err, -EINVAL, "string contains a NUL byte");
        *ret = n->str;
        return 0;
}

/* ---- emitting ----
 * Emitters run over every claim of a long List, so a line is written with
 * one reservation (dp_strbuf_room) where it can be: indentation is a copy
 * of one string of spaces, a JSON string is escaped straight into the
 * buffer, and each byte of a scalar is classified by a table lookup (YAML:
 * 8 bytes at once). tests/doc/test-doc-emit.c keeps the first, simple
 * emitters and compares. */

/* What follows the backslash for a byte that JSON output escapes (Go's
 * encoding/json: control bytes, quote, backslash, and <, >, & for HTML
 * safety; 'u' is \u00XX); 0 for a byte written as is. */
static const char json_escape[256] = {
        [0x00 ... 0x08] = 'u', ['\t'] = 't',  ['\n'] = 'n', [0x0b ... 0x0c] = 'u', ['\r'] = 'r', [0x0e ... 0x1f] = 'u',
        ['"'] = '"',           ['\\'] = '\\', ['<'] = 'u',  ['>'] = 'u',           ['&'] = 'u',
};

/* s escaped for a JSON string at q (room for 6 * n bytes); returns the end */
static char *json_escape_to(char *q, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        for (const char *end = s + n; s < end; s++) {
                unsigned char c = (unsigned char)*s;
                char e = json_escape[c];
                if (_likely_(!e)) {
                        *q++ = (char)c;
                        continue;
                }
                q[0] = '\\';
                q[1] = e;
                q += 2;
                if (e == 'u') {
                        q[0] = '0';
                        q[1] = '0';
                        q[2] = hex[c >> 4];
                        q[3] = hex[c & 15];
                        q += 4;
                }
        }
        return q;
}

/* Strings are escaped straight into the buffer, a chunk of input at a time
 * (room for the worst case: every byte \u00XX). */
#define JSON_CHUNK 4096

static void json_string(dp_strbuf *o, const char *s, size_t len) {
        bool first = true;
        do {
                size_t n = len < JSON_CHUNK ? len : JSON_CHUNK;
                char *p = dp_strbuf_room(o, 6 * n + 2), *q = p;
                if (!p) return;
                if (first) *q++ = '"';
                q = json_escape_to(q, s, n);
                s += n;
                len -= n;
                if (!len) *q++ = '"';
                dp_strbuf_wrote(o, (size_t)(q - p));
                first = false;
        } while (len);
}

#define SPACES8 "        "
/* a newline and 32 levels of indentation */
static const char nl_spaces[] = "\n" SPACES8 SPACES8 SPACES8 SPACES8 SPACES8 SPACES8 SPACES8 SPACES8;
#define SPACES_MAX (sizeof(nl_spaces) - 2)

/* A newline (with `nl`) and `level` levels of indentation. Up to 32 levels,
 * the whole string of spaces is copied (a copy of constant size is a few
 * stores) and only what is needed counted in. */
static void spaces(dp_strbuf *o, unsigned level, bool nl) {
        size_t n = 2 * (size_t)level;
        const char *from = nl ? nl_spaces : nl_spaces + 1;
        if (n <= SPACES_MAX) {
                char *p = dp_strbuf_room(o, SPACES_MAX + 1);
                if (!p) return;
                memcpy(p, from, SPACES_MAX + 1);
                dp_strbuf_wrote(o, n + nl);
                return;
        }
        if (nl) dp_strbuf_putc(o, '\n');
        for (; n > SPACES_MAX; n -= SPACES_MAX)
                dp_strbuf_append(o, nl_spaces + 1, SPACES_MAX);
        dp_strbuf_append(o, nl_spaces + 1, n);
}

static void indent(dp_strbuf *o, unsigned level) { spaces(o, level, false); }
static void newline_indent(dp_strbuf *o, unsigned level) { spaces(o, level, true); }

static void json_scalar(dp_strbuf *o, const dp_doc_node *n) {
        dp_doc_scalar_kind k = n->plain ? plain_kind(n->str) : DP_DOC_STR;
        if (k == DP_DOC_STR || (k == DP_DOC_FLOAT && (n->str[0] == '.' || strchr(n->str, 'n'))))
                json_string(o, n->str, n->len);
        else if (k == DP_DOC_NULL)
                dp_strbuf_append(o, "null", 4);
        else if (k == DP_DOC_BOOL)
                dp_strbuf_puts(o, (n->str[0] == 't' || n->str[0] == 'T') ? "true" : "false");
        else
                dp_strbuf_append(o, n->str, n->len);
}

/* What comes before the value of a map's pair: the comma after the pair
 * before it, the line and indentation (pretty), the key and the colon. */
static void json_key(dp_strbuf *o, const char *key, bool comma, bool pretty, unsigned level) {
        size_t len = strlen(key);
        char *p = len <= JSON_CHUNK && 2 * (size_t)level <= SPACES_MAX
                          ? dp_strbuf_room(o, 1 + (SPACES_MAX + 1) + 6 * len + 4)
                          : NULL;
        if (!p) {
                if (dp_strbuf_failed(o)) return;
                if (comma) dp_strbuf_putc(o, ',');
                if (pretty) newline_indent(o, level);
                json_string(o, key, len);
                dp_strbuf_append(o, ": ", pretty ? 2 : 1);
                return;
        }
        char *q = p;
        if (comma) *q++ = ',';
        if (pretty) {
                memcpy(q, nl_spaces, SPACES_MAX + 1); /* as spaces() does */
                q += 1 + 2 * (size_t)level;
        }
        *q++ = '"';
        q = json_escape_to(q, key, len);
        *q++ = '"';
        *q++ = ':';
        if (pretty) *q++ = ' ';
        dp_strbuf_wrote(o, (size_t)(q - p));
}

static void emit_json(dp_strbuf *o, const dp_doc_node *n, bool pretty, unsigned level) {
        if (n->type == DP_DOC_SCALAR) {
                json_scalar(o, n);
                return;
        }
        bool map = n->type == DP_DOC_MAP;
        dp_strbuf_putc(o, map ? '{' : '[');
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_node *v;
                if (map) {
                        json_key(o, n->pairs[i].key, i > 0, pretty, level + 1);
                        v = n->pairs[i].value;
                } else {
                        if (i) dp_strbuf_putc(o, ',');
                        if (pretty) newline_indent(o, level + 1);
                        v = n->items[i];
                }
                if (v->type == DP_DOC_SCALAR)
                        json_scalar(o, v);
                else
                        emit_json(o, v, pretty, level + 1);
        }
        if (pretty && n->n) newline_indent(o, level);
        dp_strbuf_putc(o, map ? '}' : ']');
}

/* Word-at-a-time tests, for yaml_needs_quotes() to pass over 8 plain bytes
 * at once: is any byte of w below n (n <= 128), or equal to c? Exact as
 * yes/no answers (they may mark other bytes than the one that matched,
 * which is not used). */
#define BYTES_ONES 0x0101010101010101ull
#define BYTES_HIGHS 0x8080808080808080ull
static inline uint64_t bytes_below(uint64_t w, unsigned n) { return (w - BYTES_ONES * n) & ~w & BYTES_HIGHS; }
static inline uint64_t bytes_equal(uint64_t w, unsigned char c) { return bytes_below(w ^ (BYTES_ONES * c), 1); }
static inline uint64_t load8(const char *p) {
        uint64_t w;
        memcpy(&w, p, sizeof(w));
        return w;
}

/* Byte classes for yaml_needs_quotes(). */
enum {
        Y_CTRL = 1,  /* never in a plain scalar */
        Y_MARK = 2,  /* ':' and '#': a problem next to a space */
        Y_NUM = 4,   /* can be part of a number in some YAML dialect */
        Y_FIRST = 8, /* an indicator (or a space): cannot start a plain scalar */
        Y_BREAK = 16, /* may start NEL, LS, PS or a C1 control */
};
static const unsigned char yaml_class[256] = {
        [0x00 ... 0x1f] = Y_CTRL,
        [0x7f] = Y_CTRL,
        ['#'] = Y_MARK | Y_FIRST,
        [':'] = Y_MARK | Y_NUM | Y_FIRST,
        ['0' ... '9'] = Y_NUM,
        ['a' ... 'f'] = Y_NUM,
        ['A' ... 'F'] = Y_NUM,
        ['x'] = Y_NUM,
        ['X'] = Y_NUM,
        ['o'] = Y_NUM,
        ['O'] = Y_NUM,
        ['_'] = Y_NUM,
        ['.'] = Y_NUM,
        ['+'] = Y_NUM,
        ['-'] = Y_NUM | Y_FIRST,
        ['?'] = Y_FIRST,
        [','] = Y_FIRST,
        ['['] = Y_FIRST,
        [']'] = Y_FIRST,
        ['{'] = Y_FIRST,
        ['}'] = Y_FIRST,
        ['&'] = Y_FIRST,
        ['*'] = Y_FIRST,
        ['!'] = Y_FIRST,
        ['|'] = Y_FIRST,
        ['>'] = Y_FIRST,
        ['\''] = Y_FIRST,
        ['"'] = Y_FIRST,
        ['%'] = Y_FIRST,
        ['@'] = Y_FIRST,
        ['`'] = Y_FIRST,
        ['~'] = Y_FIRST,
        [' '] = Y_FIRST,
        [0xc2] = Y_BREAK,
        [0xe2] = Y_BREAK,
};

/* What a YAML reader would not read back as it is, at s: NEL (U+0085), LS
 * (U+2028) and PS (U+2029), YAML 1.1 line breaks a reader folds or ends a
 * line at, and DEL and the other C1 controls (U+0080-U+009F), which libyaml
 * refuses unescaped. Their length (code point in *ret_cp), or 0. */
static size_t yaml_escape_at(const char *s, size_t n, unsigned *ret_cp) {
        const unsigned char *p = (const unsigned char *)s;
        if (n >= 1 && p[0] == 0x7f) {
                *ret_cp = 0x7f;
                return 1;
        }
        if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
                *ret_cp = p[1];
                return 2;
        }
        if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
                *ret_cp = 0x2000u | (p[2] - 0x80u);
                return 3;
        }
        return 0;
}

/* A double-quoted YAML scalar: JSON's escapes, and NEL, LS, PS, DEL and the
 * C1 controls escaped too (\u0085, \u2028, \u007f, ...), as characters a
 * reader would not read back as they are (JSON leaves them as they are). */
static void yaml_quoted(dp_strbuf *o, const char *s, size_t len) {
        if (!memchr(s, 0xc2, len) && !memchr(s, 0xe2, len) && !memchr(s, 0x7f, len)) {
                json_string(o, s, len);
                return;
        }
        static const char hex[] = "0123456789abcdef";
        dp_strbuf_putc(o, '"');
        const char *run = s, *end = s + len;
        for (const char *p = s; p < end;) {
                unsigned cp = 0;
                size_t n = yaml_escape_at(p, (size_t)(end - p), &cp);
                if (!n) {
                        p++;
                        continue;
                }
                char *q = dp_strbuf_room(o, 6 * (size_t)(p - run) + 6);
                if (!q) return;
                char *w = json_escape_to(q, run, (size_t)(p - run));
                memcpy(w, "\\u", 2);
                w[2] = hex[cp >> 12];
                w[3] = hex[(cp >> 8) & 15];
                w[4] = hex[(cp >> 4) & 15];
                w[5] = hex[cp & 15];
                dp_strbuf_wrote(o, (size_t)(w + 6 - q));
                p += n;
                run = p;
        }
        char *q = dp_strbuf_room(o, 6 * (size_t)(end - run) + 1);
        if (!q) return;
        char *w = json_escape_to(q, run, (size_t)(end - run));
        *w++ = '"';
        dp_strbuf_wrote(o, (size_t)(w - q));
}

/* YAML 1.1 booleans and other special plain words readers may resolve */
static bool is_yaml11_word(const char *s) {
        static const char *const words[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                            "on", "On", "ON", "off", "Off", "OFF"};
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(s, words[i])) return true;
        return false;
}

/* Must a string be quoted to read back as the same string in YAML? `s` has
 * a NUL at s[len]. */
static bool yaml_needs_quotes(const char *s, size_t len) {
        if (len == 0) return true;
        for (size_t i = 0; i < len;) {
                if (len - i >= 8) {
                        uint64_t w = load8(s + i);
                        if (!(bytes_below(w, 0x20) | bytes_equal(w, 0x7f) | bytes_equal(w, ':') |
                              bytes_equal(w, '#') | (w & BYTES_HIGHS))) {
                                i += 8;
                                continue;
                        }
                }
                for (size_t stop = len - i >= 8 ? i + 8 : len; i < stop; i++) {
                        unsigned char c = (unsigned char)s[i];
                        unsigned k = yaml_class[c];
                        if (_likely_(!(k & (Y_CTRL | Y_MARK | Y_BREAK)))) continue;
                        if (k & Y_CTRL) return true; /* NUL and control bytes */
                        if (k & Y_BREAK) {
                                unsigned cp;
                                if (yaml_escape_at(s + i, len - i, &cp)) return true;
                                continue;
                        }
                        if (c == ':' ? i + 1 < len && s[i + 1] == ' ' : i > 0 && s[i - 1] == ' ') return true;
                }
        }
        if (plain_kind(s) != DP_DOC_STR) return true;
        if (len <= 3 && is_yaml11_word(s)) return true;
        if (streq(s, "<<")) return true; /* a plain "<<" key is a merge key */
        if (yaml_class[(unsigned char)s[0]] & Y_FIRST) return true;
        if (s[len - 1] == ' ' || s[len - 1] == ':') return true;
        /* YAML 1.1 timestamps (2026-11-01, 2026-11-01T10:10:00Z): readers such
         * as PyYAML and go-yaml v2 would turn them into times */
        if (len >= 8 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
            s[3] >= '0' && s[3] <= '9' && s[4] == '-')
                return true;
        /* things that look numeric in other YAML dialects (0x1f, 1_000, 0o7) */
        if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '.') {
                unsigned all = Y_NUM;
                for (size_t i = 0; i < len && all; i++)
                        all &= yaml_class[(unsigned char)s[i]];
                if (all) return true;
        }
        return false;
}

/* Is a scalar's text (NUL at s[len]) written as it is? A plain one that
 * resolves to anything but a string is; else the string must read back as
 * itself. Otherwise it is written double-quoted (JSON's escapes are YAML's). */
static bool yaml_as_is(const char *s, size_t len, bool plain) {
        return (plain && plain_kind(s) != DP_DOC_STR) || !yaml_needs_quotes(s, len);
}

/* A scalar to the end of its line, after a space (`space`, after a key). */
static void yaml_scalar_line(dp_strbuf *o, const char *s, size_t len, bool plain, bool space) {
        if (!yaml_as_is(s, len, plain)) {
                if (space) dp_strbuf_putc(o, ' ');
                yaml_quoted(o, s, len);
                dp_strbuf_putc(o, '\n');
                return;
        }
        char *p = dp_strbuf_room(o, len + 2), *q = p;
        if (!p) return;
        if (space) *q++ = ' ';
        memcpy(q, s, len);
        q += len;
        *q++ = '\n';
        dp_strbuf_wrote(o, (size_t)(q - p));
}

/* A key and its colon, after the indentation (`indented`: not on a line
 * that "- " started). */
static void yaml_key(dp_strbuf *o, const char *key, bool indented, unsigned level) {
        size_t len = strlen(key);
        if (!yaml_as_is(key, len, false) || 2 * (size_t)level > SPACES_MAX) {
                if (indented) indent(o, level);
                if (yaml_as_is(key, len, false))
                        dp_strbuf_append(o, key, len);
                else
                        yaml_quoted(o, key, len);
                dp_strbuf_putc(o, ':');
                return;
        }
        char *p = dp_strbuf_room(o, SPACES_MAX + len + 1), *q = p;
        if (!p) return;
        if (indented) {
                memcpy(q, nl_spaces + 1, SPACES_MAX); /* as spaces() does */
                q += 2 * (size_t)level;
        }
        memcpy(q, key, len);
        q += len;
        *q++ = ':';
        dp_strbuf_wrote(o, (size_t)(q - p));
}

static bool is_empty_collection(const dp_doc_node *n) { return n->type != DP_DOC_SCALAR && n->n == 0; }

static void emit_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item);

static void emit_yaml_value(dp_strbuf *o, const dp_doc_node *v, unsigned level) {
        if (v->type == DP_DOC_SCALAR) {
                yaml_scalar_line(o, v->str, v->len, v->plain, true);
        } else if (is_empty_collection(v)) {
                dp_strbuf_append(o, v->type == DP_DOC_MAP ? " {}\n" : " []\n", 4);
        } else {
                dp_strbuf_putc(o, '\n');
                emit_yaml(o, v, v->type == DP_DOC_SEQ ? level : level + 1, false);
        }
}

/* One item of a sequence whose "- " is written. */
static void emit_yaml_item(dp_strbuf *o, const dp_doc_node *it, unsigned level) {
        if (it->type == DP_DOC_SCALAR || is_empty_collection(it))
                emit_yaml(o, it, 0, false);
        else if (it->type == DP_DOC_MAP)
                emit_yaml(o, it, level + 1, true);
        else {
                dp_strbuf_putc(o, '\n');
                emit_yaml(o, it, level + 1, false);
        }
}

static void emit_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item) {
        if (n->type == DP_DOC_SCALAR) {
                yaml_scalar_line(o, n->str, n->len, n->plain, false);
                return;
        }
        if (is_empty_collection(n)) {
                dp_strbuf_append(o, n->type == DP_DOC_MAP ? "{}\n" : "[]\n", 3);
                return;
        }
        for (size_t i = 0; i < n->n; i++) {
                bool indented = !(in_seq_item && i == 0);
                if (n->type == DP_DOC_MAP) {
                        yaml_key(o, n->pairs[i].key, indented, level);
                        emit_yaml_value(o, n->pairs[i].value, level);
                } else {
                        if (indented) indent(o, level);
                        dp_strbuf_append(o, "- ", 2);
                        emit_yaml_item(o, n->items[i], level);
                }
        }
}

void dp_doc_dump(dp_strbuf *out, const dp_doc_node *n) {
        if (!n) {
                dp_strbuf_puts(out, "-");
                return;
        }
        dp_strbuf_printf(out, "%d@%u:%u/%zu", (int)n->type, n->line, n->col, n->n);
        if (n->type == DP_DOC_SCALAR) {
                dp_strbuf_printf(out, "%c%zu:", n->plain ? 'p' : 'q', n->len);
                dp_strbuf_append(out, n->str, n->len);
                return;
        }
        dp_strbuf_putc(out, '(');
        for (size_t i = 0; i < n->n; i++) {
                if (n->type == DP_DOC_MAP) {
                        dp_strbuf_printf(out, "%zu:%s=", strlen(n->pairs[i].key), n->pairs[i].key);
                        dp_doc_dump(out, n->pairs[i].key_node);
                        dp_strbuf_putc(out, '=');
                        dp_doc_dump(out, n->pairs[i].value);
                } else {
                        dp_doc_dump(out, n->items[i]);
                }
                dp_strbuf_putc(out, ',');
        }
        dp_strbuf_putc(out, ')');
}

void dp_doc_emit(dp_strbuf *out, const dp_doc_node *n, dp_doc_format fmt) {
        if (!n) return;
        if (fmt == DP_DOC_YAML) {
                emit_yaml(out, n, 0, false);
        } else {
                emit_json(out, n, fmt == DP_DOC_JSON_PRETTY, 0);
                if (fmt == DP_DOC_JSON_PRETTY) dp_strbuf_putc(out, '\n');
        }
}

void dp_doc_emit_top_item(dp_strbuf *out, const dp_doc_node *it, size_t i, dp_doc_format fmt) {
        if (!it) return;
        if (fmt == DP_DOC_YAML) {
                /* emit_yaml() of the sequence at level 0, one item */
                dp_strbuf_append(out, "- ", 2);
                emit_yaml_item(out, it, 0);
                return;
        }
        /* emit_json() of the sequence at level 1, one item */
        bool pretty = fmt == DP_DOC_JSON_PRETTY;
        if (i) dp_strbuf_putc(out, ',');
        if (pretty) newline_indent(out, 2);
        emit_json(out, it, pretty, 2);
}
