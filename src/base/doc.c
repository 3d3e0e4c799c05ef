/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <yaml.h>

#include "base/doc.h"
#include "base/fileio.h"

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

struct dp_doc_set {
        dp_doc_node **node_blocks; /* DOC_NODE_BLOCK nodes each, the last one partly used */
        size_t n_node_blocks, cap_node_blocks;
        size_t n_nodes;
        size_t n_dropped;  /* nodes of documents already handed out and dropped (dp_doc_parse_each) */
        char **str_blocks; /* string blocks; long strings get a block of their own */
        size_t n_str_blocks, cap_str_blocks;
        char *str_free; /* room left in the current string block */
        size_t str_left;
        dp_doc_node **roots;
        char **sources;
        size_t n_roots, cap_roots, cap_sources;
};

dp_doc_set *dp_doc_set_new(void) { return calloc(1, sizeof(dp_doc_set)); }

/* the arrays of maps and sequences that have their own allocation (cap > 0) */
static void free_arrays(dp_doc_set *s) {
        for (size_t i = 0; i < s->n_nodes; i++) {
                dp_doc_node *n = &s->node_blocks[i / DOC_NODE_BLOCK][i % DOC_NODE_BLOCK];
                if (n->cap == 0) continue;
                free(n->pairs);
                free(n->items);
        }
}

/* Drop every node, string and root, keeping the first node block for the
 * next document (dp_doc_parse_each); the node count limit counts on. */
static void set_drop_all(dp_doc_set *s) {
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
        set_drop_all(s);
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
        free(s->node_blocks);
        free(s->str_blocks);
        free(s->roots);
        free(s->sources);
        free(s);
        return NULL;
}

static bool nodes_full(const dp_doc_set *s) { return s->n_nodes + s->n_dropped >= DP_DOC_MAX_NODES; }

