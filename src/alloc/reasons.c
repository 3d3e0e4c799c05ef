/* SPDX-License-Identifier: Apache-2.0
 * reasons.c — a failed claim's reasons grouped when the claim fails
 * (reasons.h): each node's lines joined with "; " (the names of the claims
 * holding devices left out), nodes with equal text counted together. */
#include <stdio.h>

#include "alloc/oom.h"
#include "alloc/reasons.h"
#include "alloc/shape.h"
#include "base/hashmap.h"

typedef struct group {
        char *text;
        size_t n, first;
} group;

/* One claim's reasons while they are grouped. */
typedef struct grouping {
        group *g;
        size_t n_g, cap_g;
        dp_hashmap *index; /* text -> group index + 1 */
        size_t n_nodes;    /* nodes with reasons */
        dp_strbuf other;   /* lines about no node, "; "-joined */
        dp_strbuf t;       /* the node being grouped */
        dp_strbuf *details; /* NULL, or every node's lines as "node: line" */
        bool oom;
} grouping;

typedef struct memo_ent {
        char *key, *reason, *details;
} memo_ent;

struct alloc_reasons {
        dp_alloc_snapshot *s;
        bool one_node, details;
        dp_hashmap *nodes; /* node name -> the snapshot's copy, made when first needed */
        /* the reasons of claims that failed since allocation state last changed */
        dp_hashmap *memo; /* key -> entry index + 1 */
        memo_ent *ents;
        size_t n_ents, cap_ents;
        uint64_t version;
        dp_strbuf key;
};

static void memo_clear(alloc_reasons *rs) {
        for (size_t i = 0; i < rs->n_ents; i++) {
                free(rs->ents[i].key);
                free(rs->ents[i].reason);
                free(rs->ents[i].details);
        }
        rs->n_ents = 0;
        dp_hashmap_free(rs->memo);
        rs->memo = NULL;
}

alloc_reasons *alloc_reasons_free(alloc_reasons *rs) {
        if (!rs) return NULL;
        memo_clear(rs);
        free(rs->ents);
        dp_hashmap_free(rs->nodes);
        dp_strbuf_done(&rs->key);
        free(rs);
        return NULL;
}

alloc_reasons *alloc_reasons_new(dp_alloc_snapshot *s, bool one_node, bool details) {
        alloc_reasons *rs = calloc(1, sizeof(*rs));
        if (!rs) return NULL;
        *rs = (alloc_reasons){.s = s, .one_node = one_node, .details = details, .version = dp_alloc_version(s)};
        return rs;
}

static void grouping_done(grouping *gr) {
        for (size_t i = 0; i < gr->n_g; i++) free(gr->g[i].text);
        free(gr->g);
        dp_hashmap_free(gr->index);
        dp_strbuf_done(&gr->other);
        dp_strbuf_done(&gr->t);
}

/* " in use by claim" as the reasons write it; the holders after it are
 * left out of the grouped text. */
static const char in_use[] = " in use by claim";
#define IN_USE_LEN (sizeof(in_use) - 1)

static const char *find_in_use(const char *p, const char *end) {
        for (const char *q = p; end - q >= (ptrdiff_t)IN_USE_LEN; q++) {
                q = memchr(q, ' ', (size_t)(end - q) - IN_USE_LEN + 1);
                if (!q) return NULL;
                if (memcmp(q, in_use, IN_USE_LEN) == 0) return q;
        }
        return NULL;
}

/* A node's line as it is grouped: "8 in use by claims a, b" → "8 in use", so
 * that nodes full for the same reason count together. */
static void group_text(const char *p, size_t len, dp_strbuf *out) {
        while (len) {
                const char *end = p + len, *hit = find_in_use(p, end);
                if (!hit) {
                        dp_strbuf_append(out, p, len);
                        return;
                }
                dp_strbuf_append(out, p, (size_t)(hit - p));
                dp_strbuf_append(out, " in use", 7);
                /* the holder list runs to the next ", N " item or the end */
                const char *q = hit + IN_USE_LEN;
                while (q < end) {
                        if (q[0] == ',' && q + 2 < end && q[1] == ' ' && q[2] >= '0' && q[2] <= '9') {
                                const char *d = q + 2;
                                while (d < end && *d >= '0' && *d <= '9') d++;
                                if (d < end && *d == ' ') break;
                        }
                        q++;
                }
                len -= (size_t)(q - p);
                p = q;
        }
}

