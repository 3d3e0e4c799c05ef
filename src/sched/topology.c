/* SPDX-License-Identifier: Apache-2.0
 * topology.c — what PodTopologySpread and InterPodAffinity share: label
 * selectors and affinity terms compiled, the index of bound pods by group,
 * the node table's domains per topology key, and the cycle state's entry
 * points (topology.h). */
#include <stdio.h>

#include "base/strv.h"
#include "sched/topology.h"

/* ---- selectors and terms ---- */

/* Append `key op values` to s (values copied). */
static int sel_add(topo_sel *s, const char *key, dp_node_selector_op op, char *const *values, size_t n_values) {
        topo_req *v = realloc(s->reqs, (s->n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        s->reqs = v;
        topo_req *q = &v[s->n];
        *q = (topo_req){dp_strdup(key), op, dp_strv_copy_n(values, n_values), n_values};
        if (!q->key || !q->values) {
                free(q->key);
                dp_strv_free_n(q->values, n_values);
                return -ENOMEM;
        }
        s->n++;
        return 0;
}

int topo_sel_compile(topo_sel *ret, const dp_label_selector *ls, const dp_kv *labels, size_t n_labels,
                     char *const *match_keys, size_t n_match, char *const *mismatch_keys, size_t n_mismatch) {
        topo_sel s = {.nothing = !ls};
        int r = 0;
        for (size_t i = 0; ls && r >= 0 && i < ls->n_match_labels; i++)
                r = sel_add(&s, ls->match_labels[i].key, DP_NS_OP_IN, &ls->match_labels[i].value, 1);
        for (size_t i = 0; ls && r >= 0 && i < ls->n_match_expressions; i++) {
                const dp_node_selector_requirement *q = &ls->match_expressions[i];
                r = sel_add(&s, q->key, q->op, q->values, q->n_values);
        }
        /* matchLabelKeys / mismatchLabelKeys: the pod's own values, In or
         * NotIn, as the API server merges them (not into a null selector) */
        for (size_t k = 0; ls && r >= 0 && k < n_match + n_mismatch; k++) {
                const char *key = k < n_match ? match_keys[k] : mismatch_keys[k - n_match];
                char *value = (char *)dp_kv_get(labels, n_labels, key);
                if (value) r = sel_add(&s, key, k < n_match ? DP_NS_OP_IN : DP_NS_OP_NOT_IN, &value, 1);
        }
        if (r < 0) {
                topo_sel_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

void topo_sel_done(topo_sel *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->reqs[i].key);
                dp_strv_free_n(s->reqs[i].values, s->reqs[i].n_values);
        }
        free(s->reqs);
        *s = (topo_sel){0};
}

bool topo_sel_matches(const topo_sel *s, const dp_kv *labels, size_t n, const char *extra_key, const char *extra_value) {
        if (s->nothing) return false;
        for (size_t i = 0; i < s->n; i++) {
                const topo_req *q = &s->reqs[i];
                const char *v = dp_kv_get(labels, n, q->key);
                if (!v && extra_key && streq(q->key, extra_key)) v = extra_value;
                bool in = false;
                for (size_t k = 0; v && k < q->n_values && !in; k++)
                        in = streq(q->values[k], v);
                bool ok = q->op == DP_NS_OP_IN       ? in
                          : q->op == DP_NS_OP_NOT_IN ? !in
                          : q->op == DP_NS_OP_EXISTS ? v != NULL
                                                     : v == NULL;
                if (!ok) return false;
        }
        return true;
}

int topo_term_compile(topo_term *t, const dp_pod_affinity_term *src, const char *pod_ns, const dp_kv *labels,
                      size_t n_labels) {
        *t = (topo_term){.ns_sel = {.nothing = true}};
        int r = topo_sel_compile(&t->sel, src->label_selector, labels, n_labels, src->match_label_keys,
                                 src->n_match_label_keys, src->mismatch_label_keys, src->n_mismatch_label_keys);
        if (r >= 0 && src->namespace_selector)
                r = topo_sel_compile(&t->ns_sel, src->namespace_selector, NULL, 0, NULL, 0, NULL, 0);
        if (r >= 0) {
                bool own = src->n_namespaces == 0 && !src->namespace_selector;
                t->n_namespaces = own ? 1 : src->n_namespaces;
                t->namespaces = own ? dp_strv_copy_n((char *const *)&pod_ns, 1) : dp_strv_copy_n(src->namespaces, src->n_namespaces);
                t->key = dp_strdup(src->topology_key);
                if (!t->namespaces || !t->key) r = -ENOMEM;
        }
        if (r < 0) topo_term_done(t);
        return r;
}

void topo_term_done(topo_term *t) {
        topo_sel_done(&t->sel);
        topo_sel_done(&t->ns_sel);
        dp_strv_free_n(t->namespaces, t->n_namespaces);
        free(t->key);
        *t = (topo_term){0};
}

#define NS_NAME_LABEL "kubernetes.io/metadata.name"

bool topo_term_matches(const topo_term *t, const dp_store *st, const char *ns, const dp_kv *labels, size_t n) {
        bool ns_ok = false;
        for (size_t i = 0; i < t->n_namespaces && !ns_ok; i++)
                ns_ok = streq(t->namespaces[i], ns);
        if (!ns_ok && !t->ns_sel.nothing) {
                /* a namespace pods use exists even when the input has no object for it */
                const dp_namespace *o = dp_store_get(st, DP_KIND_NAMESPACE, "", ns, NULL).ns;
                ns_ok = topo_sel_matches(&t->ns_sel, o ? o->meta.labels : NULL, o ? o->meta.n_labels : 0,
                                         NS_NAME_LABEL, ns);
        }
        return ns_ok && topo_sel_matches(&t->sel, labels, n, NULL, NULL);
}

/* A waiting pod's hint, compiled once: its DoNotSchedule constraints'
 * selectors (spread) and required affinity terms (interpod). */
struct dp_topo_hint {
        char *ns;
        topo_sel *sels;
        size_t n_sels;
        topo_term *terms;
        size_t n_terms;
};

dp_topo_hint *dp_topo_hint_free(dp_topo_hint *h) {
        if (!h) return NULL;
        for (size_t i = 0; i < h->n_sels; i++) topo_sel_done(&h->sels[i]);
        for (size_t i = 0; i < h->n_terms; i++) topo_term_done(&h->terms[i]);
        free(h->sels);
        free(h->terms);
        free(h->ns);
        free(h);
        return NULL;
}
DEFINE_FREEP(dp_topo_hint, dp_topo_hint_free)

int dp_topo_hint_compile(const dp_pod *p, const char *ns, bool spread, bool interpod, dp_topo_hint **ret) {
        _cleanup_(dp_topo_hint_freep) dp_topo_hint *h = calloc(1, sizeof(*h));
        if (!h || !(h->ns = dp_strdup(ns))) return -ENOMEM;
        if (spread && p->n_spread && !(h->sels = calloc(p->n_spread, sizeof(*h->sels)))) return -ENOMEM;
        for (size_t i = 0; spread && i < p->n_spread; i++) {
                const dp_spread_constraint *c = &p->spread[i];
                if (c->schedule_anyway) continue;
                int r = topo_sel_compile(&h->sels[h->n_sels], c->label_selector, p->meta.labels, p->meta.n_labels,
                                         c->match_label_keys, c->n_match_label_keys, NULL, 0);
                if (r < 0) return r;
                h->n_sels++;
        }
        if (interpod && p->n_pod_affinity && !(h->terms = calloc(p->n_pod_affinity, sizeof(*h->terms))))
                return -ENOMEM;
        for (size_t i = 0; interpod && i < p->n_pod_affinity; i++) {
                int r = topo_term_compile(&h->terms[i], &p->pod_affinity[i], ns, p->meta.labels, p->meta.n_labels);
                if (r < 0) return r;
                h->n_terms++;
        }
        *ret = TAKE_PTR(h);
        return 0;
}

/* As the hint matches, unlike the filter: a namespaceSelector is matched
 * against no namespace labels at all (kube-scheduler 1.35 passes none there),
 * so only an empty one lets a pod of another namespace in. */
static bool hint_term_matches(const topo_term *t, const char *ns, const dp_kv *labels, size_t n) {
        bool ns_ok = !t->ns_sel.nothing && topo_sel_matches(&t->ns_sel, NULL, 0, NULL, NULL);
        for (size_t i = 0; i < t->n_namespaces && !ns_ok; i++)
                ns_ok = streq(t->namespaces[i], ns);
        return ns_ok && topo_sel_matches(&t->sel, labels, n, NULL, NULL);
}

bool dp_topo_hint_any(const dp_topo_hint *h) { return h->n_sels || h->n_terms; }

bool dp_topo_hint_matches(const dp_topo_hint *h, const dp_pod *added, const char *added_ns) {
        const dp_kv *lb = added->meta.labels;
        size_t n = added->meta.n_labels;
        bool same_ns = h->n_sels && streq(h->ns, added_ns);
        for (size_t i = 0; i < h->n_sels && same_ns; i++)
                if (topo_sel_matches(&h->sels[i], lb, n, NULL, NULL)) return true;
        if (!h->n_terms) return false; /* no term: matching all of none is no match */
        for (size_t i = 0; i < h->n_terms; i++)
                if (!hint_term_matches(&h->terms[i], added_ns, lb, n)) return false;
        return true;
}

/* ---- the index of bound pods ---- */

typedef struct glist { /* groups holding one label */
        char *key;
        topo_group **v;
        size_t n, cap;
} glist;

typedef struct tent {
        topo_group *g;
        const topo_term *t;
} tent;

typedef struct tlist { /* anti-affinity terms requiring one label (or none: `any`) */
        char *key;
        tent *v;
        size_t n, cap;
} tlist;

typedef struct scratch_block {
        char *mem;
        size_t cap, used;
} scratch_block;

typedef struct topo_slot {
        topo_group *g; /* NULL: the slot adds nothing */
        uint32_t node;
} topo_slot;

struct dp_topo_index {
        size_t pos; /* in the store's change log */
        dp_hashmap *groups;
        topo_group **all;
        size_t n_all, cap_all;
        dp_hashmap *by_label;      /* "k\x1fv" -> glist */
        dp_hashmap *anti_by_label; /* "k\x1fv" -> tlist */
        tlist anti_any;
        topo_group **scored; /* groups with InterPodAffinity score terms */
        size_t n_scored, cap_scored;
        topo_slot *slots;
        size_t n_slots;
        dp_hashmap *node_ids; /* node name -> id + 1 */
        char **node_names;
        size_t n_node_names, cap_node_names;
        /* the node table of `gen` */
        bool tab_ok;
        uint64_t gen;
        const dp_node *const *tab;
        size_t n_tab;
        int64_t *tab_of_id;
        size_t n_tab_of_id;
        dp_hashmap *keydoms; /* key -> topo_keydom */
        scratch_block *scratch; /* topo_scratch, emptied by each PreFilter */
        size_t n_scratch;
};

static void group_free(topo_group *g) {
        free(g->key);
        free(g->ns);
        for (size_t i = 0; i < g->n_labels; i++) {
                free(g->labels[i].key);
                free(g->labels[i].value);
        }
        free(g->labels);
        for (size_t i = 0; i < g->n_anti; i++)
                topo_term_done(&g->anti[i]);
        free(g->anti);
        for (size_t i = 0; i < g->n_sterm; i++)
                topo_term_done(&g->sterm[i]);
        free(g->sterm);
        free(g->sweight);
        free(g->node);
        free(g->count);
        free(g->hash);
        free(g);
}

static topo_keydom *keydom_free(topo_keydom *kd);

static void keydoms_free(dp_topo_index *idx) {
        size_t i = 0;
        void *v;
        while (idx->keydoms && dp_hashmap_iter(idx->keydoms, &i, NULL, &v))
                keydom_free(v);
        idx->keydoms = dp_hashmap_free(idx->keydoms);
}

static void lists_free(dp_hashmap *m, bool terms) {
        size_t i = 0;
        void *v;
        while (m && dp_hashmap_iter(m, &i, NULL, &v)) {
                if (terms) {
                        free(((tlist *)v)->key);
                        free(((tlist *)v)->v);
                } else {
                        free(((glist *)v)->key);
                        free(((glist *)v)->v);
                }
                free(v);
        }
        dp_hashmap_free(m);
}

dp_topo_index *dp_topo_index_free(dp_topo_index *idx) {
        if (!idx) return NULL;
        for (size_t i = 0; i < idx->n_all; i++)
                group_free(idx->all[i]);
        free(idx->all);
        dp_hashmap_free(idx->groups);
        lists_free(idx->by_label, false);
        lists_free(idx->anti_by_label, true);
        free(idx->anti_any.v);
        free(idx->scored);
        free(idx->slots);
        dp_hashmap_free(idx->node_ids);
        dp_strv_free_n(idx->node_names, idx->n_node_names);
        free(idx->tab_of_id);
        keydoms_free(idx);
        for (size_t i = 0; i < idx->n_scratch; i++)
                free(idx->scratch[i].mem);
        free(idx->scratch);
        free(idx);
        return NULL;
}

#define SCRATCH_BLOCK (256 * 1024)

void *topo_scratch(dp_topo_index *idx, size_t size) {
        size = (size + 15) & ~(size_t)15;
        scratch_block *b = NULL;
        for (size_t i = 0; i < idx->n_scratch && !b; i++)
                if (idx->scratch[i].cap - idx->scratch[i].used >= size) b = &idx->scratch[i];
        if (!b) {
                scratch_block *v = realloc(idx->scratch, (idx->n_scratch + 1) * sizeof(*v));
                if (!v) return NULL;
                idx->scratch = v;
                size_t cap = DP_MAX(size, (size_t)SCRATCH_BLOCK);
                if (!(v[idx->n_scratch].mem = malloc(cap))) return NULL;
                b = &v[idx->n_scratch++];
                b->cap = cap;
                b->used = 0;
        }
        void *p = b->mem + b->used;
        b->used += size;
        return memset(p, 0, size);
}

static void scratch_reset(dp_topo_index *idx) {
        for (size_t i = 0; i < idx->n_scratch; i++)
                idx->scratch[i].used = 0;
}

static dp_topo_index *index_new(void) {
        dp_topo_index *idx = calloc(1, sizeof(*idx));
        if (!idx) return NULL;
        idx->groups = dp_hashmap_new();
        idx->by_label = dp_hashmap_new();
        idx->anti_by_label = dp_hashmap_new();
        idx->node_ids = dp_hashmap_new();
        if (!idx->groups || !idx->by_label || !idx->anti_by_label || !idx->node_ids) return dp_topo_index_free(idx);
        return idx;
}

static int64_t node_id(dp_topo_index *idx, const char *name, bool create) {
        uintptr_t id = (uintptr_t)dp_hashmap_get(idx->node_ids, name);
        if (id || !create) return (int64_t)id - 1;
        if (DP_GROW(idx->node_names, idx->cap_node_names, idx->n_node_names + 1) < 0) return -ENOMEM;
        char *c = dp_strdup(name);
        if (!c || dp_hashmap_put(idx->node_ids, c, (void *)(uintptr_t)(idx->n_node_names + 1)) < 0) {
                free(c);
                return -ENOMEM;
        }
        idx->node_names[idx->n_node_names] = c;
        return (int64_t)idx->n_node_names++;
}

/* "k\x1fv" into buf, which the caller made long enough. */
static void label_key(char *buf, const char *k, size_t kl, const char *v, size_t vl) {
        memcpy(buf, k, kl);
        buf[kl] = '\x1f';
        memcpy(buf + kl + 1, v, vl + 1);
}

/* The list under "k\x1fv" in m (created with `make` bytes when absent). */
static void *list_get(dp_hashmap *m, const char *k, const char *v, size_t make) {
        char buf[640];
        _cleanup_free_ char *big = NULL;
        const char *key = buf;
        size_t kl = strlen(k), vl = strlen(v);
        if (kl + vl + 2 > sizeof(buf)) {
                if (!(big = malloc(kl + vl + 2))) return NULL;
                key = big;
        }
        label_key((char *)key, k, kl, v, vl);
        void *l = dp_hashmap_get(m, key);
        if (l || !make) return l;
        if (!(l = calloc(1, make))) return NULL;
        char *kc = dp_strdup(key);
        if (!kc || dp_hashmap_put(m, kc, l) < 0) {
                free(kc);
                free(l);
                return NULL;
        }
        *(char **)l = kc; /* glist and tlist start with their key */
        return l;
}

static int tlist_add(tlist *l, topo_group *g, const topo_term *t) {
        if (DP_GROW(l->v, l->cap, l->n + 1) < 0) return -ENOMEM;
        l->v[l->n++] = (tent){g, t};
        return 0;
}

/* Index a group's anti-affinity term under the values of its smallest In
 * requirement (an incoming pod must carry one of them to match), or under
 * `any`; a null selector matches nothing and is not indexed. */
static int index_anti_term(dp_topo_index *idx, topo_group *g, const topo_term *t) {
        if (t->sel.nothing) return 0;
        const topo_req *pivot = NULL;
        for (size_t i = 0; i < t->sel.n; i++)
                if (t->sel.reqs[i].op == DP_NS_OP_IN && (!pivot || t->sel.reqs[i].n_values < pivot->n_values))
                        pivot = &t->sel.reqs[i];
        if (!pivot) return tlist_add(&idx->anti_any, g, t);
        for (size_t k = 0; k < pivot->n_values; k++) {
                tlist *l = list_get(idx->anti_by_label, pivot->key, pivot->values[k], sizeof(tlist));
                if (!l || tlist_add(l, g, t) < 0) return -ENOMEM;
        }
        return 0;
}

static int cmp_kv(const void *a, const void *b) { return strcmp(((const dp_kv *)a)->key, ((const dp_kv *)b)->key); }

static void sel_key(dp_strbuf *k, const dp_label_selector *ls) {
        if (!ls) {
                dp_strbuf_puts(k, "~");
                return;
        }
        for (size_t i = 0; i < ls->n_match_labels; i++)
                dp_strbuf_printf(k, "%s=%s\x1f", ls->match_labels[i].key, ls->match_labels[i].value);
        for (size_t i = 0; i < ls->n_match_expressions; i++) {
                const dp_node_selector_requirement *q = &ls->match_expressions[i];
                dp_strbuf_printf(k, "%s %d", q->key, (int)q->op);
                for (size_t j = 0; j < q->n_values; j++)
                        dp_strbuf_printf(k, ",%s", q->values[j]);
                dp_strbuf_putc(k, '\x1f');
        }
}

/* The score terms' part of the group key (score.h InterPodAffinity): tag,
 * weight, topology key, selectors, namespaces. */
static void score_terms_key(dp_strbuf *k, const dp_pod_affinity_term *v, size_t n, char tag) {
        for (size_t i = 0; i < n; i++) {
                const dp_pod_affinity_term *t = &v[i];
                dp_strbuf_printf(k, "\x1c%c%d\x1e%s\x1e", tag, (int)t->weight, t->topology_key);
                sel_key(k, t->label_selector);
                dp_strbuf_putc(k, '\x1e');
                sel_key(k, t->namespace_selector);
                for (size_t j = 0; j < t->n_namespaces; j++)
                        dp_strbuf_printf(k, "\x1e%s", t->namespaces[j]);
                for (size_t j = 0; j < t->n_match_label_keys; j++)
                        dp_strbuf_printf(k, "\x1em%s", t->match_label_keys[j]);
                for (size_t j = 0; j < t->n_mismatch_label_keys; j++)
                        dp_strbuf_printf(k, "\x1ex%s", t->mismatch_label_keys[j]);
        }
}

/* The group key: terminating or not, namespace, labels in key order,
 * anti-affinity terms as written. */
static char *group_key(const char *ns, const dp_kv *sorted, size_t n, const dp_pod *p) {
        dp_strbuf k = DP_STRBUF_INIT;
        dp_strbuf_printf(&k, "%s%s\x1e", p->meta.deletion_timestamp ? "\x1c" : "", ns);
        for (size_t i = 0; i < n; i++)
                dp_strbuf_printf(&k, "%s\x1f%s\x1f", sorted[i].key, sorted[i].value);
        for (size_t i = 0; i < p->n_pod_anti_affinity; i++) {
                const dp_pod_affinity_term *t = &p->pod_anti_affinity[i];
                dp_strbuf_printf(&k, "\x1d%s\x1e", t->topology_key);
                sel_key(&k, t->label_selector);
                dp_strbuf_putc(&k, '\x1e');
                sel_key(&k, t->namespace_selector);
                for (size_t j = 0; j < t->n_namespaces; j++)
                        dp_strbuf_printf(&k, "\x1e%s", t->namespaces[j]);
                for (size_t j = 0; j < t->n_match_label_keys; j++)
                        dp_strbuf_printf(&k, "\x1em%s", t->match_label_keys[j]);
                for (size_t j = 0; j < t->n_mismatch_label_keys; j++)
                        dp_strbuf_printf(&k, "\x1ex%s", t->mismatch_label_keys[j]);
        }
        score_terms_key(&k, p->pod_affinity, p->n_pod_affinity, 'r');
        score_terms_key(&k, p->preferred_pod_affinity, p->n_preferred_pod_affinity, 'p');
        score_terms_key(&k, p->preferred_pod_anti_affinity, p->n_preferred_pod_anti_affinity, 'a');
        return dp_strbuf_steal(&k);
}

static int group_index(dp_topo_index *idx, topo_group *g) {
        for (size_t i = 0; i < g->n_labels; i++) {
                glist *l = list_get(idx->by_label, g->labels[i].key, g->labels[i].value, sizeof(glist));
                if (!l || DP_GROW(l->v, l->cap, l->n + 1) < 0) return -ENOMEM;
                l->v[l->n++] = g;
        }
        for (size_t i = 0; i < g->n_anti; i++)
                if (index_anti_term(idx, g, &g->anti[i]) < 0) return -ENOMEM;
        if (g->n_sterm) {
                if (DP_GROW(idx->scored, idx->cap_scored, idx->n_scored + 1) < 0) return -ENOMEM;
                idx->scored[idx->n_scored++] = g;
        }
        return 0;
}

/* The pod's InterPodAffinity score terms, compiled into the group. */
static int group_score_terms(topo_group *g, const char *ns, const dp_pod *p) {
        size_t n = p->n_pod_affinity + p->n_preferred_pod_affinity + p->n_preferred_pod_anti_affinity;
        if (!n) return 0;
        if (!(g->sterm = calloc(n, sizeof(*g->sterm))) || !(g->sweight = calloc(n, sizeof(*g->sweight))))
                return -ENOMEM;
        const dp_pod_affinity_term *src[3] = {p->pod_affinity, p->preferred_pod_affinity,
                                              p->preferred_pod_anti_affinity};
        size_t cnt[3] = {p->n_pod_affinity, p->n_preferred_pod_affinity, p->n_preferred_pod_anti_affinity};
        for (int w = 0; w < 3; w++)
                for (size_t i = 0; i < cnt[w]; i++) {
                        int r = topo_term_compile(&g->sterm[g->n_sterm], &src[w][i], ns, g->labels, g->n_labels);
                        if (r < 0) return r;
                        g->sweight[g->n_sterm++] = w == 0 ? 0 : w == 1 ? src[w][i].weight : -src[w][i].weight;
                }
        return 0;
}

int topo_scored_each(const dp_topo_index *idx, int (*fn)(topo_group *g, void *ud), void *ud) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < idx->n_scored; i++)
                if (idx->scored[i]->pods > 0) r = fn(idx->scored[i], ud);
        return r;
}