static dp_doc_node *node_new(dp_doc_set *s, dp_doc_type t) {
        if (nodes_full(s)) return NULL;
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
static void *arena_alloc(dp_doc_set *s, size_t size) {
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

/* ---- parsing ---- */

typedef struct {
        dp_doc_set *set;
        const char *name;
        dp_error *err;
        dp_doc_node *stack[DP_DOC_MAX_DEPTH + 1];
        size_t base[DP_DOC_MAX_DEPTH + 1];             /* where each open collection's children start in kids */
        const char *pending_key[DP_DOC_MAX_DEPTH + 1]; /* map: key waiting for a value */
        dp_doc_node *pending_key_node[DP_DOC_MAX_DEPTH + 1];
        size_t depth;
        /* the children of every open collection, innermost last (a
         * sequence's items use .value); copied out when the collection ends */
        dp_doc_pair *kids;
        size_t n_kids, cap_kids;
        /* dp_doc_parse_each: each document goes to fn as it ends */
        dp_doc_each_fn fn;
        void *userdata;
        size_t n_handed; /* non-empty documents handed to fn */
        int fn_r;        /* the first failure of fn */
        /* libyaml reads from a document the YAML reader gave up in: lines
         * before it, added to libyaml's marks */
        size_t line_off;
} parse_state;

typedef struct {
        size_t line, column; /* 0-based, as libyaml counts */
} mark;

static int perr(parse_state *ps, int code, const mark *m, const char *msg) {
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
        return perr(ps, -EINVAL, &(mark){.line = key->line - 1, .column = key->col - 1}, msg);
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

static int push_kid(parse_state *ps, const char *key, dp_doc_node *key_node, dp_doc_node *value) {
        if (ps->n_kids == ps->cap_kids && DP_GROW(ps->kids, ps->cap_kids, ps->n_kids + 1) < 0) return -ENOMEM;
        ps->kids[ps->n_kids++] = (dp_doc_pair){key, key_node, value};
        return 0;
}

/* Attach a finished node to its parent (or make it a root). */
static int attach(parse_state *ps, dp_doc_node *n, const mark *m) {
        if (ps->depth == 0) return dp_doc_add_root(ps->set, n, ps->name);
        size_t d = ps->depth - 1;
        dp_doc_node *parent = ps->stack[d];
        if (parent->type == DP_DOC_SEQ) return push_kid(ps, NULL, NULL, n);
        /* map */
        if (!ps->pending_key[d]) {
                if (n->type != DP_DOC_SCALAR) return perr(ps, -EINVAL, m, "map keys must be scalars");
                if (memchr(n->str, 0, n->len)) return perr(ps, -EINVAL, m, "map key contains a NUL byte");
                /* Small maps are checked for a duplicate at once; larger ones
                 * when they end (check_duplicates), in O(n log n). */
                size_t have = ps->n_kids - ps->base[d];
                if (have < DUP_LINEAR_MAX)
                        for (size_t i = ps->base[d]; i < ps->n_kids; i++)
                                if (streq(ps->kids[i].key, n->str)) return dup_error(ps, n);
                ps->pending_key[d] = n->str;
                ps->pending_key_node[d] = n;
                return 0;
        }
        /* the key is the key node's string, owned by the set: no copy */
        int r = push_kid(ps, ps->pending_key[d], ps->pending_key_node[d], n);
        ps->pending_key[d] = NULL;
        ps->pending_key_node[d] = NULL;
        return r;
}

static int open_collection(parse_state *ps, dp_doc_type t, const mark *m) {
        if (ps->depth >= DP_DOC_MAX_DEPTH) return perr(ps, -E2BIG, m, "nesting deeper than 100 levels");
        dp_doc_node *n = node_new(ps->set, t);
        if (!n) return nodes_full(ps->set) ? perr(ps, -E2BIG, m, "too many nodes") : -ENOMEM;
        n->line = (uint32_t)m->line + 1;
        n->col = (uint32_t)m->column + 1;
        ps->stack[ps->depth] = n;
        ps->base[ps->depth] = ps->n_kids;
        ps->pending_key[ps->depth] = NULL;
        ps->depth++;
        return 0;
}

static int close_collection(parse_state *ps) {
        assert(ps->depth > 0);
        dp_doc_node *n = ps->stack[--ps->depth];
        size_t first = ps->base[ps->depth], count = ps->n_kids - first;
        if (count) {
                if (n->type == DP_DOC_MAP) {
                        n->pairs = arena_alloc(ps->set, count * sizeof(dp_doc_pair));
                        if (!n->pairs) return -ENOMEM;
                        memcpy(n->pairs, ps->kids + first, count * sizeof(dp_doc_pair));
                } else {
                        n->items = arena_alloc(ps->set, count * sizeof(dp_doc_node *));
                        if (!n->items) return -ENOMEM;
                        for (size_t i = 0; i < count; i++)
                                n->items[i] = ps->kids[first + i].value;
                }
        }
        n->n = count;
        ps->n_kids = first;
        if (n->type == DP_DOC_MAP) {
                int r = check_duplicates(ps, n);
                if (r < 0) return r;
        }
        return attach(ps, n, &(mark){.line = n->line - 1, .column = n->col - 1});
}

static int add_scalar(parse_state *ps, const char *str, size_t len, bool plain, const mark *m) {
        dp_doc_node *n = dp_doc_new_strn(ps->set, str, len);
        if (!n) return -ENOMEM;
        n->plain = plain;
        n->line = (uint32_t)m->line + 1;
        n->col = (uint32_t)m->column + 1;
        return attach(ps, n, m);
}

/* A document ended: with dp_doc_parse_each, hand its root to fn (unless fn
 * failed before) and drop the document. */
static void document_end(parse_state *ps) {
        if (!ps->fn) return;
        dp_doc_set *s = ps->set;
        for (size_t i = 0; i < s->n_roots; i++) {
                dp_doc_node *root = s->roots[i];
                if (root->type == DP_DOC_SCALAR && dp_doc_is_null(root)) continue;
                if (ps->fn_r >= 0) ps->fn_r = ps->fn(root, ps->name, ps->n_handed, ps->userdata, ps->err);
                ps->n_handed++;
        }
        set_drop_all(s);
}

static int handle_event(parse_state *ps, yaml_event_t *ev) {
        const mark m = {ev->start_mark.line + ps->line_off, ev->start_mark.column};
        switch (ev->type) {
        case YAML_ALIAS_EVENT: return perr(ps, -EINVAL, &m, "YAML aliases are not supported");
        case YAML_SCALAR_EVENT: {
                bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
                if (ev->data.scalar.tag && streq((const char *)ev->data.scalar.tag, YAML_NULL_TAG)) plain = true;
                return add_scalar(ps, (const char *)ev->data.scalar.value, ev->data.scalar.length, plain, &m);
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
                return open_collection(ps, ev->type == YAML_SEQUENCE_START_EVENT ? DP_DOC_SEQ : DP_DOC_MAP, &m);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: return close_collection(ps);
        case YAML_DOCUMENT_END_EVENT: document_end(ps); return 0;
        default:
                return 0;
        }
}

#define YAML_RESUME 2

/* A document start the YAML reader can take over at: "---" alone, no
 * directives before it. */
static bool resumable(const yaml_event_t *ev) {
        return ev->type == YAML_DOCUMENT_START_EVENT && !ev->data.document_start.implicit &&
               !ev->data.document_start.version_directive &&
               ev->data.document_start.tag_directives.start == ev->data.document_start.tag_directives.end &&
               ev->start_mark.column == 0;
}

/* Parse with libyaml to the end of the input; with ret_resume, stop at the
 * start of the second document, where the YAML reader can take over, and
 * return YAML_RESUME with the line of its "---" (counted from buf). */
static int parse_yaml(parse_state *ps, const char *buf, size_t len, size_t *ret_resume) {
        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser)) return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        int r = 0;
        size_t docs = 0;
        for (;;) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&parser, &ev)) {
                        if (parser.error == YAML_MEMORY_ERROR) {
                                r = -ENOMEM;
                        } else {
                                const yaml_mark_t *mk = parser.problem ? &parser.problem_mark : &parser.context_mark;
                                /* a reader error (bad UTF-8, a control character) has no mark:
                                 * 1:1 whatever the offset (the YAML reader leaves such inputs
                                 * to libyaml whole) */
                                size_t off = parser.error == YAML_READER_ERROR ? 0 : ps->line_off;
                                r = dp_error_set(ps->err, -EINVAL, "%s:%zu:%zu: invalid YAML: %s%s%s", ps->name,
                                                 mk->line + 1 + off, mk->column + 1,
                                                 parser.problem ? parser.problem : "syntax error",
                                                 parser.context ? " " : "", parser.context ? parser.context : "");
                        }
                        break;
                }
                bool done = ev.type == YAML_STREAM_END_EVENT;
                /* (a later line: the reader always gets further) */
                if (ev.type == YAML_DOCUMENT_START_EVENT && docs++ > 0 && ret_resume && resumable(&ev) &&
                    ev.start_mark.line > 0) {
                        *ret_resume = ev.start_mark.line;
                        r = YAML_RESUME;
                        done = true;
                } else {
                        r = handle_event(ps, &ev);
                }
                yaml_event_delete(&ev);
                if (r < 0 || done) break;
        }
        yaml_parser_delete(&parser);
        return r;
}

