/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <yaml.h>

#include "base/doc.h"
#include "base/fileio.h"

/* Nodes and strings live in blocks owned by the set (one allocation per
 * DOC_NODE_BLOCK nodes or DOC_STR_BLOCK bytes of strings, not one or two per
 * node): parsing a manifest of 100,000 nodes costs a few hundred mallocs
 * instead of 200,000, and freeing the set is a walk over the blocks. Only
 * the pair and item arrays of maps and sequences grow on their own. */
#define DOC_NODE_BLOCK 1024
#define DOC_STR_BLOCK (64u << 10)

struct dp_doc_set {
        dp_doc_node **node_blocks; /* DOC_NODE_BLOCK nodes each, the last one partly used */
        size_t n_node_blocks, cap_node_blocks;
        size_t n_nodes;
        char **str_blocks; /* string blocks; long strings get a block of their own */
        size_t n_str_blocks, cap_str_blocks;
        char *str_free; /* room left in the current string block */
        size_t str_left;
        dp_doc_node **roots;
        char **sources;
        size_t n_roots, cap_roots, cap_sources;
};

dp_doc_set *dp_doc_set_new(void) { return calloc(1, sizeof(dp_doc_set)); }

dp_doc_set *dp_doc_set_free(dp_doc_set *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n_nodes; i++) {
                dp_doc_node *n = &s->node_blocks[i / DOC_NODE_BLOCK][i % DOC_NODE_BLOCK];
                free(n->pairs);
                free(n->items);
        }
        for (size_t i = 0; i < s->n_node_blocks; i++)
                free(s->node_blocks[i]);
        for (size_t i = 0; i < s->n_str_blocks; i++)
                free(s->str_blocks[i]);
        for (size_t i = 0; i < s->n_roots; i++) free(s->sources[i]);
        free(s->node_blocks);
        free(s->str_blocks);
        free(s->roots);
        free(s->sources);
        free(s);
        return NULL;
}

