/* SPDX-License-Identifier: Apache-2.0
 *
 * tas-place.c — Kueue's topology placement (pkg/cache/scheduler
 * tas_flavor_snapshot.go findTopologyAssignment, v0.19, without leaders,
 * balanced placement and multi-layer slices), written from its rules:
 *   1. every leaf counts the pods that fit it (free capacity less TAS usage,
 *      each request with the pods resource; the lowest-count resource limits,
 *      ties to the smaller name); with the hostname as lowest level a node
 *      whose taints the pod and the flavor do not tolerate, whose labels
 *      miss the pod's nodeSelector, or that its required node affinity does
 *      not select, counts none; counts add up the tree, and
 *      at the slice level a domain holds floor(pods / slice size) slices;
 *   2. at the requested level the domains are sorted — BestFit: most slices
 *      first, then fewer pods, then values; LeastFreeCapacity (unconstrained
 *      and slice-only requests): fewest slices first — and one domain that
 *      holds them all is taken (BestFit: the tightest that does);
 *      else a required request fails, a preferred one climbs a level, and at
 *      the top (or for unconstrained) domains are taken greedily in order,
 *      BestFit swapping the last for the tightest that completes it;
 *   3. down the tree, level by level, the same greedy fill over the chosen
 *      domains' children (pooled above the slice level, per parent below).
 * The KEP's example: a rack with nodes of 3, 3, 2 and 1 free slots and 7
 * pods gives BestFit {3, 3, 1} and LeastFreeCapacity {1, 2, 3, 1}.
 */
#include <stdio.h>

#include "queue/tas.h"

/* Why nodes counted no pod (Kueue's ExclusionStats), for the message. */
typedef struct stat_kv {
        char key[320];
        int n;
} stat_kv;

typedef struct stats {
        int total, node_selector, affinity;
        stat_kv taints[16], res[16];
        size_t n_taints, n_res;
} stats;

static void stat_add(stat_kv *v, size_t *n, size_t cap, const char *key) {
        for (size_t i = 0; i < *n; i++)
                if (streq(v[i].key, key)) {
                        v[i].n++;
                        return;
                }
        if (*n == cap) return;
        snprintf(v[*n].key, sizeof(v[*n].key), "%s", key);
        v[(*n)++].n = 1;
}

typedef struct place {
        tflavor *f;
        const tas_request *rq;
        int32_t count, slice_size;
        size_t level, slice_level;
        bool required, unconstrained;
        stats st;
} place;

ssize_t tas_level_of(const tflavor *f, const char *label) {
        for (size_t i = 0; label && i < f->topo->n_levels; i++)
                if (streq(f->topo->levels[i], label)) return (ssize_t)i;
        return -1;
}

void tas_placement_done(tas_placement *p) {
        free(p->dom);
        free(p->count);
        *p = (tas_placement){0};
}

/* Kueue's CountInWithLimitingResource over one leaf. */
static int32_t count_in(const tdom *d, const tas_need *need, size_t n, bool empty, const char **limit) {
        int64_t best = INT32_MAX;
        *limit = NULL;
        for (size_t i = 0; i < n; i++) {
                if (!need[i].value) continue;
                int64_t cap = need[i].res < 0 ? 0 : d->free[need[i].res] - (empty ? 0 : d->used[need[i].res]);
                int64_t c = DP_MAX(0, cap / need[i].value);
                if (c < best || (c == best && *limit && strcmp(need[i].name, *limit) < 0)) {
                        best = c;
                        *limit = need[i].name;
                }
        }
        return (int32_t)DP_MIN(best, INT32_MAX);
}

/* The pod may not go to this node (taints, nodeSelector, required node
 * affinity, in that order): Kueue's leafNodeEligibility. */
static bool excluded(place *x, const tdom *d, const dp_pod *tmpl) {
        const dp_resource_flavor *rf = x->f->rf;
        for (size_t i = 0; i < d->n_taints; i++) {
                const dp_taint *t = &d->taints[i];
                if (tmpl && dp_tolerations_tolerate(tmpl->tolerations, tmpl->n_tolerations, t)) continue;
                if (dp_tolerations_tolerate(rf->tolerations, rf->n_tolerations, t)) continue;
                char key[320];
                snprintf(key, sizeof(key), "%s%s%s:%s", t->key, t->value && t->value[0] ? "=" : "",
                         t->value ? t->value : "", t->effect);
                stat_add(x->st.taints, &x->st.n_taints, ELEMENTSOF(x->st.taints), key);
                return true;
        }
        for (size_t i = 0; tmpl && i < tmpl->n_node_selector; i++)
                if (!streq_ptr(dp_kv_get(d->labels, d->n_labels, tmpl->node_selector[i].key),
                               tmpl->node_selector[i].value)) {
                        x->st.node_selector++;
                        return true;
                }
        if (tmpl && tmpl->required_node_affinity &&
            !dp_node_selector_matches(tmpl->required_node_affinity, d->labels, d->n_labels, d->node)) {
                x->st.affinity++;
                return true;
        }
        return false;
}