/* ---- JSON fast path ----
 *
 * kubectl -o json and API responses are JSON, and libyaml reads them a
 * character at a time through its YAML scanner. A JSON document is read here
 * directly into the same tree libyaml's events would build: the same nodes,
 * strings, `plain` flags and line/column marks (columns in characters, as
 * libyaml counts). The reader takes only what it is sure libyaml reads the
 * same way; on anything else — a syntax error, a duplicate key, a limit, a
 * tab, a comment, a trailing comma, an escape or character YAML treats
 * differently, a key libyaml would not take as a simple key — it gives up
 * and the input goes through libyaml, so every error message is libyaml's
 * (or the tree builder's) as before. fuzz/fuzz-base-json checks both agree. */

#define JSON_BAIL 1
#define JSON_SIMPLE_KEY_MAX 1000 /* libyaml: a simple key is at most 1024 characters */

typedef struct {
        parse_state *ps;
        const char *p, *end, *line_start;
        size_t line; /* 0-based */
        size_t cont; /* UTF-8 continuation bytes between line_start and p */
        char *tmp;   /* unescaped string */
        size_t tmp_cap;
} jscan;

static mark jmark(const jscan *j) { return (mark){j->line, (size_t)(j->p - j->line_start) - j->cont}; }

static void jspace(jscan *j) {
        while (j->p < j->end) {
                char c = *j->p;
                if (c == ' ') {
                        j->p++;
                } else if (c == '\n' || (c == '\r' && j->p + 1 < j->end && j->p[1] == '\n')) {
                        j->p += c == '\n' ? 1 : 2;
                        j->line++;
                        j->line_start = j->p;
                        j->cont = 0;
                } else {
                        break;
                }
        }
}

static int hexval(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
}

/* One UTF-8 character at p that libyaml reads as a printable non-break
 * character: its length, or 0. */
static size_t utf8_ok(const unsigned char *p, const unsigned char *end) {
        size_t n;
        uint32_t cp;
        if (*p >= 0xc2 && *p <= 0xdf)
                n = 2, cp = *p & 0x1f;
        else if (*p >= 0xe0 && *p <= 0xef)
                n = 3, cp = *p & 0x0f;
        else if (*p >= 0xf0 && *p <= 0xf4)
                n = 4, cp = *p & 0x07;
        else
                return 0;
        if ((size_t)(end - p) < n) return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80) return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
        if (cp < 0xa0 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0x2028 || cp == 0x2029 || cp == 0xfffe || cp == 0xffff)
                return 0;
        return n;
}

static int tmp_put(jscan *j, size_t *len, const char *s, size_t n) {
        if (*len + n + 1 > j->tmp_cap) {
                size_t cap = j->tmp_cap ? j->tmp_cap : 256;
                while (cap < *len + n + 1)
                        cap *= 2;
                char *t = realloc(j->tmp, cap);
                if (!t) return -ENOMEM;
                j->tmp = t;
                j->tmp_cap = cap;
        }
        memcpy(j->tmp + *len, s, n);
        *len += n;
        return 0;
}