static int group_fill(topo_group *g, const char *ns, const dp_kv *sorted, size_t n, const dp_pod *p) {
        if (!(g->ns = dp_strdup(ns)) || !(g->labels = calloc(n + 1, sizeof(*g->labels)))) return -ENOMEM;
        for (; g->n_labels < n; g->n_labels++) {
                dp_kv *kv = &g->labels[g->n_labels];
                kv->key = dp_strdup(sorted[g->n_labels].key);
                kv->value = dp_strdup(sorted[g->n_labels].value);
                if (!kv->key || !kv->value) {
                        g->n_labels++;
                        return -ENOMEM;
                }
        }
        if (!(g->anti = calloc(p->n_pod_anti_affinity + 1, sizeof(*g->anti)))) return -ENOMEM;
        for (; g->n_anti < p->n_pod_anti_affinity; g->n_anti++) {
                int r = topo_term_compile(&g->anti[g->n_anti], &p->pod_anti_affinity[g->n_anti], ns, g->labels,
                                          g->n_labels);
                if (r < 0) return r;
        }
        return group_score_terms(g, ns, p);
}

/* The group of pod p in namespace ns, made when new. */
static topo_group *group_for(dp_topo_index *idx, const char *ns, const dp_pod *p) {
        _cleanup_free_ dp_kv *sorted = calloc(p->meta.n_labels + 1, sizeof(*sorted));
        if (!sorted) return NULL;
        if (p->meta.n_labels) memcpy(sorted, p->meta.labels, p->meta.n_labels * sizeof(*sorted));
        qsort(sorted, p->meta.n_labels, sizeof(*sorted), cmp_kv);
        _cleanup_free_ char *key = group_key(ns, sorted, p->meta.n_labels, p);
        if (!key) return NULL;
        topo_group *g = dp_hashmap_get(idx->groups, key);
        if (g) return g;
        if (!(g = calloc(1, sizeof(*g))) || DP_GROW(idx->all, idx->cap_all, idx->n_all + 1) < 0) {
                free(g);
                return NULL;
        }
        g->key = TAKE_PTR(key);
        g->terminating = p->meta.deletion_timestamp != NULL;
        if (group_fill(g, ns, sorted, p->meta.n_labels, p) < 0 || dp_hashmap_put(idx->groups, g->key, g) < 0) {
                group_free(g);
                return NULL;
        }
        idx->all[idx->n_all++] = g;
        /* indexed once; a failure here leaves the index unusable: rebuilt */
        return group_index(idx, g) < 0 ? NULL : g;
}

