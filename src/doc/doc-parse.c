/* SPDX-License-Identifier: Apache-2.0 */
#include <yaml.h>

#include "base/fileio.h"
#include "doc/doc-internal.h"

/* The tree builder (libyaml's events or a reader's calls become nodes),
 * libyaml, and the parse entry points, which let the readers of doc-read.c
 * take what they can. */

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
        ps->last = n;
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
                if (n->plain && streq(n->str, "<<")) {
                        if (ps->merge_key[d]) return dup_error(ps, n);
                        ps->merge_key[d] = n;
                        ps->merge_at[d] = ps->n_kids - ps->base[d];
                }
                ps->pending_key[d] = n->str;
                ps->pending_key_node[d] = n;
                return 0;
        }
        if (ps->pending_key_node[d] == ps->merge_key[d]) {
                /* merged when the map ends (merge_pairs) */
                ps->merge_value[d] = n;
                ps->pending_key[d] = NULL;
                ps->pending_key_node[d] = NULL;
                return 0;
        }
        /* the key is the key node's string, owned by the set: no copy */
        int r = push_kid(ps, ps->pending_key[d], ps->pending_key_node[d], n);
        ps->pending_key[d] = NULL;
        ps->pending_key_node[d] = NULL;
        return r;
}

/* ---- merge keys ----
 *
 * kubectl's go-yaml takes YAML 1.1's merge key, so devplane does too: a
 * plain "<<" key whose value is a map (an alias of one, or one written in
 * place) or a sequence of maps puts their pairs into the map that holds it,
 * where the "<<" was, except for keys the map has itself; of a sequence, an
 * earlier map's key wins over a later one's. go-yaml v2 (sigs.k8s.io/yaml)
 * agrees when "<<" comes before the map's own keys, as it is written; with
 * "<<" after an own key of the same name it lets the merged value win, v3
 * and YAML 1.1 the own one, as here. A map holds one "<<" (a second is a
 * duplicate key; go-yaml v2 merges both). Merged pairs share the merged
 * maps' nodes, so the alias cap bounds them: a merged map has no more pairs
 * than the nodes its aliases were counted for. Both readers build through
 * here, and the YAML reader leaves aliases to libyaml. */

typedef struct merge_cand {
        const dp_doc_pair *pair;
        size_t rank; /* the map's own pairs first, then the merged maps' in order */
        bool wins;
} merge_cand;

static int cmp_merge_cand(const void *a, const void *b) {
        const merge_cand *x = a, *y = b;
        int c = strcmp(x->pair->key, y->pair->key);
        return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

static int merge_pairs(parse_state *ps, dp_doc_node *map, size_t d) {
        const dp_doc_node *key = ps->merge_key[d], *v = ps->merge_value[d];
        const dp_doc_node *const *src = v && v->type == DP_DOC_MAP ? &v : NULL;
        size_t n_src = src ? 1 : 0, total = map->n;
        if (v && v->type == DP_DOC_SEQ) {
                src = (const dp_doc_node *const *)v->items;
                n_src = v->n;
        }
        for (size_t i = 0; i < n_src && src; i++) {
                if (src[i]->type != DP_DOC_MAP)
                        src = NULL;
                else
                        total += src[i]->n;
        }
        if (!src)
                return perr(ps, -EINVAL, &(mark){.line = key->line - 1, .column = key->col - 1},
                            "map merge requires a map or a sequence of maps as the value of \"<<\"");
        _cleanup_free_ merge_cand *c = calloc(total + 1, sizeof *c);
        if (!c) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < map->n; i++, k++)
                c[k] = (merge_cand){&map->pairs[i], k, false};
        for (size_t s = 0; s < n_src; s++)
                for (size_t i = 0; i < src[s]->n; i++, k++)
                        c[k] = (merge_cand){&src[s]->pairs[i], k, false};
        qsort(c, total, sizeof *c, cmp_merge_cand);
        size_t kept = 0;
        for (size_t i = 0; i < total; i++)
                if ((c[i].wins = i == 0 || strcmp(c[i - 1].pair->key, c[i].pair->key) != 0)) kept++;
        /* back to document order: own pairs before "<<", the merged ones, the rest */
        _cleanup_free_ const dp_doc_pair **order = calloc(total + 1, sizeof *order);
        if (!order) return -ENOMEM;
        for (size_t i = 0; i < total; i++)
                if (c[i].wins) order[c[i].rank] = c[i].pair;
        dp_doc_pair *out = doc_arena_alloc(ps->set, (kept + 1) * sizeof(dp_doc_pair));
        if (!out) return -ENOMEM;
        size_t w = 0, at = ps->merge_at[d];
        for (size_t i = 0; i < at; i++)
                out[w++] = map->pairs[i];
        for (size_t i = map->n; i < total; i++)
                if (order[i]) out[w++] = *order[i];
        for (size_t i = at; i < map->n; i++)
                out[w++] = map->pairs[i];
        map->pairs = out;
        map->n = w;
        return 0;
}