/* A double-quoted string at p: its text (in the input or in tmp). */
static int jstring(jscan *j, const char **ret, size_t *ret_len) {
        const char *s = ++j->p, *q = s;
        while (q < j->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f && *q != '"' && *q != '\\')
                q++;
        if (q < j->end && *q == '"') { /* the common case: nothing to unescape */
                *ret = s;
                *ret_len = (size_t)(q - s);
                j->p = q + 1;
                return 0;
        }
        size_t len = 0;
        for (;;) {
                if (q > s && tmp_put(j, &len, s, (size_t)(q - s)) < 0) return -ENOMEM;
                if (q >= j->end) return JSON_BAIL;
                unsigned char c = (unsigned char)*q;
                if (c == '"') break;
                if (c == '\\') {
                        if (j->end - q < 2) return JSON_BAIL;
                        char e = q[1], out[4];
                        size_t n = 1;
                        q += 2;
                        switch (e) {
                        case '"':
                        case '\\':
                        case '/': out[0] = e; break;
                        case 'b': out[0] = '\b'; break;
                        case 'f': out[0] = '\f'; break;
                        case 'n': out[0] = '\n'; break;
                        case 'r': out[0] = '\r'; break;
                        case 't': out[0] = '\t'; break;
                        case 'u': {
                                if (j->end - q < 4) return JSON_BAIL;
                                uint32_t cp = 0;
                                for (int i = 0; i < 4; i++) {
                                        int h = hexval(q[i]);
                                        if (h < 0) return JSON_BAIL;
                                        cp = cp << 4 | (uint32_t)h;
                                }
                                q += 4;
                                if (cp >= 0xd800 && cp <= 0xdfff) return JSON_BAIL; /* libyaml refuses surrogates */
                                if (cp < 0x80)
                                        out[0] = (char)cp;
                                else if (cp < 0x800) {
                                        out[0] = (char)(0xc0 | cp >> 6);
                                        out[1] = (char)(0x80 | (cp & 0x3f));
                                        n = 2;
                                } else {
                                        out[0] = (char)(0xe0 | cp >> 12);
                                        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                                        out[2] = (char)(0x80 | (cp & 0x3f));
                                        n = 3;
                                }
                                break;
                        }
                        default: return JSON_BAIL;
                        }
                        if (tmp_put(j, &len, out, n) < 0) return -ENOMEM;
                        s = q;
                } else if (c >= 0x80) {
                        size_t n = utf8_ok((const unsigned char *)q, (const unsigned char *)j->end);
                        if (!n) return JSON_BAIL;
                        j->cont += n - 1;
                        s = q;
                        q += n;
                } else if (c < 0x20 || c == 0x7f) {
                        return JSON_BAIL; /* line breaks fold, tabs and controls: libyaml's business */
                } else {
                        s = q++;
                }
                while (q < j->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f && *q != '"' && *q != '\\')
                        q++;
        }
        if (tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
        *ret = j->tmp;
        *ret_len = len - 1;
        j->p = q + 1;
        return 0;
}

static bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* A failure of the tree builder (duplicate key, limit): let libyaml's
 * events reach it in their own order. */
static int jbuild(const jscan *j, int r) {
        if (r == -ENOMEM && !nodes_full(j->ps->set)) return r;
        return r < 0 ? JSON_BAIL : r;
}

static int jvalue(jscan *j);

/* after a value: skip space, then one of `close` or ',' */
static int jnext(jscan *j, char close, bool *done) {
        jspace(j);
        if (j->p >= j->end) return JSON_BAIL;
        if (*j->p == close) {
                *done = true;
                j->p++;
                return 0;
        }
        if (*j->p != ',') return JSON_BAIL;
        j->p++;
        jspace(j);
        return 0;
}

static int jcollection(jscan *j, bool map) {
        mark m = jmark(j);
        if (j->ps->depth >= DP_DOC_MAX_DEPTH || nodes_full(j->ps->set)) return JSON_BAIL;
        int r = open_collection(j->ps, map ? DP_DOC_MAP : DP_DOC_SEQ, &m);
        if (r < 0) return jbuild(j, r);
        char close = map ? '}' : ']';
        j->p++;
        jspace(j);
        bool done = j->p < j->end && *j->p == close;
        if (done) j->p++;
        while (!done) {
                if (map) {
                        if (j->p >= j->end || *j->p != '"') return JSON_BAIL;
                        mark km = jmark(j);
                        const char *kstart = j->p, *key;
                        size_t klen;
                        if ((r = jstring(j, &key, &klen)) != 0) return r;
                        if ((r = jbuild(j, add_scalar(j->ps, key, klen, false, &km))) != 0) return r;
                        while (j->p < j->end && *j->p == ' ')
                                j->p++;
                        /* a simple key: on one line, not too long; in flow context ':' needs no blank after it */
                        if (j->p >= j->end || *j->p != ':' || j->p - kstart > JSON_SIMPLE_KEY_MAX) return JSON_BAIL;
                        j->p++;
                        jspace(j);
                }
                if ((r = jvalue(j)) != 0) return r;
                if ((r = jnext(j, close, &done)) != 0) return r;
        }
        return jbuild(j, close_collection(j->ps));
}

static int jvalue(jscan *j) {
        if (j->p >= j->end) return JSON_BAIL;
        char c = *j->p;
        if (c == '{' || c == '[') return jcollection(j, c == '{');
        mark m = jmark(j);
        if (c == '"') {
                const char *s;
                size_t len;
                int r = jstring(j, &s, &len);
                return r ? r : jbuild(j, add_scalar(j->ps, s, len, false, &m));
        }
        /* numbers, true, false, null: a plain scalar of these characters */
        const char *s = j->p, *q = s;
        if (!(is_alnum(c) ||
              (q + 1 < j->end && ((c == '-' && (is_alnum(q[1]) || q[1] == '.')) || (c == '.' && is_alnum(q[1]))))))
                return JSON_BAIL;
        while (q < j->end && (is_alnum(*q) || *q == '.' || *q == '-' || *q == '+'))
                q++;
        j->p = q;
        return jbuild(j, add_scalar(j->ps, s, (size_t)(q - s), true, &m));
}

/* 0: the document is in the set (and handed to fn); JSON_BAIL: nothing was
 * kept, read it with libyaml; -ENOMEM. */
static int parse_json(parse_state *ps, const char *buf, size_t len) {
        dp_doc_set *s = ps->set;
        jscan j = {.ps = ps, .p = buf, .end = buf + len, .line_start = buf};
        size_t nodes = s->n_nodes, roots = s->n_roots;
        dp_error *err = ps->err;
        ps->err = NULL; /* every failure gives up: no message is wanted */
        jspace(&j);
        int r = JSON_BAIL;
        if (j.p < j.end && (*j.p == '{' || *j.p == '[')) {
                r = jvalue(&j);
                jspace(&j);
                if (r == 0 && j.p != j.end) r = JSON_BAIL;
        }
        free(j.tmp);
        ps->err = err;
        if (r == 0) {
                document_end(ps);
                return 0;
        }
        /* undo: no root, no nodes (their arrays live in the blocks) */
        for (size_t i = roots; i < s->n_roots; i++)
                free(s->sources[i]);
        s->n_roots = roots;
        s->n_nodes = nodes;
        ps->depth = 0;
        ps->n_kids = 0;
        return r;
}

/* ---- YAML fast path ----
 *
 * Manifests written by people and by kubectl -o yaml are block-style YAML,
 * and libyaml spends most of a load in its scanner (a function call and a
 * buffer check per character). The reader below takes the common subset —
 * block mappings and sequences (indentless ones too, compact "- k: v" and
 * "- - x"), one-line flow collections, single-line plain, single- and
 * double-quoted scalars, comments, "---" between documents — and builds
 * the very tree libyaml's events would build, with the same tree builder
 * (open_collection, add_scalar, close_collection): the same nodes, strings,
 * `plain` flags and line/column marks.
 *
 * It is conservative: whatever it is not sure libyaml reads the same way
 * makes it give up — a tab, anchors, aliases, tags, block scalars, a plain
 * or quoted scalar or a flow collection over more than one line, '?' keys,
 * directives, "...", content on a "---" line, ':' inside a plain scalar in a
 * flow collection, unusual escapes, a key over 1,000 bytes, an indentation
 * it does not expect, any error (the tree builder's too: a duplicate key, a
 * limit). Documents already handed to the caller (dp_doc_parse_each) cannot
 * be taken back, so it gives up one document at a time: the document it was
 * reading is dropped and libyaml reads the input from that document's "---"
 * line (or from the start), with the lines before added to its marks, so an
 * error reads as it always did; libyaml stops at the next "---" line (with
 * no directive before it) and the reader goes on from there. libyaml reads
 * no further than the token it needs, so it has not seen anything past that
 * "---" and a document reads the same whichever of the two starts at its
 * "---". An input with anything libyaml's reader refuses (bad UTF-8,
 * control characters) or reads as a line break or byte order mark the
 * reader here does not know (CR, NEL, LS, PS, BOM) goes to libyaml whole:
 * libyaml decodes 16 KiB ahead, so its reader errors come before documents
 * that precede them in the input. fuzz/fuzz-base-yaml.c and
 * tests/base/test-doc-yaml.c check that both readers agree. */

enum {
        YC_STOP = 1,    /* ends a run of plain scalar characters: blanks, ':', line breaks, controls */
        YC_FLOW = 2,    /* ends a plain scalar inside a flow collection */
        YC_HIGH = 4,    /* a byte of a multi-byte UTF-8 character */
        YC_NOSTART = 8, /* cannot start a plain scalar here: indicators, blanks, controls */
};

static const uint8_t ycls[256] = {
        [0x00 ... 0x1f] = YC_STOP | YC_NOSTART,
        [' '] = YC_STOP | YC_NOSTART,
        [':'] = YC_STOP | YC_NOSTART,
        [','] = YC_FLOW | YC_NOSTART,
        ['['] = YC_FLOW | YC_NOSTART,
        [']'] = YC_FLOW | YC_NOSTART,
        ['{'] = YC_FLOW | YC_NOSTART,
        ['}'] = YC_FLOW | YC_NOSTART,
        ['-'] = YC_NOSTART,
        ['?'] = YC_NOSTART,
        ['#'] = YC_NOSTART,
        ['&'] = YC_NOSTART,
        ['*'] = YC_NOSTART,
        ['!'] = YC_NOSTART,
        ['|'] = YC_NOSTART,
        ['>'] = YC_NOSTART,
        ['\''] = YC_NOSTART,
        ['"'] = YC_NOSTART,
        ['%'] = YC_NOSTART,
        ['@'] = YC_NOSTART,
        ['`'] = YC_NOSTART,
        [0x7f] = YC_STOP | YC_NOSTART,
        [0x80 ... 0xff] = YC_HIGH,
};

/* Whether libyaml's reader takes every character of the input and none of
 * them is one this reader does not know (see above). */
static bool yprescan(const char *buf, size_t len) {
        const unsigned char *p = (const unsigned char *)buf, *e = p + len;
        while (p < e) {
                /* eight printable ASCII characters at a time */
                while (e - p >= 8) {
                        uint64_t x, d;
                        memcpy(&x, p, 8);
                        d = x ^ 0x7f7f7f7f7f7f7f7full;
                        if (((x | ((x - 0x2020202020202020ull) & ~x) | ((d - 0x0101010101010101ull) & ~d)) &
                             0x8080808080808080ull) != 0)
                                break;
                        p += 8;
                }
                if (p == e) break;
                unsigned char c = *p;
                if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
                        p++;
                        continue;
                }
                if (c < 0x80) return false;
                size_t n = utf8_ok(p, e);
                if (!n || (c == 0xef && p[1] == 0xbb && p[2] == 0xbf)) return false;
                p += n;
        }
        return true;
}