static dp_doc_node *node_new(dp_doc_set *s, dp_doc_type t) {
        if (s->n_nodes >= DP_DOC_MAX_NODES) return NULL;
        if (s->n_nodes % DOC_NODE_BLOCK == 0) {
                if (DP_GROW(s->node_blocks, s->cap_node_blocks, s->n_node_blocks + 1) < 0) return NULL;
                dp_doc_node *b = calloc(DOC_NODE_BLOCK, sizeof *b);
                if (!b) return NULL;
                s->node_blocks[s->n_node_blocks++] = b;
        }
        dp_doc_node *n = &s->node_blocks[s->n_nodes / DOC_NODE_BLOCK][s->n_nodes % DOC_NODE_BLOCK];
        s->n_nodes++;
        n->type = t;
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

static const char *own_string(dp_doc_set *s, const char *str) {
        size_t len = strlen(str);
        char *d = str_alloc(s, len);
        if (!d) return NULL;
        memcpy(d, str, len + 1);
        return d;
}

dp_doc_node *dp_doc_new_map(dp_doc_set *s) { return node_new(s, DP_DOC_MAP); }
dp_doc_node *dp_doc_new_seq(dp_doc_set *s) { return node_new(s, DP_DOC_SEQ); }

dp_doc_node *dp_doc_new_strn(dp_doc_set *s, const char *str, size_t len) {
        dp_doc_node *n = node_new(s, DP_DOC_SCALAR);
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
static int map_add_owned(dp_doc_node *map, const char *key, dp_doc_node *value) {
        if (!map || !value || map->type != DP_DOC_MAP) return -ENOMEM;
        if (DP_GROW(map->pairs, map->cap, map->n + 1) < 0) return -ENOMEM;
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
        if (DP_GROW(seq->items, seq->cap, seq->n + 1) < 0) return -ENOMEM;
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

/* ---- parsing ---- */

typedef struct {
        dp_doc_set *set;
        const char *name;
        dp_error *err;
        dp_doc_node *stack[DP_DOC_MAX_DEPTH + 1];
        const char *pending_key[DP_DOC_MAX_DEPTH + 1]; /* map: key waiting for a value */
        dp_doc_node *pending_key_node[DP_DOC_MAX_DEPTH + 1];
        size_t depth;
} parse_state;

static int perr(parse_state *ps, int code, const yaml_mark_t *m, const char *msg) {
        return dp_error_set(ps->err, code, "%s:%zu:%zu: %s", ps->name, m->line + 1, m->column + 1, msg);
}

/* Maps up to this many keys are checked for duplicates pair by pair as keys
 * arrive; past it, the keys are sorted once when the map ends. A sort, not a
 * hash table: its worst case is O(n log n) whatever the keys are (an unkeyed
 * hash can be flooded with colliding keys), and 80,000 labels parse in a
 * fraction of a second instead of tens of seconds. */
#define DUP_LINEAR_MAX 16

static int dup_error(parse_state *ps, const dp_doc_node *key) {
        char msg[300];
        snprintf(msg, sizeof msg, "duplicate key \"%.200s\"", key->str);
        return perr(ps, -EINVAL, &(yaml_mark_t){.line = key->line - 1, .column = key->col - 1}, msg);
}

static int cmp_pair_key(const void *a, const void *b) {
        const dp_doc_pair *x = *(const dp_doc_pair *const *)a, *y = *(const dp_doc_pair *const *)b;
        int c = strcmp(x->key, y->key);
        /* equal keys keep document order, so the later one is the duplicate */
        return c ? c : (x < y ? -1 : x > y);
}

/* A finished map of more than DUP_LINEAR_MAX keys: refuse a duplicate key,
 * naming the first one in document order that repeats an earlier key. */
static int check_duplicates(parse_state *ps, const dp_doc_node *map) {
        if (map->n <= DUP_LINEAR_MAX) return 0;
        _cleanup_free_ const dp_doc_pair **v = calloc(map->n, sizeof *v);
        if (!v) return -ENOMEM;
        for (size_t i = 0; i < map->n; i++) v[i] = &map->pairs[i];
        qsort(v, map->n, sizeof *v, cmp_pair_key);
        const dp_doc_pair *first = NULL;
        for (size_t i = 1; i < map->n; i++)
                if (streq(v[i - 1]->key, v[i]->key) && (!first || v[i] < first)) first = v[i];
        return first ? dup_error(ps, first->key_node) : 0;
}

/* Attach a finished node to its parent (or make it a root). */
static int attach(parse_state *ps, dp_doc_node *n, const yaml_mark_t *m) {
        if (ps->depth == 0) return dp_doc_add_root(ps->set, n, ps->name);
        dp_doc_node *parent = ps->stack[ps->depth - 1];
        if (parent->type == DP_DOC_SEQ) return dp_doc_seq_add(ps->set, parent, n);
        /* map */
        size_t d = ps->depth - 1;
        if (!ps->pending_key[d]) {
                if (n->type != DP_DOC_SCALAR) return perr(ps, -EINVAL, m, "map keys must be scalars");
                if (memchr(n->str, 0, n->len)) return perr(ps, -EINVAL, m, "map key contains a NUL byte");
                /* Small maps are checked for a duplicate at once; larger ones
                 * when they end (check_duplicates), in O(n log n). */
                if (parent->n < DUP_LINEAR_MAX)
                        for (size_t i = 0; i < parent->n; i++)
                                if (streq(parent->pairs[i].key, n->str)) return dup_error(ps, n);
                ps->pending_key[d] = n->str;
                ps->pending_key_node[d] = n;
                return 0;
        }
        /* the key is the key node's string, owned by the set: no copy */
        int r = map_add_owned(parent, ps->pending_key[d], n);
        if (r < 0) return r;
        parent->pairs[parent->n - 1].key_node = ps->pending_key_node[d];
        ps->pending_key[d] = NULL;
        ps->pending_key_node[d] = NULL;
        return 0;
}

static int handle_event(parse_state *ps, yaml_event_t *ev) {
        const yaml_mark_t *m = &ev->start_mark;
        dp_doc_node *n;
        switch (ev->type) {
        case YAML_ALIAS_EVENT:
                return perr(ps, -EINVAL, m, "YAML aliases are not supported");
        case YAML_SCALAR_EVENT:
                n = dp_doc_new_strn(ps->set, (const char *)ev->data.scalar.value, ev->data.scalar.length);
                if (!n) return -ENOMEM;
                n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
                if (ev->data.scalar.tag && streq((const char *)ev->data.scalar.tag, YAML_NULL_TAG)) n->plain = true;
                n->line = (uint32_t)m->line + 1;
                n->col = (uint32_t)m->column + 1;
                return attach(ps, n, m);
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
                if (ps->depth >= DP_DOC_MAX_DEPTH) return perr(ps, -E2BIG, m, "nesting deeper than 100 levels");
                n = node_new(ps->set, ev->type == YAML_SEQUENCE_START_EVENT ? DP_DOC_SEQ : DP_DOC_MAP);
                if (!n) return ps->set->n_nodes >= DP_DOC_MAX_NODES ? perr(ps, -E2BIG, m, "too many nodes") : -ENOMEM;
                n->line = (uint32_t)m->line + 1;
                n->col = (uint32_t)m->column + 1;
                ps->stack[ps->depth] = n;
                ps->pending_key[ps->depth] = NULL;
                ps->depth++;
                return 0;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                assert(ps->depth > 0);
                n = ps->stack[--ps->depth];
                if (n->type == DP_DOC_MAP) {
                        int r = check_duplicates(ps, n);
                        if (r < 0) return r;
                }
                return attach(ps, n, &(yaml_mark_t){.line = n->line - 1, .column = n->col - 1});
        default:
                return 0;
        }
}

int dp_doc_parse(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err) {
        assert_return(s && (buf || len == 0), -EINVAL);
        if (!name) name = "<input>";
        if (len > DP_DOC_MAX_INPUT)
                return dp_error_set(err, -E2BIG, "%s: input larger than %u MiB", name, DP_DOC_MAX_INPUT >> 20);
        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser)) return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        parse_state ps = {.set = s, .name = name, .err = err};
        size_t roots_before = s->n_roots;
        int r = 0;
        for (;;) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&parser, &ev)) {
                        if (parser.error == YAML_MEMORY_ERROR) {
                                r = -ENOMEM;
                        } else {
                                const yaml_mark_t *mk = parser.problem ? &parser.problem_mark : &parser.context_mark;
                                r = dp_error_set(err, -EINVAL, "%s:%zu:%zu: invalid YAML: %s%s%s", name,
                                                 mk->line + 1, mk->column + 1,
                                                 parser.problem ? parser.problem : "syntax error",
                                                 parser.context ? " " : "", parser.context ? parser.context : "");
                        }
                        break;
                }
                bool done = ev.type == YAML_STREAM_END_EVENT;
                r = handle_event(&ps, &ev);
                yaml_event_delete(&ev);
                if (r < 0 || done) break;
        }
        yaml_parser_delete(&parser);
        if (r < 0) {
                /* No partial documents: drop roots added by this call (nodes
                 * stay owned by the set and are freed with it). */
                for (size_t i = roots_before; i < s->n_roots; i++) free(s->sources[i]);
                s->n_roots = roots_before;
                return r;
        }
        /* Drop documents that are empty (a lone null scalar, e.g. "---\n---"). */
        size_t w = roots_before;
        for (size_t i = roots_before; i < s->n_roots; i++) {
                dp_doc_node *root = s->roots[i];
                if (root->type == DP_DOC_SCALAR && dp_doc_is_null(root)) {
                        free(s->sources[i]);
                        continue;
                }
                s->roots[w] = root;
                s->sources[w++] = s->sources[i];
        }
        s->n_roots = w;
        return 0;
}