static void fill_up(place *x, tdom *d) {
        if (!d->n_kids) {
                d->slice_state = d->level == x->slice_level ? d->state / x->slice_size : 0;
                return;
        }
        int32_t pods = 0, slices = 0;
        for (size_t i = 0; i < d->n_kids; i++) {
                fill_up(x, d->kids[i]);
                pods += d->kids[i]->state;
                slices += d->kids[i]->slice_state;
        }
        d->state = pods;
        d->slice_state = d->level == x->slice_level ? pods / x->slice_size : slices;
}

/* Phase 1: fillInCounts. */
static void fill_counts(place *x, const tas_need *need, size_t n, const dp_pod *tmpl, bool empty) {
        size_t leaves = x->f->topo->n_levels - 1;
        for (size_t l = 0; l <= leaves; l++)
                for (size_t i = 0; i < x->f->n_level[l]; i++)
                        x->f->level[l][i]->state = x->f->level[l][i]->slice_state = 0;
        for (size_t i = 0; i < x->f->n_level[leaves]; i++) {
                tdom *d = x->f->level[leaves][i];
                x->st.total++;
                if (x->f->hostname && excluded(x, d, tmpl)) continue;
                const char *limit = NULL;
                d->state = count_in(d, need, n, empty, &limit);
                if (!d->state && limit) stat_add(x->st.res, &x->st.n_res, ELEMENTSOF(x->st.res), limit);
        }
        for (size_t i = 0; i < x->f->n_level[0]; i++)
                fill_up(x, x->f->level[0][i]);
}

static int cmp_values(const tdom *a, const tdom *b) {
        for (size_t i = 0; i <= a->level && i <= b->level; i++) {
                int c = strcmp(a->values[i], b->values[i]);
                if (c) return c;
        }
        return (a->level > b->level) - (a->level < b->level);
}

static int cmp_best_fit(const void *pa, const void *pb) {
        const tdom *a = *(tdom *const *)pa, *b = *(tdom *const *)pb;
        if (a->slice_state != b->slice_state) return a->slice_state > b->slice_state ? -1 : 1;
        if (a->state != b->state) return a->state < b->state ? -1 : 1;
        return cmp_values(a, b);
}

static int cmp_least_free(const void *pa, const void *pb) {
        const tdom *a = *(tdom *const *)pa, *b = *(tdom *const *)pb;
        if (a->slice_state != b->slice_state) return a->slice_state < b->slice_state ? -1 : 1;
        if (a->state != b->state) return a->state < b->state ? -1 : 1;
        return cmp_values(a, b);
}

static void sort_doms(const place *x, tdom **v, size_t n) {
        if (n > 1) qsort(v, n, sizeof(*v), x->unconstrained ? cmp_least_free : cmp_best_fit);
}

/* findBestFitDomain: the first domain with the fewest (slices or pods)
 * that still holds `needed`, else the first one. */
static size_t best_fit(tdom **v, size_t n, int32_t needed, bool slices) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++) {
                int32_t s = slices ? v[i]->slice_state : v[i]->state,
                        b = slices ? v[best]->slice_state : v[best]->state;
                if (s >= needed && s < b) best = i;
        }
        return best;
}

static void swap_dom(tdom **v, size_t i, size_t k) {
        tdom *t = v[i];
        v[i] = v[k];
        v[k] = t;
}

static int cmp_reason(const void *a, const void *b) { return strcmp(a, b); }