typedef struct {
        jscan j;
        bool at_end; /* at the end of the input or of a document ("---" at p) */
        bool marker; /* at a "---" line */
        size_t col;  /* column of p, the first character of a line with content */
} yscan;

/* a scalar read but not yet added */
typedef struct {
        const char *at; /* where it starts in the input */
        const char *s;  /* its text (in the input or in the scan's tmp) */
        size_t len;
        bool plain;
        mark m;
} yscal;

static void yspace(jscan *j) {
        while (j->p < j->end && *j->p == ' ')
                j->p++;
}

/* "- " or "-" at the end of a line: a block sequence entry */
static bool yentry(const jscan *j) {
        const char *p = j->p;
        return p < j->end && *p == '-' && (p + 1 == j->end || p[1] == ' ' || p[1] == '\n');
}

/* ": " or ':' at the end of a line: a key ends (block context) */
static bool ykey_end(const jscan *j) {
        const char *p = j->p;
        return p < j->end && *p == ':' && (p + 1 == j->end || p[1] == ' ' || p[1] == '\n');
}

/* From the line break at p (or, first, from the start of the input) to the
 * next line with content, past blank and comment lines. */
static int ylines(yscan *y, bool at_break) {
        jscan *j = &y->j;
        const char *q = j->p, *e = j->end;
        for (;; at_break = true) {
                if (at_break) {
                        if (q == e) break;
                        q++;
                        j->line++;
                        j->line_start = q;
                }
                while (q < e && *q == ' ')
                        q++;
                if (q == e) break;
                if (*q == '\n') continue;
                if (*q == '#') {
                        q = memchr(q, '\n', (size_t)(e - q));
                        if (!q) q = e;
                        continue;
                }
                j->p = q;
                j->cont = 0;
                y->col = (size_t)(q - j->line_start);
                if (*q == '\t') return JSON_BAIL;
                if (y->col == 0 && e - q >= 3 && (*q == '-' || *q == '.') && q[1] == *q && q[2] == *q) {
                        if (*q == '.' || (e - q > 3 && q[3] != ' ' && q[3] != '\n')) return JSON_BAIL;
                        y->at_end = y->marker = true;
                }
                return 0;
        }
        j->p = e;
        j->cont = 0;
        y->at_end = true;
        y->marker = false;
        return 0;
}

