/* SPDX-License-Identifier: Apache-2.0
 *
 * builder.c — the sticky-error tree builder (in a set or in scratch
 * memory) and the strict field readers of our own files (builder.h).
 */
#include <stdio.h>

#include "doc/builder.h"

/* ---- scratch memory ---- */

typedef struct scratch_block {
        char *p;
        size_t size;
} scratch_block;

struct dp_doc_scratch {
        scratch_block *blocks;
        size_t n_blocks, cap_blocks;
        size_t cur, used;  /* the block being filled, and how much of it is used */
        dp_doc_set **docs; /* documents the last tree points into */
        size_t n_docs, cap_docs;
};

#define SCRATCH_BLOCK (32u << 10)

dp_doc_scratch *dp_doc_scratch_new(void) { return calloc(1, sizeof(dp_doc_scratch)); }

void dp_doc_scratch_reset(dp_doc_scratch *x) {
        if (!x) return;
        x->cur = 0;
        x->used = 0;
        for (size_t i = 0; i < x->n_docs; i++)
                dp_doc_set_free(x->docs[i]);
        x->n_docs = 0;
}

dp_doc_scratch *dp_doc_scratch_free(dp_doc_scratch *x) {
        if (!x) return NULL;
        dp_doc_scratch_reset(x);
        for (size_t i = 0; i < x->n_blocks; i++)
                free(x->blocks[i].p);
        dp_free_many(x->blocks, x->docs);
        free(x);
        return NULL;
}

static void *scratch_alloc(dp_doc_builder *b, size_t size) {
        dp_doc_scratch *x = b->scratch;
        if (size > SIZE_MAX / 2) goto oom;
        size = (size + 7) & ~(size_t)7;
        if (_likely_(x->cur < x->n_blocks && size <= x->blocks[x->cur].size - x->used)) {
                void *p = x->blocks[x->cur].p + x->used;
                x->used += size;
                return p;
        }
        while (x->cur < x->n_blocks && x->used + size > x->blocks[x->cur].size) {
                x->cur++;
                x->used = 0;
        }
        if (x->cur == x->n_blocks) {
                size_t bsize = size > SCRATCH_BLOCK ? size : SCRATCH_BLOCK;
                if (DP_GROW(x->blocks, x->cap_blocks, x->n_blocks + 1) < 0) goto oom;
                char *p = malloc(bsize);
                if (!p) goto oom;
                x->blocks[x->n_blocks++] = (scratch_block){p, bsize};
        }
        void *p = x->blocks[x->cur].p + x->used;
        x->used += size;
        return p;
oom:
        b->r = -ENOMEM;
        return NULL;
}

static dp_doc_node *scratch_node(dp_doc_builder *b, dp_doc_type t) {
        dp_doc_node *n = scratch_alloc(b, sizeof(*n));
        if (n) *n = (dp_doc_node){.type = t};
        return n;
}

/* Room for one more pair or item in a scratch map or sequence (cap counts
 * the scratch array; a full one is copied to one twice as long). */
static bool scratch_room(dp_doc_builder *b, dp_doc_node *n) {
        if (n->n < n->cap) return true;
        bool map = n->type == DP_DOC_MAP;
        size_t esz = map ? sizeof(dp_doc_pair) : sizeof(dp_doc_node *), cap = n->cap ? 2 * n->cap : 4, bytes;
        if (dp_mul_overflow(cap, esz, &bytes)) {
                b->r = -ENOMEM;
                return false;
        }
        void *a = scratch_alloc(b, bytes);
        if (!a) return false;
        if (n->n) memcpy(a, map ? (void *)n->pairs : (void *)n->items, n->n * esz);
        if (map)
                n->pairs = a;
        else
                n->items = a;
        n->cap = cap;
        return true;
}

/* ---- nodes ---- */

dp_doc_node *dp_doc_b_map(dp_doc_builder *b) {
        if (b->r < 0) return NULL;
        return b->set ? dp_doc_b_check(b, dp_doc_new_map(b->set)) : scratch_node(b, DP_DOC_MAP);
}

dp_doc_node *dp_doc_b_seq(dp_doc_builder *b) {
        if (b->r < 0) return NULL;
        return b->set ? dp_doc_b_check(b, dp_doc_new_seq(b->set)) : scratch_node(b, DP_DOC_SEQ);
}

dp_doc_node *dp_doc_b_str(dp_doc_builder *b, const char *v) {
        if (b->r < 0) return NULL;
        if (b->set) return dp_doc_b_check(b, dp_doc_new_str(b->set, v));
        dp_doc_node *n = scratch_node(b, DP_DOC_SCALAR);
        if (n) {
                n->str = (char *)v; /* read only: the tree is the caller's to emit, not to change */
                n->len = strlen(v);
        }
        return n;
}