/* notFitMessage, with the exclusions when there are any. Returns 1. */
static int not_fit(place *x, int32_t fit, int32_t total, char *why, size_t size) {
        const char *unit = x->slice_size == 1 ? "pod" : "slice";
        int len = fit == 0 ? snprintf(why, size, "topology \"%s\" doesn't allow to fit any of %d %s(s)",
                                      x->f->topo->x.meta.name, total, unit)
                           : snprintf(why, size, "topology \"%s\" allows to fit only %d out of %d %s(s)",
                                      x->f->topo->x.meta.name, fit, total, unit);
        if (!x->st.node_selector && !x->st.affinity && !x->st.n_taints && !x->st.n_res) return 1;
        /* the reasons, each "what: count", sorted as strings (formatReasons) */
        char r[35][360];
        size_t n = 0;
        if (x->st.node_selector) snprintf(r[n++], sizeof(r[0]), "nodeSelector: %d", x->st.node_selector);
        if (x->st.affinity) snprintf(r[n++], sizeof(r[0]), "affinity: %d", x->st.affinity);
        for (size_t i = 0; i < x->st.n_taints; i++)
                snprintf(r[n++], sizeof(r[0]), "taint \"%s\": %d", x->st.taints[i].key, x->st.taints[i].n);
        for (size_t i = 0; i < x->st.n_res; i++)
                snprintf(r[n++], sizeof(r[0]), "resource \"%s\": %d", x->st.res[i].key, x->st.res[i].n);
        qsort(r, n, sizeof(r[0]), cmp_reason);
        if (len < 0 || (size_t)len >= size) return 1;
        len += snprintf(why + len, size - (size_t)len, ". Total nodes: %d; excluded: ", x->st.total);
        for (size_t i = 0; i < n && len >= 0 && (size_t)len < size; i++)
                len += snprintf(why + len, size - (size_t)len, "%s%s", i ? ", " : "", r[i]);
        return 1;
}

/* Phase 2a: findLevelWithFitDomains. The chosen domains go to *ret (the
 * caller frees), their level to *ret_level. 0, 1 with why, -ENOMEM. */
static int find_level(place *x, size_t level, tdom ***ret, size_t *ret_n, size_t *ret_level, char *why, size_t size) {
        size_t n = x->f->n_level[level];
        if (!n) {
                snprintf(why, size, "no topology domains at level: %s", x->f->topo->levels[level]);
                return 1;
        }
        _cleanup_free_ tdom **v = malloc(n * sizeof(*v));
        if (!v) return -ENOMEM;
        memcpy(v, x->f->level[level], n * sizeof(*v));
        sort_doms(x, v, n);
        int32_t slices = x->count / x->slice_size;
        size_t top = 0;
        if (!x->unconstrained && v[0]->slice_state >= slices) top = best_fit(v, n, slices, true);
        if (x->unconstrained)
                for (size_t i = 0; i < n; i++)
                        if (v[i]->slice_state >= slices) {
                                top = i;
                                goto one;
                        }
        if (v[top]->slice_state >= slices) goto one;
        if (x->required) return not_fit(x, v[0]->slice_state, slices, why, size);
        if (level > 0 && !x->unconstrained) return find_level(x, level - 1, ret, ret_n, ret_level, why, size);
        int32_t left = slices;
        size_t k = 0;
        for (; k < n && left > 0; k++) {
                if (!x->unconstrained && v[k]->slice_state >= left)
                        swap_dom(v, k, k + best_fit(v + k, n - k, left, true));
                left -= v[k]->slice_state;
        }
        if (left > 0) return not_fit(x, slices - left, slices, why, size);
        *ret = TAKE_PTR(v);
        *ret_n = k;
        *ret_level = level;
        return 0;
one:
        v[0] = v[top];
        *ret = TAKE_PTR(v);
        *ret_n = 1;
        *ret_level = level;
        return 0;
}

/* updateCountsToMinimum: take from the domains in order until `count` (pods,
 * or slices of slice_size) is placed; each taken domain's state becomes what
 * it takes. Returns how many of v are taken (v reordered so they come first). */
static size_t take(const place *x, tdom **v, size_t n, int32_t count, int32_t slice_size, bool slices) {
        int32_t left = slices ? count / slice_size : count;
        for (size_t i = 0; i < n; i++) {
                int32_t have = slices ? v[i]->slice_state : v[i]->state;
                if (!x->unconstrained && have >= left) {
                        swap_dom(v, i, i + best_fit(v + i, n - i, left, slices));
                        have = slices ? v[i]->slice_state : v[i]->state;
                }
                int32_t got = DP_MIN(have, left);
                v[i]->state = slices ? got * slice_size : got;
                if (slices) v[i]->slice_state = got;
                left -= got;
                if (!left) return i + 1;
        }
        return n;
}