/* The rest of a line after a node (blanks, a comment), then on to the next
 * line with content. */
static int yeol(yscan *y) {
        jscan *j = &y->j;
        const char *q = j->p, *e = j->end;
        while (q < e && *q == ' ')
                q++;
        if (q < e && *q == '#' && q > j->line_start && q[-1] == ' ') {
                q = memchr(q, '\n', (size_t)(e - q));
                if (!q) q = e;
        }
        if (q < e && *q != '\n') return JSON_BAIL;
        j->p = q;
        return ylines(y, true);
}

/* A plain scalar at p (its first character checked), on this line: it ends
 * before ": ", " #", the line break or, in a flow collection, a flow
 * indicator; p is left after its last non-blank character. */
static int yplain(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        const char *s = j->p, *q = s, *e = j->end, *last;
        const uint8_t stop = YC_STOP | YC_HIGH | (flow ? YC_FLOW : 0);
        size_t cont = 0;
        ret->m = jmark(j);
        for (;;) {
                while (q < e && !(ycls[(uint8_t)*q] & stop))
                        q++;
                if (q == e) {
                        last = q;
                        break;
                }
                uint8_t c = (uint8_t)*q;
                if (c >= 0x80) {
                        cont += (c & 0xc0) == 0x80;
                        q++;
                        continue;
                }
                if (c == ':' && q + 1 < e && q[1] != ' ' && q[1] != '\n') {
                        if (flow || q[1] == '\t') return JSON_BAIL; /* "a:b" in a flow collection, ":\t" */
                        q++;
                        continue;
                }
                last = q;
                if (c != ' ') break;
                /* blanks inside the scalar are part of it when more of it follows */
                while (q < e && *q == ' ')
                        q++;
                if (q == e) break;
                c = (uint8_t)*q;
                if (c == '#' || c == '\n' || c == '\t' || (flow && (ycls[c] & YC_FLOW)) ||
                    (c == ':' && (q + 1 == e || q[1] == ' ' || q[1] == '\n' || q[1] == '\t')))
                        break;
        }
        j->cont += cont;
        j->p = last;
        ret->at = s;
        ret->s = s;
        ret->len = (size_t)(last - s);
        ret->plain = true;
        return 0;
}

/* A single-quoted scalar on one line ('' is a quote). */
static int ysquote(yscan *y, yscal *ret) {
        jscan *j = &y->j;
        ret->m = jmark(j);
        ret->at = j->p;
        ret->plain = false;
        const char *s = ++j->p, *q = s, *e = j->end;
        size_t len = 0;
        bool copied = false;
        for (;;) {
                while (q < e && *q != '\'' && (uint8_t)*q >= 0x20 && (uint8_t)*q < 0x7f)
                        q++;
                if (q == e) return JSON_BAIL;
                uint8_t c = (uint8_t)*q;
                if (c == '\'') {
                        if (q + 1 == e || q[1] != '\'') break;
                        if (tmp_put(j, &len, s, (size_t)(q + 1 - s)) < 0) return -ENOMEM;
                        copied = true;
                        q += 2;
                        s = q;
                } else if (c >= 0x80) {
                        j->cont += (c & 0xc0) == 0x80;
                        q++;
                } else {
                        return JSON_BAIL; /* a line break (the scalar goes on), a tab */
                }
        }
        if (copied) {
                if (tmp_put(j, &len, s, (size_t)(q - s)) < 0 || tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
                ret->s = j->tmp;
                ret->len = len - 1;
        } else {
                ret->s = s;
                ret->len = (size_t)(q - s);
        }
        j->p = q + 1;
        return 0;
}

static int yscalar(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        if (j->p >= j->end) return JSON_BAIL;
        uint8_t c = (uint8_t)*j->p;
        if (c == '"') {
                ret->m = jmark(j);
                ret->at = j->p;
                ret->plain = false;
                return jstring(j, &ret->s, &ret->len);
        }
        if (c == '\'') return ysquote(y, ret);
        /* "-1", "--x": a '-' before a non-blank starts a plain scalar */
        if ((ycls[c] & YC_NOSTART) &&
            !(c == '-' && j->p + 1 < j->end && !(ycls[(uint8_t)j->p[1]] & (YC_STOP | YC_FLOW))))
                return JSON_BAIL;
        return yplain(y, flow, ret);
}

static int yadd(jscan *j, const yscal *v) { return jbuild(j, add_scalar(j->ps, v->s, v->len, v->plain, &v->m)); }

static bool ycan_open(const jscan *j) { return j->ps->depth < DP_DOC_MAX_DEPTH && !nodes_full(j->ps->set); }

/* A flow collection on one line, '{' or '[' at p. */
static int yflow(yscan *y, bool map) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        mark m = jmark(j);
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, open_collection(ps, map ? DP_DOC_MAP : DP_DOC_SEQ, &m));
        if (r) return r;
        char close = map ? '}' : ']';
        j->p++;
        yspace(j);
        if (j->p < j->end && *j->p == close) {
                j->p++;
                return jbuild(j, close_collection(ps));
        }
        for (;;) {
                yscal v;
                if (map) {
                        if ((r = yscalar(y, true, &v)) != 0 || (r = yadd(j, &v)) != 0) return r;
                        yspace(j);
                        if (j->end - j->p < 2 || j->p[0] != ':' || j->p[1] != ' ' || j->p - v.at > JSON_SIMPLE_KEY_MAX)
                                return JSON_BAIL;
                        j->p += 2;
                        yspace(j);
                }
                if (j->p < j->end && (*j->p == '{' || *j->p == '['))
                        r = yflow(y, *j->p == '{');
                else if ((r = yscalar(y, true, &v)) == 0)
                        r = yadd(j, &v);
                if (r) return r;
                yspace(j);
                if (j->p == j->end) return JSON_BAIL;
                if (*j->p == close) break;
                if (*j->p != ',') return JSON_BAIL;
                j->p++;
                yspace(j);
                if (j->p < j->end && (*j->p == ']' || *j->p == '}')) return JSON_BAIL;
        }
        j->p++;
        return jbuild(j, close_collection(ps));
}