int doc_open_collection(parse_state *ps, dp_doc_type t, const mark *m) {
        if (ps->depth >= DP_DOC_MAX_DEPTH) return perr(ps, -E2BIG, m, "nesting deeper than 100 levels");
        dp_doc_node *n = doc_node_new(ps->set, t);
        if (!n) return doc_nodes_full(ps->set) ? perr(ps, -E2BIG, m, "too many nodes") : -ENOMEM;
        n->line = (uint32_t)m->line + 1;
        n->col = (uint32_t)m->column + 1;
        ps->stack[ps->depth] = n;
        ps->base[ps->depth] = ps->n_kids;
        ps->pending_key[ps->depth] = NULL;
        ps->merge_key[ps->depth] = ps->merge_value[ps->depth] = NULL;
        ps->depth++;
        return 0;
}

int doc_close_collection(parse_state *ps) {
        assert(ps->depth > 0);
        dp_doc_node *n = ps->stack[--ps->depth];
        size_t first = ps->base[ps->depth], count = ps->n_kids - first;
        if (count) {
                if (n->type == DP_DOC_MAP) {
                        n->pairs = doc_arena_alloc(ps->set, count * sizeof(dp_doc_pair));
                        if (!n->pairs) return -ENOMEM;
                        memcpy(n->pairs, ps->kids + first, count * sizeof(dp_doc_pair));
                } else {
                        n->items = doc_arena_alloc(ps->set, count * sizeof(dp_doc_node *));
                        if (!n->items) return -ENOMEM;
                        for (size_t i = 0; i < count; i++)
                                n->items[i] = ps->kids[first + i].value;
                }
        }
        n->n = count;
        ps->n_kids = first;
        if (n->type == DP_DOC_MAP) {
                int r = check_duplicates(ps, n);
                if (r >= 0 && ps->merge_key[ps->depth]) r = merge_pairs(ps, n, ps->depth);
                if (r < 0) return r;
        }
        return attach(ps, n, &(mark){.line = n->line - 1, .column = n->col - 1});
}

int doc_add_scalar(parse_state *ps, const char *str, size_t len, bool plain, const mark *m) {
        dp_doc_node *n = dp_doc_new_strn(ps->set, str, len);
        if (!n) return -ENOMEM;
        n->plain = plain;
        n->line = (uint32_t)m->line + 1;
        n->col = (uint32_t)m->column + 1;
        return attach(ps, n, m);
}

/* A document ended: with dp_doc_parse_each, hand its root to fn (unless fn
 * failed before) and drop the document. */
void doc_document_end(parse_state *ps) {
        if (!ps->fn) return;
        dp_doc_set *s = ps->set;
        for (size_t i = 0; i < s->n_roots; i++) {
                dp_doc_node *root = s->roots[i];
                if (root->type == DP_DOC_SCALAR && dp_doc_is_null(root)) continue;
                if (ps->fn_r >= 0) ps->fn_r = ps->fn(root, ps->name, ps->n_handed, ps->userdata, ps->err);
                ps->n_handed++;
        }
        doc_set_drop_all(s);
}

/* ---- anchors and aliases ----
 *
 * kubectl reads YAML with go-yaml (sigs.k8s.io/yaml), which takes anchors
 * and aliases, so devplane does too. An alias is the anchored node itself,
 * shared (trees are never changed once built), so an error inside it names
 * the line where the anchored value is written. Sharing costs the parser
 * nothing, but everything that walks the tree walks the alias in full: a
 * "billion laughs" of nine aliases nested ten times is 10^9 nodes to decode.
 * So an input is refused once it would be more than DP_DOC_MAX_NODES nodes
 * written out in full, the same cap as for an input without aliases: what
 * a consumer walks stays within what a plain input could make it walk
 * (go-yaml refuses "excessive aliasing" by a ratio of aliases to nodes; a
 * cap on the expanded size bounds the work whatever the ratio). Likewise
 * the nesting an alias brings counts against DP_DOC_MAX_DEPTH. Anchors hold
 * within their document; a later anchor of the same name wins. */