static int children(tdom **doms, size_t n, tdom ***ret, size_t *ret_n) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += doms[i]->n_kids;
        tdom **v = malloc((total + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                for (size_t c = 0; c < doms[i]->n_kids; c++)
                        v[k++] = doms[i]->kids[c];
        *ret = v;
        *ret_n = k;
        return 0;
}

/* Phase 2b: down to the leaves. *cur (n) is replaced level by level. */
static int descend(place *x, tdom ***cur, size_t *n, size_t level) {
        size_t last = x->f->topo->n_levels - 1;
        *n = take(x, *cur, *n, x->count, x->slice_size, true);
        for (; level < DP_MIN(last, x->slice_level); level++) { /* above the slice level: pooled */
                tdom **kids;
                size_t nk;
                if (children(*cur, *n, &kids, &nk) < 0) return -ENOMEM;
                sort_doms(x, kids, nk);
                free(*cur);
                *cur = kids;
                *n = take(x, kids, nk, x->count, x->slice_size, true);
        }
        for (; level < last; level++) { /* at and below it: each parent's pods among its children */
                tdom **kids;
                size_t nk;
                if (children(*cur, *n, &kids, &nk) < 0) return -ENOMEM;
                size_t out = 0, off = 0;
                for (size_t i = 0; i < *n; i++) {
                        tdom **mine = kids + off;
                        size_t nm = (*cur)[i]->n_kids;
                        off += nm;
                        sort_doms(x, mine, nm);
                        size_t t = take(x, mine, nm, (*cur)[i]->state, 1, false);
                        memmove(kids + out, mine, t * sizeof(*kids));
                        out += t;
                }
                free(*cur);
                *cur = kids;
                *n = out;
        }
        return 0;
}

static int cmp_leaf(const void *a, const void *b) { return cmp_values(*(tdom *const *)a, *(tdom *const *)b); }

static int result(tdom **v, size_t n, tas_placement *ret) {
        qsort(v, n, sizeof(*v), cmp_leaf);
        tas_placement p = {calloc(n + 1, sizeof(tdom *)), calloc(n + 1, sizeof(int32_t)), 0};
        if (!p.dom || !p.count) {
                tas_placement_done(&p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                if (v[i]->state > 0) {
                        p.dom[p.n] = v[i];
                        p.count[p.n++] = v[i]->state;
                }
        *ret = p;
        return 0;
}

/* The levels the request names (levelKey, sliceLevelKeyWithDefault). */
static int levels_of(place *x, char *why, size_t size) {
        const tas_request *rq = x->rq;
        size_t last = x->f->topo->n_levels - 1;
        const char *key = rq->required ? rq->required : rq->preferred;
        ssize_t l = key ? tas_level_of(x->f, key) : rq->slice_level ? 0 : (ssize_t)last;
        if (l < 0) {
                snprintf(why, size, "no requested topology level: %s", key);
                return 1;
        }
        ssize_t s = rq->slice_level ? tas_level_of(x->f, rq->slice_level) : (ssize_t)last;
        if (s < 0) {
                snprintf(why, size, "no requested topology level for slices: %s", rq->slice_level);
                return 1;
        }
        if (l > s) {
                snprintf(why, size, "podset slice topology %s is above the podset topology %s", x->f->topo->levels[s],
                         x->f->topo->levels[l]);
                return 1;
        }
        if (rq->slice_level && (!rq->has_slice_size || rq->slice_size <= 0)) {
                snprintf(why, size, "slice topology requested, but slice size not provided");
                return 1;
        }
        x->level = (size_t)l;
        x->slice_level = (size_t)s;
        x->slice_size = rq->slice_level ? rq->slice_size : 1;
        x->required = rq->required != NULL;
        x->unconstrained = rq->unconstrained || rq->implied || (!key && rq->slice_level);
        return 0;
}

int tas_place(tflavor *f, const tas_request *rq, int32_t count, const tas_need *need, size_t n_need, const dp_pod *tmpl,
              bool empty, tas_placement *ret, char *why, size_t why_size) {
        place x = {.f = f, .rq = rq, .count = count};
        int r = levels_of(&x, why, why_size);
        if (r) return r;
        fill_counts(&x, need, n_need, tmpl, empty);
        tdom **cur = NULL;
        size_t n = 0, level = 0;
        r = find_level(&x, x.level, &cur, &n, &level, why, why_size);
        if (!r) r = descend(&x, &cur, &n, level);
        if (!r) r = result(cur, n, ret);
        free(cur);
        return r;
}