int dp_doc_parse_file(dp_doc_set *s, const char *path, dp_error *err) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
        if (r == -E2BIG)
                return dp_error_set(err, r, "%s: file larger than %u MiB", path, DP_DOC_MAX_INPUT >> 20);
        if (r < 0) return r;
        return dp_doc_parse(s, buf, len, path, err);
}

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
        if (streq(s, ".inf") || streq(s, "-.inf") || streq(s, "+.inf") || streq(s, ".nan") || streq(s, ".Inf") ||
            streq(s, "-.Inf") || streq(s, ".NaN") || streq(s, ".INF") || streq(s, "-.INF") || streq(s, ".NAN"))
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

dp_doc_scalar_kind dp_doc_kind(const dp_doc_node *n) {
        if (!n) return DP_DOC_NULL;
        if (n->type != DP_DOC_SCALAR) return DP_DOC_STR; /* not meaningful; callers check type first */
        if (!n->plain) return DP_DOC_STR;
        const char *s = n->str;
        if (!*s || streq(s, "~") || streq(s, "null") || streq(s, "Null") || streq(s, "NULL")) return DP_DOC_NULL;
        if (streq(s, "true") || streq(s, "True") || streq(s, "TRUE") || streq(s, "false") || streq(s, "False") ||
            streq(s, "FALSE"))
                return DP_DOC_BOOL;
        if (is_int_text(s)) return DP_DOC_INT;
        if (is_float_text(s)) return DP_DOC_FLOAT;
        return DP_DOC_STR;
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

/* ---- emitting ---- */

static void json_string(dp_strbuf *o, const char *s, size_t len) {
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
                case '<': case '>': case '&': /* Go's encoding/json HTML-safe escaping */
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

static void indent(dp_strbuf *o, unsigned level) {
        for (unsigned i = 0; i < level; i++) dp_strbuf_puts(o, "  ");
}

static void emit_json(dp_strbuf *o, const dp_doc_node *n, bool pretty, unsigned level) {
        if (n->type == DP_DOC_SCALAR) {
                dp_doc_scalar_kind k = dp_doc_kind(n);
                if (k == DP_DOC_STR || (k == DP_DOC_FLOAT && n->str[0] == '.') ||
                    (k == DP_DOC_FLOAT && strchr(n->str, 'n')))
                        json_string(o, n->str, n->len);
                else if (k == DP_DOC_NULL) dp_strbuf_puts(o, "null");
                else if (k == DP_DOC_BOOL) dp_strbuf_puts(o, (n->str[0] == 't' || n->str[0] == 'T') ? "true" : "false");
                else dp_strbuf_append(o, n->str, n->len);
                return;
        }
        bool map = n->type == DP_DOC_MAP;
        dp_strbuf_putc(o, map ? '{' : '[');
        for (size_t i = 0; i < n->n; i++) {
                if (i) dp_strbuf_putc(o, ',');
                if (pretty) {
                        dp_strbuf_putc(o, '\n');
                        indent(o, level + 1);
                }
                if (map) {
                        json_string(o, n->pairs[i].key, strlen(n->pairs[i].key));
                        dp_strbuf_puts(o, pretty ? ": " : ":");
                        emit_json(o, n->pairs[i].value, pretty, level + 1);
                } else {
                        emit_json(o, n->items[i], pretty, level + 1);
                }
        }
        if (pretty && n->n) {
                dp_strbuf_putc(o, '\n');
                indent(o, level);
        }
        dp_strbuf_putc(o, map ? '}' : ']');
}

/* Must a string be quoted to read back as the same string in YAML? */
static bool yaml_needs_quotes(const char *s, size_t len) {
        if (len == 0 || memchr(s, 0, len)) return true;
        dp_doc_node tmp = {.type = DP_DOC_SCALAR, .str = (char *)s, .len = len, .plain = true};
        if (dp_doc_kind(&tmp) != DP_DOC_STR) return true;
        /* YAML 1.1 booleans and other special plain words readers may resolve */
        static const char *const words[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                            "on", "On", "ON", "off", "Off", "OFF"};
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(s, words[i])) return true;
        if (strchr("-?:,[]{}#&*!|>'\"%@`~ ", s[0])) return true;
        if (s[len - 1] == ' ' || s[len - 1] == ':') return true;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x20 || c == 0x7f) return true;
                if (c == ':' && i + 1 < len && s[i + 1] == ' ') return true;
                if (c == '#' && i > 0 && s[i - 1] == ' ') return true;
        }
        /* YAML 1.1 timestamps (2026-11-01, 2026-11-01T10:10:00Z): readers such
         * as PyYAML and go-yaml v2 would turn them into times */
        if (len >= 8 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9' &&
            s[3] >= '0' && s[3] <= '9' && s[4] == '-')
                return true;
        /* things that look numeric in other YAML dialects (0x1f, 1_000, 0o7) */
        if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '.') {
                bool all = true;
                for (size_t i = 0; i < len && all; i++)
                        all = strchr("0123456789abcdefABCDEFxXoO_:.+-eE", s[i]) != NULL;
                if (all) return true;
        }
        return false;
}