struct doc_anchor {
        char *name;
        dp_doc_node *node;
        size_t size;   /* nodes written out in full */
        size_t height; /* levels: 1 for a scalar */
};

static void anchors_clear(parse_state *ps) {
        for (size_t i = 0; i < ps->n_anchors; i++) free(ps->anchors[i].name);
        ps->n_anchors = 0;
}

static void anchors_done(parse_state *ps) {
        anchors_clear(ps);
        free(ps->anchors);
        ps->anchors = NULL;
        ps->cap_anchors = 0;
        for (size_t d = 0; d <= DP_DOC_MAX_DEPTH; d++) {
                free(ps->open_anchor[d]);
                ps->open_anchor[d] = NULL;
        }
}

static int anchor_add(parse_state *ps, const char *name, dp_doc_node *n, size_t size, size_t height) {
        if (DP_GROW(ps->anchors, ps->cap_anchors, ps->n_anchors + 1) < 0) return -ENOMEM;
        char *copy = strdup(name);
        if (!copy) return -ENOMEM;
        ps->anchors[ps->n_anchors++] = (struct doc_anchor){copy, n, size, height};
        return 0;
}

/* A node of `height` levels is attached at the current depth. */
static void note_height(parse_state *ps, size_t height) {
        if (ps->depth > 0 && ps->depth + height > ps->peak[ps->depth - 1]) ps->peak[ps->depth - 1] = ps->depth + height;
}

static int alias(parse_state *ps, const char *name, const mark *m) {
        const struct doc_anchor *a = NULL;
        for (size_t i = ps->n_anchors; i > 0 && !a; i--)
                if (streq(ps->anchors[i - 1].name, name)) a = &ps->anchors[i - 1];
        char msg[400];
        if (!a) {
                snprintf(msg, sizeof msg, "alias *%.200s names no anchor before it in this document", name);
                return perr(ps, -EINVAL, m, msg);
        }
        if (ps->expanded + a->size > DP_DOC_MAX_NODES) {
                snprintf(msg, sizeof msg,
                         "YAML aliases expand past %u nodes (alias *%.200s); the cap bounds an input with aliases "
                         "written out in full as one without",
                         DP_DOC_MAX_NODES, name);
                return perr(ps, -E2BIG, m, msg);
        }
        if (ps->depth + a->height > DP_DOC_MAX_DEPTH + 1) return perr(ps, -E2BIG, m, "nesting deeper than 100 levels");
        ps->expanded += a->size;
        note_height(ps, a->height);
        return attach(ps, a->node, m);
}

static int scalar_event(parse_state *ps, yaml_event_t *ev, const mark *m) {
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
        if (ev->data.scalar.tag && streq((const char *)ev->data.scalar.tag, YAML_NULL_TAG)) plain = true;
        /* "!!merge <<" is the merge key written out */
        if (ev->data.scalar.tag && streq((const char *)ev->data.scalar.tag, "tag:yaml.org,2002:merge") &&
            streq((const char *)ev->data.scalar.value, "<<"))
                plain = true;
        ps->expanded++;
        note_height(ps, 1);
        int r = doc_add_scalar(ps, (const char *)ev->data.scalar.value, ev->data.scalar.length, plain, m);
        if (r < 0 || !ev->data.scalar.anchor) return r;
        return anchor_add(ps, (const char *)ev->data.scalar.anchor, ps->last, 1, 1);
}

static int open_event(parse_state *ps, yaml_event_t *ev, const mark *m) {
        bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
        const yaml_char_t *anchor = seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
        size_t d = ps->depth;
        int r = doc_open_collection(ps, seq ? DP_DOC_SEQ : DP_DOC_MAP, m);
        if (r < 0) return r;
        ps->expanded++;
        ps->open_expanded[d] = ps->expanded;
        ps->peak[d] = d + 1;
        free(ps->open_anchor[d]);
        ps->open_anchor[d] = anchor ? strdup((const char *)anchor) : NULL;
        return anchor && !ps->open_anchor[d] ? -ENOMEM : 0;
}