/* gr->t is one node's text: count it. */
static void add_node(grouping *gr) {
        if (gr->oom || dp_strbuf_failed(&gr->t)) {
                gr->oom = true;
                return;
        }
        gr->n_nodes++;
        if (!gr->index && !(gr->index = dp_hashmap_new())) {
                gr->oom = true;
                return;
        }
        void *v = dp_hashmap_get(gr->index, dp_strbuf_str(&gr->t));
        if (v) {
                gr->g[(uintptr_t)v - 1].n++;
                return;
        }
        char *text = NULL;
        if (DP_GROW(gr->g, gr->cap_g, gr->n_g + 1) < 0 || !(text = dp_strbuf_steal(&gr->t)) ||
            dp_hashmap_put(gr->index, text, (void *)(uintptr_t)(gr->n_g + 1)) < 0) {
                free(text);
                gr->oom = true;
                return;
        }
        gr->g[gr->n_g] = (group){text, 1, gr->n_g};
        gr->n_g++;
}

/* dp_alloc_node_reason_fn: one node's lines, as dp_alloc_allocate_first_fit
 * would prefix them with the node and the lines grouped node by node. */
static int on_node(void *userdata, size_t node_index, const char *name, const char *text, size_t len) {
        grouping *gr = userdata;
        (void)node_index;
        if (len == 0) return 0; /* no lines: the node does not count */
        dp_strbuf_truncate(&gr->t, 0);
        size_t name_len = strlen(name);
        const char *p = text, *end = text + len;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (p != text) dp_strbuf_append(&gr->t, "; ", 2);
                group_text(p, n, &gr->t);
                if (gr->details) {
                        dp_strbuf_append(gr->details, name, name_len);
                        dp_strbuf_append(gr->details, ": ", 2);
                        dp_strbuf_append(gr->details, p, n);
                        dp_strbuf_putc(gr->details, '\n');
                }
                p += n + (nl ? 1 : 0);
        }
        add_node(gr);
        return gr->oom ? -ENOMEM : 0;
}

/* The node a reason line is about: "node: rest" with a known node name, else
 * NULL (a line without a node: "no nodes", a claim's error). */
static const char *line_node(const dp_hashmap *nodes, const char *line, size_t len, size_t *ret_name_len) {
        const char *colon = memchr(line, ':', len);
        if (!colon || colon + 1 >= line + len || colon[1] != ' ') return NULL;
        size_t nl = (size_t)(colon - line);
        char name[256]; /* a node name is at most 253 bytes */
        if (nl >= sizeof(name)) return NULL;
        memcpy(name, line, nl);
        name[nl] = 0;
        const char *node = dp_hashmap_get(nodes, name);
        if (node) *ret_name_len = nl;
        return node;
}

static int known_nodes(alloc_reasons *rs) {
        if (rs->nodes) return 0;
        dp_hashmap *m = dp_hashmap_new();
        if (!m) return -ENOMEM;
        for (size_t i = 0; i < dp_alloc_node_count(rs->s); i++) {
                const char *name = dp_alloc_node_name(rs->s, i);
                if (!name || dp_hashmap_put(m, name, (void *)name) < 0) {
                        dp_hashmap_free(m);
                        return -ENOMEM;
                }
        }
        rs->nodes = m;
        return 0;
}

/* Reason lines as text: a node's consecutive "node: ..." lines are one
 * node, other lines go to gr->other. */
static void group_lines(alloc_reasons *rs, grouping *gr, const char *p) {
        if (known_nodes(rs) < 0) {
                gr->oom = true;
                return;
        }
        while (*p && !gr->oom) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p), name_len = 0;
                const char *node = line_node(rs->nodes, p, len, &name_len);
                if (!node) {
                        if (gr->other.len) dp_strbuf_append(&gr->other, "; ", 2);
                        dp_strbuf_append(&gr->other, p, len);
                        p += len + (nl ? 1 : 0);
                        continue;
                }
                dp_strbuf_truncate(&gr->t, 0);
                for (;;) {
                        group_text(p + name_len + 2, len - name_len - 2, &gr->t);
                        p += len + (nl ? 1 : 0);
                        if (!*p) break;
                        nl = strchr(p, '\n');
                        len = nl ? (size_t)(nl - p) : strlen(p);
                        size_t l2 = 0;
                        if (line_node(rs->nodes, p, len, &l2) != node) break;
                        dp_strbuf_append(&gr->t, "; ", 2);
                }
                add_node(gr);
        }
}

static int cmp_group(const void *a, const void *b) {
        const group *x = a, *y = b;
        /* most nodes first; ties in the order the nodes came (by name) */
        if (x->n != y->n) return x->n > y->n ? -1 : 1;
        return x->first < y->first ? -1 : x->first > y->first;
}