static uint32_t id_hash(uint32_t id) { return id * 2654435761u; }

static int group_rehash(topo_group *g, size_t cap) {
        uint32_t *h = calloc(cap, sizeof(*h));
        if (!h) return -ENOMEM;
        for (size_t i = 0; i < g->n_nodes; i++) {
                size_t s = id_hash(g->node[i]) & (cap - 1);
                while (h[s]) s = (s + 1) & (cap - 1);
                h[s] = (uint32_t)i + 1;
        }
        free(g->hash);
        g->hash = h;
        g->cap_hash = cap;
        return 0;
}

/* Add delta pods of g on node id. */
static int group_add(topo_group *g, uint32_t id, int delta) {
        size_t s = 0;
        for (s = g->cap_hash ? id_hash(id) & (g->cap_hash - 1) : 0; g->cap_hash && g->hash[s];
             s = (s + 1) & (g->cap_hash - 1))
                if (g->node[g->hash[s] - 1] == id) {
                        g->count[g->hash[s] - 1] += delta;
                        g->pods += delta;
                        return 0;
                }
        if (delta <= 0) return 0;
        size_t cap = g->cap_nodes;
        if (DP_GROW(g->node, cap, g->n_nodes + 1) < 0) return -ENOMEM;
        if (DP_GROW(g->count, g->cap_nodes, g->n_nodes + 1) < 0) return -ENOMEM;
        g->node[g->n_nodes] = id;
        g->count[g->n_nodes] = delta;
        g->n_nodes++;
        g->pods += delta;
        if (2 * g->n_nodes > g->cap_hash) return group_rehash(g, g->cap_hash ? 2 * g->cap_hash : 8);
        s = id_hash(id) & (g->cap_hash - 1);
        while (g->hash[s]) s = (s + 1) & (g->cap_hash - 1);
        g->hash[s] = (uint32_t)g->n_nodes;
        return 0;
}