dp_doc_node *dp_doc_b_text(dp_doc_builder *b, const char *text, bool plain) {
        if (b->r < 0) return NULL;
        if (b->set) return dp_doc_b_check(b, plain ? dp_doc_new_raw(b->set, text) : dp_doc_new_str(b->set, text));
        size_t len = strlen(text);
        dp_doc_node *n = scratch_node(b, DP_DOC_SCALAR);
        char *p = n ? scratch_alloc(b, len + 1) : NULL;
        if (!p) return NULL;
        memcpy(p, text, len + 1);
        n->str = p;
        n->len = len;
        n->plain = plain;
        return n;
}

/* decimal digits of u before end, without printf (counts are in every claim) */
static char *digits(char *end, uint64_t u) {
        *--end = 0;
        do {
                *--end = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        return end;
}

dp_doc_node *dp_doc_b_int(dp_doc_builder *b, int64_t v) {
        char buf[24], *p = digits(buf + sizeof(buf), v < 0 ? -(uint64_t)v : (uint64_t)v);
        if (v < 0) *--p = '-';
        return dp_doc_b_text(b, p, true);
}

dp_doc_node *dp_doc_b_uint(dp_doc_builder *b, uint64_t v) {
        char buf[24];
        return dp_doc_b_text(b, digits(buf + sizeof(buf), v), true);
}

dp_doc_node *dp_doc_b_bool(dp_doc_builder *b, bool v) {
        if (b->set) return b->r < 0 ? NULL : dp_doc_b_check(b, dp_doc_new_bool(b->set, v));
        dp_doc_node *n = dp_doc_b_str(b, v ? "true" : "false");
        if (n) n->plain = true;
        return n;
}

static dp_doc_node *copy_tree(dp_doc_builder *b, const dp_doc_node *n) {
        if (b->r < 0) return NULL;
        switch (n->type) {
        case DP_DOC_SCALAR:
                return dp_doc_b_check(b, n->plain ? dp_doc_new_raw(b->set, n->str)
                                                  : dp_doc_new_strn(b->set, n->str, n->len));
        case DP_DOC_MAP: {
                dp_doc_node *m = dp_doc_b_map(b);
                for (size_t i = 0; i < n->n; i++)
                        dp_doc_b_put(b, m, n->pairs[i].key, copy_tree(b, n->pairs[i].value));
                return m;
        }
        case DP_DOC_SEQ: {
                dp_doc_node *s = dp_doc_b_seq(b);
                for (size_t i = 0; i < n->n; i++)
                        dp_doc_b_push(b, s, copy_tree(b, n->items[i]));
                return s;
        }
        }
        return NULL;
}

dp_doc_node *dp_doc_b_adopt(dp_doc_builder *b, dp_doc_set *doc, const dp_doc_node *root) {
        if (b->r < 0 || !doc || !root) {
                dp_doc_set_free(doc);
                return dp_doc_b_check(b, NULL);
        }
        if (b->set) {
                dp_doc_node *n = copy_tree(b, root);
                dp_doc_set_free(doc);
                return n;
        }
        dp_doc_scratch *x = b->scratch;
        if (DP_GROW(x->docs, x->cap_docs, x->n_docs + 1) < 0) {
                dp_doc_set_free(doc);
                return dp_doc_b_check(b, NULL);
        }
        x->docs[x->n_docs++] = doc;
        return (dp_doc_node *)root; /* read only, as every scratch node */
}

void dp_doc_b_put(dp_doc_builder *b, dp_doc_node *map, const char *key, dp_doc_node *v) {
        if (b->r < 0) return;
        if (!map || !v)
                b->r = -ENOMEM;
        else if (b->set) {
                if (dp_doc_map_add(b->set, map, key, v) < 0) b->r = -ENOMEM;
        } else if (scratch_room(b, map))
                map->pairs[map->n++] = (dp_doc_pair){key, NULL, v};
}

void dp_doc_b_push(dp_doc_builder *b, dp_doc_node *seq, dp_doc_node *v) {
        if (b->r < 0) return;
        if (!seq || !v)
                b->r = -ENOMEM;
        else if (b->set) {
                if (dp_doc_seq_add(b->set, seq, v) < 0) b->r = -ENOMEM;
        } else if (scratch_room(b, seq))
                seq->items[seq->n++] = v;
}

void dp_doc_b_put_str(dp_doc_builder *b, dp_doc_node *map, const char *key, const char *v) {
        if (v) dp_doc_b_put(b, map, key, dp_doc_b_str(b, v));
}

void dp_doc_b_put_int(dp_doc_builder *b, dp_doc_node *map, const char *key, int64_t v) {
        dp_doc_b_put(b, map, key, dp_doc_b_int(b, v));
}

void dp_doc_b_put_uint(dp_doc_builder *b, dp_doc_node *map, const char *key, uint64_t v) {
        dp_doc_b_put(b, map, key, dp_doc_b_uint(b, v));
}

void dp_doc_b_put_bool(dp_doc_builder *b, dp_doc_node *map, const char *key, bool v) {
        dp_doc_b_put(b, map, key, dp_doc_b_bool(b, v));
}

void dp_doc_b_put_strv(dp_doc_builder *b, dp_doc_node *map, const char *key, char *const *v, size_t n) {
        dp_doc_node *q = dp_doc_b_seq(b);
        for (size_t i = 0; q && i < n; i++)
                dp_doc_b_push(b, q, dp_doc_b_str(b, v[i]));
        dp_doc_b_put(b, map, key, q);
}

/* ---- strict readers ---- */

int dp_doc_dec_bad(const dp_doc_decoder *d, const dp_doc_node *n, const char *path, const char *rule) {
        return dp_error_set(d->err, -EBADMSG, "%s: %s corrupt: %s: %s (line %u)", d->source, d->what, path, rule,
                            n ? n->line : 0);
}

int dp_doc_dec_oom(const dp_doc_decoder *d) { return dp_error_set(d->err, -ENOMEM, "%s: out of memory", d->source); }

int dp_doc_dec_only_keys(const dp_doc_decoder *d, const dp_doc_node *m, const char *path, const char *const *keys) {
        if (!m || m->type != DP_DOC_MAP) return dp_doc_dec_bad(d, m, path, "expected a map");
        for (size_t i = 0; i < m->n; i++) {
                bool ok = false;
                for (size_t k = 0; keys[k] && !ok; k++)
                        ok = streq(m->pairs[i].key, keys[k]);
                if (!ok) {
                        char buf[256];
                        snprintf(buf, sizeof buf, "%s.%s", path, m->pairs[i].key);
                        return dp_doc_dec_bad(d, m->pairs[i].key_node, buf, "unknown field");
                }
        }
        return 0;
}

static bool is_str(const dp_doc_node *n) {
        return n->type == DP_DOC_SCALAR && dp_doc_kind(n) == DP_DOC_STR && strlen(n->str) == n->len;
}

int dp_doc_dec_str(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, unsigned flags, const char *path,
                   char **ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return (flags & DP_DOC_DEC_OPTIONAL) ? 0 : dp_doc_dec_bad(d, m, buf, "required");
        if (!is_str(n)) return dp_doc_dec_bad(d, n, buf, "expected a string");
        if (!n->len && (flags & DP_DOC_DEC_NONEMPTY)) return dp_doc_dec_bad(d, n, buf, "empty");
        if (!(*ret = dp_strndup(n->str, n->len))) return dp_doc_dec_oom(d);
        return 0;
}

int dp_doc_dec_bool(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, const char *path, bool *ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return dp_doc_dec_bad(d, m, buf, "required");
        if (dp_doc_kind(n) != DP_DOC_BOOL || dp_doc_get_bool(n, ret, NULL) < 0)
                return dp_doc_dec_bad(d, n, buf, "expected a boolean");
        return 0;
}

int dp_doc_dec_seq(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, size_t max, const char *path,
                   const dp_doc_node **ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return dp_doc_dec_bad(d, m, buf, "required");
        if (n->type != DP_DOC_SEQ) return dp_doc_dec_bad(d, n, buf, "expected a list");
        if (n->n > max) return dp_error_set(d->err, -E2BIG, "%s: %s: more than %zu entries", d->source, buf, max);
        *ret = n;
        return 0;
}

int dp_doc_dec_strv(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, size_t max, const char *path,
                    char ***ret, size_t *ret_n) {
        const dp_doc_node *n = NULL;
        int r = dp_doc_dec_seq(d, m, key, max, path, &n);
        if (r < 0) return r;
        if (!(*ret = calloc(n->n + 1, sizeof(char *)))) return dp_doc_dec_oom(d);
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_node *x = n->items[i];
                if (!is_str(x)) {
                        char p[280];
                        snprintf(p, sizeof p, "%s.%s[%zu]", path, key, i);
                        return dp_doc_dec_bad(d, x, p, "expected a string");
                }
                if (!((*ret)[i] = dp_strndup(x->str, x->len))) return dp_doc_dec_oom(d);
                (*ret_n)++;
        }
        return 0;
}