/* Each of these reads a block node at p and returns with p at the next line
 * with content (y->col its column) or at the end of the document. A node
 * ends where a line is indented no more than its collection; a line
 * indented more than the innermost block collection after a complete node
 * would continue a plain scalar or be an error: the reader gives up. */
static int ymap(yscan *y, yscal *k);
static int yseq(yscan *y, bool indentless);

/* A value on the line of its key: a flow collection or a scalar. */
static int yinline(yscan *y) {
        jscan *j = &y->j;
        int r;
        if (*j->p == '{' || *j->p == '[') {
                r = yflow(y, *j->p == '{');
        } else {
                yscal v;
                if ((r = yscalar(y, false, &v)) == 0) r = yadd(j, &v);
        }
        return r ? r : yeol(y);
}

/* A block node at the start of its line or after "- ". */
static int yblock(yscan *y) {
        jscan *j = &y->j;
        if (yentry(j)) return yseq(y, false);
        if (*j->p == '{' || *j->p == '[') return yinline(y);
        yscal v;
        int r = yscalar(y, false, &v);
        if (r) return r;
        yspace(j);
        if (ykey_end(j)) return ymap(y, &v);
        return (r = yadd(j, &v)) ? r : yeol(y);
}

/* A block mapping whose first key k was read, p at its ':'. */
static int ymap(yscan *y, yscal *k) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        size_t n = k->m.column;
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, open_collection(ps, DP_DOC_MAP, &k->m));
        if (r) return r;
        for (;;) {
                if (j->p - k->at > JSON_SIMPLE_KEY_MAX) return JSON_BAIL;
                if ((r = yadd(j, k)) != 0) return r;
                j->p++;
                mark vm = jmark(j); /* an empty value is marked just after the ':' */
                yspace(j);
                if (j->p == j->end || *j->p == '\n' || *j->p == '#') {
                        if ((r = yeol(y)) != 0) return r;
                        if (!y->at_end && y->col > n)
                                r = yblock(y);
                        else if (!y->at_end && y->col == n && yentry(j))
                                r = yseq(y, true);
                        else
                                r = jbuild(j, add_scalar(ps, "", 0, true, &vm));
                } else {
                        r = yinline(y);
                }
                if (r) return r;
                if (y->at_end || y->col < n) break;
                if (y->col > n || yentry(j)) return JSON_BAIL;
                if ((r = yscalar(y, false, k)) != 0) return r;
                yspace(j);
                if (!ykey_end(j)) return JSON_BAIL;
        }
        return jbuild(j, close_collection(ps));
}

/* A block sequence, its first '-' at p; an indentless one (the value of a
 * mapping key, its '-' in the key's column) ends at a line that is not an
 * entry. */
static int yseq(yscan *y, bool indentless) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        mark m = jmark(j);
        size_t n = m.column;
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, open_collection(ps, DP_DOC_SEQ, &m));
        if (r) return r;
        for (;;) {
                j->p++;
                mark em = jmark(j); /* an empty entry is marked just after the '-' */
                yspace(j);
                if (j->p == j->end || *j->p == '\n' || *j->p == '#') {
                        if ((r = yeol(y)) != 0) return r;
                        if (!y->at_end && y->col > n)
                                r = yblock(y);
                        else
                                r = jbuild(j, add_scalar(ps, "", 0, true, &em));
                } else {
                        r = yblock(y);
                }
                if (r) return r;
                if (y->at_end || y->col < n) break;
                if (y->col > n) return JSON_BAIL;
                if (!yentry(j)) {
                        if (indentless) break;
                        return JSON_BAIL;
                }
        }
        return jbuild(j, close_collection(ps));
}

/* Reads the documents of buf from offset start (line `line`, the start of
 * the input or of a "---" line), the input having passed yprescan. 0: every
 * document was read (and handed to fn); JSON_BAIL: documents before
 * *ret_off (the start of the one it gave up in, line *ret_line) were read,
 * that one is libyaml's; -ENOMEM. */