static int slot_changed(dp_topo_index *idx, const dp_store *st, size_t slot) {
        if (slot >= idx->n_slots) {
                size_t n = dp_store_slots(st);
                if (slot >= n) return 0;
                topo_slot *v = realloc(idx->slots, n * sizeof(*v));
                if (!v) return -ENOMEM;
                memset(v + idx->n_slots, 0, (n - idx->n_slots) * sizeof(*v));
                idx->slots = v;
                idx->n_slots = n;
        }
        topo_slot *ts = &idx->slots[slot];
        if (ts->g) group_add(ts->g, ts->node, -1);
        *ts = (topo_slot){0};
        dp_object o;
        if (dp_store_slot(st, slot, &o, NULL) != DP_KIND_POD || !o.hdr) return 0;
        const dp_pod *p = o.pod;
        if (!p->node_name) return 0;
        if (p->phase && (streq(p->phase, "Succeeded") || streq(p->phase, "Failed"))) return 0;
        int64_t id = node_id(idx, p->node_name, true);
        topo_group *g = id >= 0 ? group_for(idx, dp_store_ns_of(o), p) : NULL;
        if (!g || group_add(g, (uint32_t)id, 1) < 0) return -ENOMEM;
        *ts = (topo_slot){g, (uint32_t)id};
        return 0;
}