static int close_event(parse_state *ps) {
        size_t d = ps->depth - 1, peak = ps->peak[d], size = ps->expanded - ps->open_expanded[d] + 1;
        int r = doc_close_collection(ps);
        if (r < 0) return r;
        if (d > 0 && peak > ps->peak[d - 1]) ps->peak[d - 1] = peak;
        _cleanup_free_ char *anchor = TAKE_PTR(ps->open_anchor[d]);
        return anchor ? anchor_add(ps, anchor, ps->last, size, peak - d) : 0;
}

static int handle_event(parse_state *ps, yaml_event_t *ev) {
        const mark m = {ev->start_mark.line + ps->line_off, ev->start_mark.column};
        switch (ev->type) {
        case YAML_ALIAS_EVENT: return alias(ps, (const char *)ev->data.alias.anchor, &m);
        case YAML_SCALAR_EVENT: return scalar_event(ps, ev, &m);
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: return open_event(ps, ev, &m);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: return close_event(ps);
        case YAML_DOCUMENT_END_EVENT:
                anchors_clear(ps);
                doc_document_end(ps);
                return 0;
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

/* Which readers a parse may use before libyaml. */
typedef enum {
        READ_LIBYAML, /* libyaml alone (tests and fuzzers comparing the readers) */
        READ_JSON,    /* the JSON reader, else libyaml: what every daemon reads through */
        READ_BULK,    /* the JSON reader, the YAML reader, libyaml: dp_doc_parse_bulk only */
} readers;

static int parse(dp_doc_set *s, const char *buf, size_t len, const char *name, readers rd, dp_doc_each_fn fn,
                 void *userdata, dp_error *err) {
        if (len > DP_DOC_MAX_INPUT)
                return dp_error_set(err, -E2BIG, "%s: input larger than %u MiB", name, DP_DOC_MAX_INPUT >> 20);
        parse_state ps = {.set = s, .name = name, .err = err, .fn = fn, .userdata = userdata};
        size_t roots_before = s->n_roots;
        int r = rd != READ_LIBYAML ? doc_parse_json(&ps, buf, len) : JSON_BAIL;
        /* The YAML reader and libyaml take turns: the reader reads documents
         * until one it is not sure of, libyaml reads that one, and the reader
         * goes on from the next "---" line. */
        bool reader = rd == READ_BULK && r == JSON_BAIL && doc_yprescan(buf, len);
        size_t off = 0, line = 0;
        while (r == JSON_BAIL) {
                size_t bail_off = off, bail_line = line, next = 0;
                if (reader && (r = doc_parse_yaml_fast(&ps, buf, len, off, line, &bail_off, &bail_line)) != JSON_BAIL)
                        break;
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
        anchors_done(&ps);
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
        return parse(s, buf, len, name ? name : "<input>", READ_JSON, NULL, NULL, err);
}

int dp_doc_parse_libyaml(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err) {
        assert_return(s && (buf || len == 0), -EINVAL);
        return parse(s, buf, len, name ? name : "<input>", READ_LIBYAML, NULL, NULL, err);
}

static int parse_each(const char *buf, size_t len, const char *name, readers rd, dp_doc_each_fn fn, void *userdata,
                      dp_error *err) {
        assert_return((buf || len == 0) && fn, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        return parse(s, buf, len, name ? name : "<input>", rd, fn, userdata, err);
}

int dp_doc_parse_each(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata, dp_error *err) {
        return parse_each(buf, len, name, READ_JSON, fn, userdata, err);
}

int dp_doc_parse_bulk(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata, dp_error *err) {
        return parse_each(buf, len, name, READ_BULK, fn, userdata, err);
}

int dp_doc_parse_each_libyaml(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata,
                              dp_error *err) {
        return parse_each(buf, len, name, READ_LIBYAML, fn, userdata, err);
}

size_t dp_doc_fast_reach(const char *buf, size_t len) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s || len > DP_DOC_MAX_INPUT) return 0;
        parse_state ps = {.set = s, .name = "<input>"};
        size_t off = 0, line = 0;
        int r = doc_parse_json(&ps, buf, len);
        if (r == JSON_BAIL && doc_yprescan(buf, len)) r = doc_parse_yaml_fast(&ps, buf, len, 0, 0, &off, &line);
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