static int parse_yaml_fast(parse_state *ps, const char *buf, size_t len, size_t start, size_t line, size_t *ret_off,
                           size_t *ret_line) {
        dp_doc_set *s = ps->set;
        *ret_off = start;
        *ret_line = line;
        yscan y = {.j = {.ps = ps, .p = buf + start, .end = buf + len, .line_start = buf + start, .line = line}};
        jscan *j = &y.j;
        size_t nodes = s->n_nodes, roots = s->n_roots;
        dp_error *err = ps->err;
        ps->err = NULL; /* every failure gives up: no message is wanted */
        int r = ylines(&y, false);
        while (r == 0 && (!y.at_end || y.marker)) {
                if (y.marker) {
                        *ret_off = (size_t)(j->p - buf);
                        *ret_line = j->line;
                        y.at_end = y.marker = false;
                        j->p += 3;
                        if ((r = yeol(&y)) != 0) break;
                }
                if (y.at_end) { /* "---" and nothing: libyaml's empty scalar (dropped as null) */
                        mark m = jmark(j);
                        r = jbuild(j, add_scalar(ps, "", 0, true, &m));
                } else if ((r = yblock(&y)) == 0 && !y.at_end) {
                        r = JSON_BAIL; /* more after the document's node */
                }
                if (r) break;
                ps->err = err;
                document_end(ps);
                ps->err = NULL;
                nodes = s->n_nodes;
                roots = s->n_roots;
        }
        free(j->tmp);
        ps->err = err;
        if (r == 0) return 0;
        /* undo the document it gave up in */
        for (size_t i = roots; i < s->n_roots; i++)
                free(s->sources[i]);
        s->n_roots = roots;
        s->n_nodes = nodes;
        ps->depth = 0;
        ps->n_kids = 0;
        return r;
}

static int parse(dp_doc_set *s, const char *buf, size_t len, const char *name, bool fast, dp_doc_each_fn fn,
                 void *userdata, dp_error *err) {
        if (len > DP_DOC_MAX_INPUT)
                return dp_error_set(err, -E2BIG, "%s: input larger than %u MiB", name, DP_DOC_MAX_INPUT >> 20);
        parse_state ps = {.set = s, .name = name, .err = err, .fn = fn, .userdata = userdata};
        size_t roots_before = s->n_roots;
        int r = fast ? parse_json(&ps, buf, len) : JSON_BAIL;
        /* The YAML reader and libyaml take turns: the reader reads documents
         * until one it is not sure of, libyaml reads that one, and the reader
         * goes on from the next "---" line. */
        bool reader = fast && r == JSON_BAIL && yprescan(buf, len);
        size_t off = 0, line = 0;
        while (r == JSON_BAIL) {
                size_t bail_off = off, bail_line = line, next = 0;
                if (reader && (r = parse_yaml_fast(&ps, buf, len, off, line, &bail_off, &bail_line)) != JSON_BAIL) break;
                ps.line_off = bail_line;
                r = parse_yaml(&ps, bail_off ? buf + bail_off : buf, len - bail_off, reader ? &next : NULL);
                if (r != YAML_RESUME) break;
                off = bail_off;
                for (size_t i = 0; i < next && off < len; off++)
                        i += buf[off] == '\n';
                line = bail_line + next;
                r = JSON_BAIL;
        }
        free(ps.kids);
        if (r < 0) {
                /* No partial documents: drop roots added by this call (nodes
                 * stay owned by the set and are freed with it). */
                for (size_t i = roots_before; i < s->n_roots; i++) free(s->sources[i]);
                s->n_roots = roots_before;
                return r;
        }
        /* a syntax error anywhere in the input counts before fn's failure */
        if (ps.fn_r < 0) return ps.fn_r;
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

int dp_doc_parse(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err) {
        assert_return(s && (buf || len == 0), -EINVAL);
        return parse(s, buf, len, name ? name : "<input>", true, NULL, NULL, err);
}

int dp_doc_parse_libyaml(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err) {
        assert_return(s && (buf || len == 0), -EINVAL);
        return parse(s, buf, len, name ? name : "<input>", false, NULL, NULL, err);
}

int dp_doc_parse_each(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata, dp_error *err) {
        assert_return((buf || len == 0) && fn, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        return parse(s, buf, len, name ? name : "<input>", true, fn, userdata, err);
}

int dp_doc_parse_each_libyaml(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata,
                              dp_error *err) {
        assert_return((buf || len == 0) && fn, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        return parse(s, buf, len, name ? name : "<input>", false, fn, userdata, err);
}

size_t dp_doc_fast_reach(const char *buf, size_t len) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s || len > DP_DOC_MAX_INPUT) return 0;
        parse_state ps = {.set = s, .name = "<input>"};
        size_t off = 0, line = 0;
        int r = parse_json(&ps, buf, len);
        if (r == JSON_BAIL && yprescan(buf, len)) r = parse_yaml_fast(&ps, buf, len, 0, 0, &off, &line);
        free(ps.kids);
        return r == 0 ? len : off;
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
 * 8 bytes at once). tests/base/test-doc-emit.c keeps the first, simple
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
};

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
                              bytes_equal(w, '#'))) {
                                i += 8;
                                continue;
                        }
                }
                for (size_t stop = len - i >= 8 ? i + 8 : len; i < stop; i++) {
                        unsigned char c = (unsigned char)s[i];
                        unsigned k = yaml_class[c];
                        if (_likely_(!(k & (Y_CTRL | Y_MARK)))) continue;
                        if (k & Y_CTRL) return true; /* NUL and control bytes */
                        if (c == ':' ? i + 1 < len && s[i + 1] == ' ' : i > 0 && s[i - 1] == ' ') return true;
                }
        }
        if (plain_kind(s) != DP_DOC_STR) return true;
        if (len <= 3 && is_yaml11_word(s)) return true;
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
                json_string(o, s, len);
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
                        json_string(o, key, len);
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