/* Bring s->topo up to the store; a lost log or a failure builds it again. */
static int index_sync(dp_sched *s) {
        dp_topo_index *idx = s->topo;
        size_t pos = idx ? idx->pos : 0, slot;
        int r = 0;
        while (idx && r >= 0 && dp_store_next_change(s->store, &pos, &slot))
                r = slot_changed(idx, s->store, slot);
        if (!idx || r < 0 || pos == SIZE_MAX) {
                s->topo = dp_topo_index_free(s->topo);
                if (!(idx = index_new())) return -ENOMEM;
                s->topo = idx;
                for (size_t i = 0; i < dp_store_slots(s->store); i++)
                        if ((r = slot_changed(idx, s->store, i)) < 0) {
                                s->topo = dp_topo_index_free(s->topo);
                                return r;
                        }
        }
        idx->pos = dp_store_changes_end(s->store);
        return 0;
}

/* ---- the node table ---- */

static int tab_sync(dp_topo_index *idx, const dp_node *const *tab, size_t n_tab, uint64_t gen) {
        idx->tab = tab;
        idx->n_tab = n_tab;
        if (idx->tab_ok && idx->gen == gen) return 0;
        idx->tab_ok = false;
        keydoms_free(idx);
        for (size_t j = 0; j < n_tab; j++)
                if (node_id(idx, tab[j]->meta.name, true) < 0) return -ENOMEM;
        int64_t *v = realloc(idx->tab_of_id, (idx->n_node_names + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        idx->tab_of_id = v;
        if (!(idx->keydoms = dp_hashmap_new())) return -ENOMEM;
        idx->n_tab_of_id = idx->n_node_names;
        for (size_t i = 0; i < idx->n_tab_of_id; i++)
                v[i] = -1;
        for (size_t j = 0; j < n_tab; j++)
                v[node_id(idx, tab[j]->meta.name, false)] = (int64_t)j;
        idx->gen = gen;
        idx->tab_ok = true;
        return 0;
}

int64_t topo_node_tab(const dp_topo_index *idx, uint32_t id) {
        return id < idx->n_tab_of_id ? idx->tab_of_id[id] : -1;
}

static topo_keydom *keydom_free(topo_keydom *kd) {
        if (kd) {
                free(kd->key);
                free(kd->dom);
                free(kd->by_dom);
                free(kd->start);
                free(kd);
        }
        return NULL;
}

const topo_keydom *topo_keydom_get(dp_topo_index *idx, const char *key) {
        topo_keydom *kd = dp_hashmap_get(idx->keydoms, key);
        if (kd) return kd;
        _cleanup_(dp_hashmap_freep) dp_hashmap *values = dp_hashmap_new();
        if (!values || !(kd = calloc(1, sizeof(*kd)))) return NULL;
        kd->key = dp_strdup(key);
        kd->dom = malloc((idx->n_tab + 1) * sizeof(*kd->dom));
        if (!kd->key || !kd->dom) return keydom_free(kd);
        for (size_t j = 0; j < idx->n_tab; j++) {
                const dp_node *n = idx->tab[j];
                const char *v = dp_kv_get(n->meta.labels, n->meta.n_labels, key);
                uintptr_t id = v ? (uintptr_t)dp_hashmap_get(values, v) : 0;
                if (v && !id) {
                        id = ++kd->n_dom;
                        if (dp_hashmap_put(values, v, (void *)id) < 0) return keydom_free(kd);
                }
                kd->dom[j] = (int32_t)id - 1;
        }
        /* nodes by domain, counted then placed; missing the key: last */
        kd->start = calloc(kd->n_dom + 2, sizeof(*kd->start));
        kd->by_dom = malloc((idx->n_tab + 1) * sizeof(*kd->by_dom));
        if (!kd->start || !kd->by_dom) return keydom_free(kd);
        for (size_t j = 0; j < idx->n_tab; j++) {
                size_t d = kd->dom[j] < 0 ? kd->n_dom : (size_t)kd->dom[j];
                if (d + 2 <= kd->n_dom + 1) kd->start[d + 2]++;
        }
        for (size_t d = 2; d <= kd->n_dom + 1; d++)
                kd->start[d] += kd->start[d - 1];
        for (size_t j = 0; j < idx->n_tab; j++) {
                size_t d = kd->dom[j] < 0 ? kd->n_dom : (size_t)kd->dom[j];
                kd->by_dom[kd->start[d + 1]++] = (int32_t)j;
        }
        if (dp_hashmap_put(idx->keydoms, kd->key, kd) < 0) return keydom_free(kd);
        return kd;
}

/* ---- finding groups and terms ---- */

int topo_groups_each(const dp_topo_index *idx, const topo_sel *sel, int (*fn)(topo_group *g, void *ud), void *ud) {
        if (sel->nothing) return 0;
        const topo_req *pivot = NULL;
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < sel->n; i++) {
                const topo_req *q = &sel->reqs[i];
                if (q->op != DP_NS_OP_IN) continue;
                size_t total = 0;
                for (size_t k = 0; k < q->n_values; k++) {
                        const glist *l = list_get(idx->by_label, q->key, q->values[k], 0);
                        total += l ? l->n : 0;
                }
                if (total < best) {
                        best = total;
                        pivot = q;
                }
        }
        int r = 0;
        for (size_t k = 0; pivot && r >= 0 && k < pivot->n_values; k++) {
                const glist *l = list_get(idx->by_label, pivot->key, pivot->values[k], 0);
                for (size_t i = 0; l && r >= 0 && i < l->n; i++)
                        if (l->v[i]->pods > 0) r = fn(l->v[i], ud);
        }
        for (size_t i = 0; !pivot && r >= 0 && i < idx->n_all; i++)
                if (idx->all[i]->pods > 0) r = fn(idx->all[i], ud);
        return r;
}

int topo_anti_each(const dp_topo_index *idx, const dp_kv *labels, size_t n,
                   int (*fn)(topo_group *g, const topo_term *t, void *ud), void *ud) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i <= n; i++) {
                const tlist *l = i < n ? list_get(idx->anti_by_label, labels[i].key, labels[i].value, 0) : &idx->anti_any;
                for (size_t k = 0; l && r >= 0 && k < l->n; k++)
                        if (l->v[k].g->pods > 0) r = fn(l->v[k].g, l->v[k].t, ud);
        }
        return r;
}