/* What follows "ResourceClaim ns/name: not allocated": ": 0/N nodes are
 * available: 320 nodes: REASON; 180 nodes: REASON", the lines about no node
 * after the counts. NULL on OOM. */
static char *grouped(const alloc_reasons *rs, grouping *gr) {
        if (gr->oom) return NULL;
        if (gr->n_g > 1) qsort(gr->g, gr->n_g, sizeof(group), cmp_group);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        if (gr->n_nodes) {
                dp_strbuf_puts(&out, ": 0/");
                dp_strbuf_put_u64(&out, rs->one_node ? 1 : dp_alloc_node_count(rs->s));
                dp_strbuf_puts(&out, " nodes are available: ");
                for (size_t i = 0; i < gr->n_g; i++) {
                        if (i) dp_strbuf_append(&out, "; ", 2);
                        dp_strbuf_put_u64(&out, gr->g[i].n);
                        dp_strbuf_puts(&out, gr->g[i].n == 1 ? " node: " : " nodes: ");
                        dp_strbuf_puts(&out, gr->g[i].text);
                }
        }
        if (gr->other.len) {
                dp_strbuf_puts(&out, gr->n_nodes ? "; " : ": ");
                dp_strbuf_append(&out, gr->other.buf, gr->other.len);
        }
        if (dp_strbuf_failed(&gr->other)) return NULL;
        return dp_strbuf_steal(&out);
}

int alloc_reasons_from_text(alloc_reasons *rs, char *text, dp_alloc_outcome *o) {
        grouping gr = {0};
        group_lines(rs, &gr, text);
        o->reason = grouped(rs, &gr);
        grouping_done(&gr);
        if (rs->details) o->why = text;
        else free(text);
        return o->reason ? 0 : -ENOMEM;
}

/* Keep what a claim of this key got (an entry that cannot be kept is only
 * not reused). */
static void remember(alloc_reasons *rs, const char *reason, const char *details) {
        if (!rs->memo && !(rs->memo = dp_hashmap_new())) return;
        if (DP_GROW(rs->ents, rs->cap_ents, rs->n_ents + 1) < 0) return;
        memo_ent e = {dp_strdup(dp_strbuf_str(&rs->key)), dp_strdup(reason), details ? dp_strdup(details) : NULL};
        if (!e.key || !e.reason || (details && !e.details) ||
            dp_hashmap_put(rs->memo, e.key, (void *)(uintptr_t)(rs->n_ents + 1)) < 0) {
                free(e.key);
                free(e.reason);
                free(e.details);
                return;
        }
        rs->ents[rs->n_ents++] = e;
}

int alloc_reasons_first_fit(alloc_reasons *rs, const dp_alloc_claim *cl, const dp_alloc_options *opts,
                            dp_alloc_outcome *o, dp_error *err) {
        if (dp_alloc_version(rs->s) != rs->version) {
                memo_clear(rs);
                rs->version = dp_alloc_version(rs->s);
        }
        dp_strbuf_truncate(&rs->key, 0);
        dp_alloc_claims_reason_key(&cl, 1, &rs->key);
        if (dp_strbuf_failed(&rs->key)) return -ENOMEM;
        void *v = rs->memo ? dp_hashmap_get(rs->memo, dp_strbuf_str(&rs->key)) : NULL;
        if (v) {
                const memo_ent *e = &rs->ents[(uintptr_t)v - 1];
                o->reason = dp_strdup(e->reason);
                if (rs->details) o->why = dp_strdup(e->details);
                return o->reason && (!rs->details || o->why) ? 0 : -ENOMEM;
        }
        _cleanup_strbuf_ dp_strbuf details = DP_STRBUF_INIT;
        grouping gr = {.details = rs->details ? &details : NULL};
        int r = dp_alloc_explain_nodes(rs->s, &cl, 1, opts, on_node, &gr, err);
        if (r < 0) {
                grouping_done(&gr);
                return r;
        }
        if (dp_alloc_node_count(rs->s) == 0) {
                /* as dp_alloc_allocate_first_fit says it */
                group_lines(rs, &gr, "no nodes\n");
                if (gr.details) dp_strbuf_puts(gr.details, "no nodes\n");
        }
        o->reason = grouped(rs, &gr);
        grouping_done(&gr);
        if (!o->reason || dp_strbuf_failed(&details)) return -ENOMEM;
        if (rs->details && !(o->why = dp_strbuf_steal(&details))) return -ENOMEM;
        remember(rs, o->reason, o->why);
        return 0;
}