static void yaml_scalar(dp_strbuf *o, const dp_doc_node *n) {
        dp_doc_scalar_kind k = dp_doc_kind(n);
        if (n->plain && k != DP_DOC_STR) {
                dp_strbuf_append(o, n->str, n->len);
                return;
        }
        if (!yaml_needs_quotes(n->str, n->len)) {
                dp_strbuf_append(o, n->str, n->len);
                return;
        }
        /* double-quoted JSON-style string is valid YAML */
        json_string(o, n->str, n->len);
}

static bool is_empty_collection(const dp_doc_node *n) { return n->type != DP_DOC_SCALAR && n->n == 0; }

static void emit_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item);

static void emit_yaml_value(dp_strbuf *o, const dp_doc_node *v, unsigned level) {
        if (v->type == DP_DOC_SCALAR) {
                dp_strbuf_putc(o, ' ');
                yaml_scalar(o, v);
                dp_strbuf_putc(o, '\n');
        } else if (is_empty_collection(v)) {
                dp_strbuf_puts(o, v->type == DP_DOC_MAP ? " {}\n" : " []\n");
        } else {
                dp_strbuf_putc(o, '\n');
                emit_yaml(o, v, v->type == DP_DOC_SEQ ? level : level + 1, false);
        }
}

static void emit_yaml(dp_strbuf *o, const dp_doc_node *n, unsigned level, bool in_seq_item) {
        if (n->type == DP_DOC_SCALAR) {
                yaml_scalar(o, n);
                dp_strbuf_putc(o, '\n');
                return;
        }
        if (is_empty_collection(n)) {
                dp_strbuf_puts(o, n->type == DP_DOC_MAP ? "{}\n" : "[]\n");
                return;
        }
        for (size_t i = 0; i < n->n; i++) {
                if (!(in_seq_item && i == 0)) indent(o, level);
                if (n->type == DP_DOC_MAP) {
                        const char *key = n->pairs[i].key;
                        dp_doc_node k = {.type = DP_DOC_SCALAR, .str = (char *)key, .len = strlen(key)};
                        yaml_scalar(o, &k);
                        dp_strbuf_putc(o, ':');
                        emit_yaml_value(o, n->pairs[i].value, level);
                } else {
                        const dp_doc_node *it = n->items[i];
                        dp_strbuf_puts(o, "- ");
                        if (it->type == DP_DOC_SCALAR || is_empty_collection(it)) emit_yaml(o, it, 0, false);
                        else if (it->type == DP_DOC_MAP) emit_yaml(o, it, level + 1, true);
                        else {
                                dp_strbuf_putc(o, '\n');
                                emit_yaml(o, it, level + 1, false);
                        }
                }
        }
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
                dp_strbuf_puts(out, "- ");
                if (it->type == DP_DOC_SCALAR || is_empty_collection(it))
                        emit_yaml(out, it, 0, false);
                else if (it->type == DP_DOC_MAP)
                        emit_yaml(out, it, 1, true);
                else {
                        dp_strbuf_putc(out, '\n');
                        emit_yaml(out, it, 1, false);
                }
                return;
        }
        /* emit_json() of the sequence at level 1, one item */
        bool pretty = fmt == DP_DOC_JSON_PRETTY;
        if (i) dp_strbuf_putc(out, ',');
        if (pretty) {
                dp_strbuf_putc(out, '\n');
                indent(out, 2);
        }
        emit_json(out, it, pretty, 2);
}

/* ---- checksummed state files ---- */

static uint64_t fnv1a64(const char *p, size_t n) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char)p[i];
                h *= 0x100000001b3ull;
        }
        return h;
}

int dp_doc_data_checksum(const dp_doc_node *data, char ret_sum[17]) {
        assert_return(data && ret_sum, -EINVAL);
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, data, DP_DOC_JSON_COMPACT);
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        snprintf(ret_sum, 17, "%016llx", (unsigned long long)fnv1a64(dp_strbuf_str(&sb), sb.len));
        return 0;
}

int dp_doc_emit_checksummed(dp_doc_set *set, dp_doc_node *data, dp_strbuf *out) {
        assert_return(set && data && out, -EINVAL);
        char sum[17];
        int r = dp_doc_data_checksum(data, sum);
        if (r < 0) return r;
        dp_doc_node *root = dp_doc_new_map(set);
        if (!root || dp_doc_map_add(set, root, "checksum", dp_doc_new_str(set, sum)) < 0 ||
            dp_doc_map_add(set, root, "data", data) < 0)
                return -ENOMEM;
        dp_doc_emit(out, root, DP_DOC_JSON_COMPACT);
        dp_strbuf_putc(out, '\n');
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}