/* ---- the index of waiting pods' hints ---- */

typedef struct hent {
        void *item;
        uint64_t gen;
} hent;

typedef struct hlist { /* hints an added pod can match only when it carries one label (or `any`) */
        char *key;
        hent *v;
        size_t n, cap;
} hlist;

struct dp_topo_hint_index {
        dp_hashmap *by_label; /* "k\x1fv" -> hlist */
        hlist any;
};

dp_topo_hint_index *dp_topo_hint_index_free(dp_topo_hint_index *x) {
        if (!x) return NULL;
        size_t i = 0;
        void *v;
        while (x->by_label && dp_hashmap_iter(x->by_label, &i, NULL, &v)) {
                free(((hlist *)v)->key);
                free(((hlist *)v)->v);
                free(v);
        }
        dp_hashmap_free(x->by_label);
        free(x->any.v);
        free(x);
        return NULL;
}

static int hlist_add(hlist *l, void *item, uint64_t gen) {
        if (DP_GROW(l->v, l->cap, l->n + 1) < 0) return -ENOMEM;
        l->v[l->n++] = (hent){item, gen};
        return 0;
}

/* A selector's pivot as index_anti_term picks it: its smallest In
 * requirement, NULL when it has none. */
static const topo_req *sel_pivot(const topo_sel *s) {
        const topo_req *pivot = NULL;
        for (size_t i = 0; i < s->n; i++)
                if (s->reqs[i].op == DP_NS_OP_IN && (!pivot || s->reqs[i].n_values < pivot->n_values))
                        pivot = &s->reqs[i];
        return pivot;
}

static int hint_file_sel(dp_topo_hint_index *x, const topo_sel *s, void *item, uint64_t gen) {
        if (s->nothing) return 0; /* matches no pod */
        const topo_req *pivot = sel_pivot(s);
        if (!pivot) return hlist_add(&x->any, item, gen);
        for (size_t k = 0; k < pivot->n_values; k++) {
                hlist *l = list_get(x->by_label, pivot->key, pivot->values[k], sizeof(hlist));
                if (!l || hlist_add(l, item, gen) < 0) return -ENOMEM;
        }
        return 0;
}

int dp_topo_hint_index_add(dp_topo_hint_index **x, const dp_topo_hint *h, void *item, uint64_t gen) {
        if (!*x) {
                dp_topo_hint_index *n = calloc(1, sizeof(*n));
                if (!n || !(n->by_label = dp_hashmap_new())) {
                        free(n);
                        return -ENOMEM;
                }
                *x = n;
        }
        /* each spread selector may match alone; the affinity terms only all
         * together, so one term's pivot (the one with the fewest values) is
         * enough, and a term that matches nothing files nothing */
        for (size_t i = 0; i < h->n_sels; i++) {
                int r = hint_file_sel(*x, &h->sels[i], item, gen);
                if (r < 0) return r;
        }
        const topo_term *best = NULL;
        for (size_t i = 0; i < h->n_terms; i++) {
                const topo_term *t = &h->terms[i];
                if (t->sel.nothing) return 0;
                const topo_req *p = sel_pivot(&t->sel), *bp = best ? sel_pivot(&best->sel) : NULL;
                if (!best || (p && (!bp || p->n_values < bp->n_values))) best = t;
        }
        return best ? hint_file_sel(*x, &best->sel, item, gen) : 0;
}

static void hlist_visit(hlist *l, bool (*visit)(void *item, uint64_t gen, void *ud), void *ud) {
        size_t k = 0;
        for (size_t i = 0; i < l->n; i++)
                if (visit(l->v[i].item, l->v[i].gen, ud)) l->v[k++] = l->v[i];
        l->n = k;
}

void dp_topo_hint_index_visit(dp_topo_hint_index *x, const dp_pod *added,
                              bool (*visit)(void *item, uint64_t gen, void *ud), void *ud) {
        if (!x) return;
        for (size_t i = 0; i < added->meta.n_labels; i++) {
                const dp_kv *kv = &added->meta.labels[i];
                hlist *l = list_get(x->by_label, kv->key, kv->value, 0);
                if (l) hlist_visit(l, visit, ud);
        }
        hlist_visit(&x->any, visit, ud);
}

/* ---- the cycle state ---- */

struct dp_topo_state {
        dp_topo_index *idx;
        topo_spread *sp;
        topo_interpod *ip;
};

dp_topo_state *dp_topo_state_free(dp_topo_state *st) {
        if (!st) return NULL;
        topo_spread_free(st->sp);
        topo_interpod_free(st->ip);
        free(st);
        return NULL;
}

int dp_topo_update_pod(dp_topo_state *st, const dp_pod *p, const char *ns, size_t ni, int delta) {
        int r = st->sp ? topo_spread_update(st->sp, p, ns, ni, delta) : 0;
        if (r >= 0 && st->ip) r = topo_interpod_update(st->ip, p, ns, ni, delta);
        if (r >= 0 && st->sp) topo_spread_finish(st->sp);
        return r;
}

/* The pods of gang members assumed in this cycle, as if bound. */
static int add_assumed(dp_sched *s, dp_topo_state *st) {
        for (size_t a = 0; a < s->n_assumed; a++) {
                const dp_sched_plan *pl = s->assumed[a];
                const dp_pod *p = dp_store_get(s->store, DP_KIND_POD, pl->q->ns, pl->q->name, NULL).pod;
                int64_t id = node_id(s->topo, pl->node, false);
                int64_t ni = id >= 0 ? topo_node_tab(s->topo, (uint32_t)id) : -1;
                if (!p || ni < 0) continue;
                int r = dp_topo_update_pod(st, p, pl->q->ns, (size_t)ni, +1);
                if (r < 0) return r;
        }
        return 0;
}

int dp_topo_prefilter(dp_sched *s, const dp_pod *p, const char *ns, const dp_node *const *tab, size_t n_tab,
                      uint64_t gen, dp_topo_state **ret) {
        *ret = NULL;
        int r = index_sync(s);
        if (r >= 0) r = tab_sync(s->topo, tab, n_tab, gen);
        if (r < 0) {
                s->topo = dp_topo_index_free(s->topo);
                return r;
        }
        scratch_reset(s->topo);
        _cleanup_free_ dp_topo_state *st = calloc(1, sizeof(*st));
        if (!st) return -ENOMEM;
        st->idx = s->topo;
        r = topo_spread_prefilter(s, s->topo, p, ns, tab, n_tab, &st->sp);
        if (r >= 0) r = topo_interpod_prefilter(s, s->topo, p, ns, &st->ip);
        if (r >= 0) r = add_assumed(s, st);
        if (r >= 0 && st->sp) topo_spread_finish(st->sp);
        if (r < 0 || (!st->sp && !st->ip)) {
                topo_spread_free(st->sp);
                topo_interpod_free(st->ip);
                return r < 0 ? r : 0;
        }
        *ret = TAKE_PTR(st);
        return 0;
}

dp_verdict_code dp_topo_filter(const dp_topo_state *st, size_t ni) {
        dp_verdict_code v = st->sp ? topo_spread_filter(st->sp, ni) : DP_VERDICT_FIT;
        if (v == DP_VERDICT_FIT && st->ip) v = topo_interpod_filter(st->ip, ni);
        return v;
}

/* Change the count of (code, arg 0) by delta, adding the line when new. */
static int hist_move(dp_diag_hist *h, dp_verdict_code code, int64_t delta) {
        if (!delta) return 0;
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].code == code && h->v[i].arg == 0) {
                        h->v[i].nodes = (uint32_t)((int64_t)h->v[i].nodes + delta);
                        return 0;
                }
        if (DP_GROW(h->v, h->cap, h->n + 1) < 0) return -ENOMEM;
        h->v[h->n++] = (dp_diag_count){(uint16_t)code, 0, (uint32_t)delta};
        return 0;
}

static bool passes_before(dp_verdict_code code) {
        return code == DP_VERDICT_FIT || code == DP_VERDICT_CLAIM_UNREACHABLE || code == DP_VERDICT_DRA;
}

/* Node ni, whose base verdict is `code` (passes_before), is refused with tv. */
static void refuse(dp_diag_hist *h, int64_t *delta, uint64_t base, dp_verdict_code tv) {
        dp_verdict_code code = (dp_verdict_code)(base >> 32);
        delta[tv]++;
        if (code != DP_VERDICT_CLAIM_UNREACHABLE) {
                delta[code]--; /* argument 0 */
                return;
        }
        for (size_t i = 0; i < h->n; i++) /* an unreachable claim: its argument */
                if (h->v[i].code == code && h->v[i].arg == (uint32_t)base && h->v[i].nodes) {
                        h->v[i].nodes--;
                        return;
                }
}

/* Checks that only counts can fail (a domain without pods passes): walk
 * each check's failing domains' nodes and those missing its key, not every
 * node; a node refused by an earlier check was counted there. */
static bool sparse_checks(const topo_checks *ck) {
        for (size_t i = 0; i < ck->n; i++)
                if (!ck->v[i].above || ck->v[i].never || ck->v[i].limit < 0) return false;
        return true;
}

static void refuse_node(const topo_checks *ck, size_t i, const uint64_t *base, int32_t ni, dp_diag_hist *h,
                        int64_t *delta, uint8_t *unres) {
        if (!passes_before((dp_verdict_code)(base[ni] >> 32))) return;
        for (size_t j = 0; j < i; j++)
                if (topo_check_node(&ck->v[j], (size_t)ni) != DP_VERDICT_FIT) return;
        dp_verdict_code tv = topo_check_node(&ck->v[i], (size_t)ni);
        refuse(h, delta, base[ni], tv);
        if (unres) unres[ni] = dp_verdict_unresolvable(tv, false);
}

static void refuse_sparse(const topo_checks *ck, const uint64_t *base, dp_diag_hist *h, int64_t *delta,
                          uint8_t *unres) {
        for (size_t i = 0; i < ck->n; i++) {
                const topo_check *c = &ck->v[i];
                const topo_keydom *kd = c->kd;
                size_t nd = c->touched ? c->n_touched : kd->n_dom;
                for (size_t t = 0; c->cnt && t < nd; t++) {
                        size_t d = c->touched ? (size_t)c->touched[t] : t;
                        if (c->cnt[d] <= c->limit || (c->present && !c->present[d])) continue;
                        for (int32_t k = kd->start[d]; k < kd->start[d + 1]; k++)
                                refuse_node(ck, i, base, kd->by_dom[k], h, delta, unres);
                }
                for (int32_t k = kd->start[kd->n_dom]; c->missing && k < kd->start[kd->n_dom + 1]; k++)
                        refuse_node(ck, i, base, kd->by_dom[k], h, delta, unres);
        }
}

int dp_topo_reasons(const dp_topo_state *st, const uint64_t *base, const dp_diag_hist *base_hist, size_t nn,
                    dp_diag_hist *ret, uint8_t *unres) {
        /* base's histogram, less the nodes these plugins refuse, plus their verdicts */
        int64_t delta[DP_VERDICT_CODES_] = {0}, fit = 0;
        dp_diag_hist_clear(ret);
        for (size_t i = 0; i < base_hist->n; i++)
                if (base_hist->v[i].nodes) {
                        if (DP_GROW(ret->v, ret->cap, ret->n + 1) < 0) return -ENOMEM;
                        ret->v[ret->n++] = base_hist->v[i];
                        if (base_hist->v[i].code == DP_VERDICT_FIT) fit += base_hist->v[i].nodes;
                }
        topo_checks ck = {0};
        int r = st->sp ? topo_spread_checks(st->sp, &ck) : 0;
        if (r >= 0 && st->ip) r = topo_interpod_checks(st->ip, &ck);
        if (r < 0) {
                free(ck.v);
                return r;
        }
        if (sparse_checks(&ck))
                refuse_sparse(&ck, base, ret, delta, unres);
        else
                for (size_t ni = 0; ni < nn; ni++) {
                        if (!passes_before((dp_verdict_code)(base[ni] >> 32))) continue;
                        dp_verdict_code tv = DP_VERDICT_FIT;
                        for (size_t i = 0; i < ck.n && !tv; i++)
                                tv = topo_check_node(&ck.v[i], ni);
                        if (tv == DP_VERDICT_FIT) continue;
                        refuse(ret, delta, base[ni], tv);
                        if (unres) unres[ni] = dp_verdict_unresolvable(tv, false);
                }
        free(ck.v);
        if (fit + delta[DP_VERDICT_FIT] > 0) { /* a node fits after all */
                dp_diag_hist_clear(ret);
                return 0;
        }
        for (int code = 0; code < DP_VERDICT_CODES_; code++)
                if (hist_move(ret, (dp_verdict_code)code, delta[code]) < 0) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < ret->n; i++)
                if (ret->v[i].nodes) ret->v[k++] = ret->v[i];
        ret->n = k;
        return 1;
}

/* ---- scores (score.h) ---- */

int dp_topo_score(dp_sched *s, const dp_pod *p, const char *ns, const struct dp_score_profile *prof,
                  const uint32_t *feas, size_t n, int64_t *ip, bool *ret_ip, int64_t *sp, bool *ignored,
                  bool *ret_sp) {
        *ret_ip = *ret_sp = false;
        dp_topo_index *idx = s->topo;
        if (!idx || !idx->tab_ok) return 0;
        int r = 0;
        if (prof->weight[DP_PLUGIN_INTERPOD]) r = topo_interpod_score(s, idx, p, ns, prof, feas, n, ip, ret_ip);
        if (r >= 0 && prof->weight[DP_PLUGIN_SPREAD])
                r = topo_spread_score(idx, s->store, prof->spread_system_defaults, p, ns, idx->tab, idx->n_tab, feas, n,
                                      sp, ignored, ret_sp);
        return r;
}

bool dp_topo_score_needed(const dp_sched *s, const dp_pod *p, const struct dp_score_profile *prof) {
        if (prof->weight[DP_PLUGIN_SPREAD])
                for (size_t i = 0; i < p->n_spread; i++)
                        if (p->spread[i].schedule_anyway) return true;
        if (prof->weight[DP_PLUGIN_SPREAD] && prof->spread_system_defaults && !p->n_spread &&
            topo_spread_defaults_apply(s->store, p, p->meta.namespace && p->meta.namespace[0] ? p->meta.namespace : "default"))
                return true;
        if (!prof->weight[DP_PLUGIN_INTERPOD]) return false;
        if (p->n_preferred_pod_affinity || p->n_preferred_pod_anti_affinity) return true;
        if (prof->ignore_preferred_terms_of_existing) return false;
        const dp_topo_index *idx = s->topo;
        for (size_t i = 0; idx && i < idx->n_scored; i++)
                if (idx->scored[i]->pods > 0) return true;
        return false;
}
