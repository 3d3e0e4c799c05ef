/* SPDX-License-Identifier: Apache-2.0
 * plugin-interpod.c — InterPodAffinity's filter, as kube-scheduler 1.35 runs
 * it (topology.h).
 *
 * PreFilter counts, per topology pair (key, domain):
 *   aff    bound pods matching ALL of the pod's required affinity terms, once
 *          per term's key;
 *   anti   bound pods matching one of the pod's required anti-affinity
 *          terms, per matching term's key;
 *   exist  bound pods one of whose required anti-affinity terms matches the
 *          pod (namespaceSelector against the pod's namespace labels).
 * Filter, in this order: every affinity term's key must be on the node and
 * its pair counted, unless no pair is counted at all and the pod matches all
 * its own terms (the first pod of a group with affinity to itself); no anti
 * term's pair may be counted; no exist pair of the node's labels may be
 * counted. */
#include "sched/topology.h"

typedef struct ip_key {
        const topo_keydom *kd;
        int64_t *cnt[3]; /* aff, anti, exist per domain; NULL until used */
        int32_t *touched[3]; /* the domains counted, each once (listed) */
        uint8_t *listed[3];
        size_t n_touched[3];
} ip_key;

enum { AFF = 0, ANTI, EXIST };

struct topo_interpod {
        dp_topo_index *idx;
        const dp_store *st;
        const char *ns; /* the pod's, borrowed for the cycle */
        const dp_kv *labels;
        size_t n_labels;
        topo_term *terms[2]; /* affinity, anti-affinity */
        size_t n_terms[2];
        int32_t *term_key[2]; /* each term's entry in keys */
        ip_key *keys;
        size_t n_keys;
        int64_t pairs[3]; /* pairs with a count > 0, per kind */
        bool self_aff;    /* the pod matches all its own affinity terms */
};

topo_interpod *topo_interpod_free(topo_interpod *ip) {
        if (!ip) return NULL;
        for (int k = 0; k < 2; k++) {
                for (size_t i = 0; i < ip->n_terms[k]; i++)
                        topo_term_done(&ip->terms[k][i]);
                free(ip->terms[k]);
                free(ip->term_key[k]);
        }
        free(ip->keys); /* their counts are the index's scratch */
        free(ip);
        return NULL;
}
DEFINE_FREEP(topo_interpod, topo_interpod_free)

static int64_t key_of(topo_interpod *ip, const char *key) {
        for (size_t i = 0; i < ip->n_keys; i++)
                if (streq(ip->keys[i].kd->key, key)) return (int64_t)i;
        const topo_keydom *kd = topo_keydom_get(ip->idx, key);
        ip_key *v = kd ? realloc(ip->keys, (ip->n_keys + 1) * sizeof(*v)) : NULL;
        if (!v) return -ENOMEM;
        ip->keys = v;
        v[ip->n_keys] = (ip_key){.kd = kd};
        return (int64_t)ip->n_keys++;
}

/* Add delta to the pair (key k, domain of table node ni) of one kind. */
static int bump(topo_interpod *ip, size_t k, int kind, int64_t ni, int64_t delta) {
        ip_key *e = &ip->keys[k];
        int32_t d = ni >= 0 ? e->kd->dom[ni] : -1;
        if (d < 0 || !delta) return 0;
        if (!e->cnt[kind]) {
                e->cnt[kind] = topo_scratch(ip->idx, (e->kd->n_dom + 1) * sizeof(int64_t));
                e->touched[kind] = topo_scratch(ip->idx, (e->kd->n_dom + 1) * sizeof(int32_t));
                e->listed[kind] = topo_scratch(ip->idx, e->kd->n_dom + 1);
                if (!e->cnt[kind] || !e->touched[kind] || !e->listed[kind]) return -ENOMEM;
        }
        if (!e->listed[kind][d]) {
                e->listed[kind][d] = 1;
                e->touched[kind][e->n_touched[kind]++] = d;
        }
        int64_t before = e->cnt[kind][d];
        e->cnt[kind][d] += delta;
        ip->pairs[kind] += (e->cnt[kind][d] > 0) - (before > 0);
        return 0;
}

static int terms_compile(topo_interpod *ip, const dp_pod *p, int which) {
        const dp_pod_affinity_term *src = which ? p->pod_anti_affinity : p->pod_affinity;
        size_t n = which ? p->n_pod_anti_affinity : p->n_pod_affinity;
        ip->terms[which] = calloc(n + 1, sizeof(topo_term));
        ip->term_key[which] = calloc(n + 1, sizeof(int32_t));
        if (!ip->terms[which] || !ip->term_key[which]) return -ENOMEM;
        for (; ip->n_terms[which] < n; ip->n_terms[which]++) {
                size_t i = ip->n_terms[which];
                int r = topo_term_compile(&ip->terms[which][i], &src[i], ip->ns, p->meta.labels, p->meta.n_labels);
                if (r < 0) return r;
                int64_t k = key_of(ip, src[i].topology_key);
                if (k < 0) {
                        topo_term_done(&ip->terms[which][i]);
                        return (int)k;
                }
                ip->term_key[which][i] = (int32_t)k;
        }
        return 0;
}

static bool matches_all_affinity(const topo_interpod *ip, const char *ns, const dp_kv *labels, size_t n) {
        for (size_t i = 0; i < ip->n_terms[AFF]; i++)
                if (!topo_term_matches(&ip->terms[AFF][i], ip->st, ns, labels, n)) return false;
        return ip->n_terms[AFF] > 0;
}

/* Each of g's nodes: the pair of key k gets its pods (of one kind). */
static int bump_group(topo_interpod *ip, const topo_group *g, size_t k, int kind) {
        for (size_t i = 0; i < g->n_nodes; i++) {
                int r = bump(ip, k, kind, g->count[i] > 0 ? topo_node_tab(ip->idx, g->node[i]) : -1, g->count[i]);
                if (r < 0) return r;
        }
        return 0;
}

static int existing_anti(topo_group *g, const topo_term *t, void *ud) {
        topo_interpod *ip = ud;
        if (!topo_term_matches(t, ip->st, ip->ns, ip->labels, ip->n_labels)) return 0;
        int64_t k = key_of(ip, t->key);
        return k < 0 ? (int)k : bump_group(ip, g, (size_t)k, EXIST);
}

static int incoming_affinity(topo_group *g, void *ud) {
        topo_interpod *ip = ud;
        if (!matches_all_affinity(ip, g->ns, g->labels, g->n_labels)) return 0;
        for (size_t i = 0; i < ip->n_terms[AFF]; i++) {
                int r = bump_group(ip, g, (size_t)ip->term_key[AFF][i], AFF);
                if (r < 0) return r;
        }
        return 0;
}

typedef struct anti_ctx {
        topo_interpod *ip;
        size_t term;
} anti_ctx;

static int incoming_anti(topo_group *g, void *ud) {
        anti_ctx *x = ud;
        topo_interpod *ip = x->ip;
        if (!topo_term_matches(&ip->terms[ANTI][x->term], ip->st, g->ns, g->labels, g->n_labels)) return 0;
        return bump_group(ip, g, (size_t)ip->term_key[ANTI][x->term], ANTI);
}

int topo_interpod_prefilter(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns, topo_interpod **ret) {
        *ret = NULL;
        _cleanup_(topo_interpod_freep) topo_interpod *ip = calloc(1, sizeof(*ip));
        if (!ip) return -ENOMEM;
        *ip = (topo_interpod){.idx = idx, .st = s->store, .ns = ns, .labels = p->meta.labels,
                              .n_labels = p->meta.n_labels};
        int r = terms_compile(ip, p, AFF);
        if (r >= 0) r = terms_compile(ip, p, ANTI);
        if (r >= 0) r = topo_anti_each(idx, p->meta.labels, p->meta.n_labels, existing_anti, ip);
        if (r >= 0 && ip->n_terms[AFF]) r = topo_groups_each(idx, &ip->terms[AFF][0].sel, incoming_affinity, ip);
        for (size_t i = 0; r >= 0 && i < ip->n_terms[ANTI]; i++) {
                anti_ctx x = {ip, i};
                r = topo_groups_each(idx, &ip->terms[ANTI][i].sel, incoming_anti, &x);
        }
        if (r < 0) return r;
        ip->self_aff = matches_all_affinity(ip, ns, p->meta.labels, p->meta.n_labels);
        /* Skip: nothing to check (gang members assumed later may still add pairs) */
        if (!ip->pairs[EXIST] && !ip->n_terms[AFF] && !ip->n_terms[ANTI] && !s->n_assumed) return 0;
        *ret = TAKE_PTR(ip);
        return 0;
}

int topo_interpod_update(topo_interpod *ip, const dp_pod *p, const char *ns, size_t ni, int delta) {
        int r = 0;
        /* the pod's own anti-affinity terms against the incoming pod */
        for (size_t i = 0; r >= 0 && i < p->n_pod_anti_affinity; i++) {
                topo_term t;
                r = topo_term_compile(&t, &p->pod_anti_affinity[i], ns, p->meta.labels, p->meta.n_labels);
                if (r < 0) break;
                if (topo_term_matches(&t, ip->st, ip->ns, ip->labels, ip->n_labels)) {
                        int64_t k = key_of(ip, t.key);
                        r = k < 0 ? (int)k : bump(ip, (size_t)k, EXIST, (int64_t)ni, delta);
                }
                topo_term_done(&t);
        }
        if (r >= 0 && matches_all_affinity(ip, ns, p->meta.labels, p->meta.n_labels))
                for (size_t i = 0; r >= 0 && i < ip->n_terms[AFF]; i++)
                        r = bump(ip, (size_t)ip->term_key[AFF][i], AFF, (int64_t)ni, delta);
        for (size_t i = 0; r >= 0 && i < ip->n_terms[ANTI]; i++)
                if (topo_term_matches(&ip->terms[ANTI][i], ip->st, ns, p->meta.labels, p->meta.n_labels))
                        r = bump(ip, (size_t)ip->term_key[ANTI][i], ANTI, (int64_t)ni, delta);
        return r;
}

static int64_t count_at(const ip_key *e, int kind, int32_t d) { return e->cnt[kind] ? e->cnt[kind][d] : 0; }

dp_verdict_code topo_interpod_filter(const topo_interpod *ip, size_t ni) {
        bool pods_exist = true;
        for (size_t i = 0; i < ip->n_terms[AFF]; i++) {
                const ip_key *e = &ip->keys[ip->term_key[AFF][i]];
                int32_t d = e->kd->dom[ni];
                if (d < 0) return DP_VERDICT_POD_AFFINITY; /* every key must be on the node */
                if (count_at(e, AFF, d) <= 0) pods_exist = false;
        }
        if (!pods_exist && !(ip->pairs[AFF] == 0 && ip->self_aff)) return DP_VERDICT_POD_AFFINITY;
        for (size_t i = 0; ip->pairs[ANTI] && i < ip->n_terms[ANTI]; i++) {
                const ip_key *e = &ip->keys[ip->term_key[ANTI][i]];
                int32_t d = e->kd->dom[ni];
                if (d >= 0 && count_at(e, ANTI, d) > 0) return DP_VERDICT_POD_ANTI_AFFINITY;
        }
        for (size_t i = 0; ip->pairs[EXIST] && i < ip->n_keys; i++) {
                const ip_key *e = &ip->keys[i];
                int32_t d = e->kd->dom[ni];
                if (d >= 0 && count_at(e, EXIST, d) > 0) return DP_VERDICT_EXISTING_ANTI_AFFINITY;
        }
        return DP_VERDICT_FIT;
}

/* One check per key and kind, in Filter's order: affinity (a key missing
 * fails; a pair not counted fails unless the pod is the first of its own
 * group), then anti-affinity, then the existing pods' anti-affinity. */
int topo_interpod_checks(const topo_interpod *ip, topo_checks *ret) {
        static const uint8_t verdicts[3] = {DP_VERDICT_POD_AFFINITY, DP_VERDICT_POD_ANTI_AFFINITY,
                                            DP_VERDICT_EXISTING_ANTI_AFFINITY};
        bool first_of_group = ip->pairs[AFF] == 0 && ip->self_aff;
        for (int kind = AFF; kind <= EXIST; kind++)
                for (size_t k = 0; k < ip->n_keys; k++) {
                        const ip_key *e = &ip->keys[k];
                        bool used = kind == EXIST ? ip->pairs[EXIST] && e->cnt[EXIST] : false;
                        for (size_t i = 0; kind != EXIST && i < ip->n_terms[kind] && !used; i++)
                                used = (size_t)ip->term_key[kind][i] == k && (kind == AFF || ip->pairs[ANTI]);
                        if (!used) continue;
                        if (DP_GROW(ret->v, ret->cap, ret->n + 1) < 0) return -ENOMEM;
                        ret->v[ret->n++] = (topo_check){.kd = e->kd, .cnt = e->cnt[kind], .touched = e->touched[kind],
                                                        .n_touched = e->n_touched[kind], .limit = 0,
                                                        .above = kind != AFF, .never = kind == AFF && first_of_group,
                                                        .verdict = verdicts[kind],
                                                        .missing = kind == AFF ? DP_VERDICT_POD_AFFINITY : 0};
                }
        return 0;
}

/* ---- Score (score.h): PreScore counts, per topology pair, the weights of
 * (1) the pod's preferred affinity (+weight) and anti-affinity (-weight)
 * terms for each bound pod they select, and (2) each bound pod's required
 * affinity (hardPodAffinityWeight), preferred affinity (+weight) and
 * preferred anti-affinity (-weight) terms that select the pod; a node's score
 * is the sum over its labels' pairs. Min-max normalised in score.c. ---- */

typedef struct sc_key {
        const topo_keydom *kd;
        int64_t *cnt; /* per domain */
} sc_key;

typedef struct sc_state {
        dp_topo_index *idx;
        const dp_store *st;
        const char *ns;
        const dp_pod *p;
        sc_key *keys;
        size_t n_keys;
        const topo_term *term; /* the incoming pod's term being counted */
        int64_t weight;
        int32_t hard;
        bool any;
} sc_state;

static sc_key *sc_key_of(sc_state *x, const char *key) {
        for (size_t i = 0; i < x->n_keys; i++)
                if (streq(x->keys[i].kd->key, key)) return &x->keys[i];
        const topo_keydom *kd = topo_keydom_get(x->idx, key);
        sc_key *v = kd ? realloc(x->keys, (x->n_keys + 1) * sizeof(*v)) : NULL;
        if (!v) return NULL;
        x->keys = v;
        int64_t *cnt = topo_scratch(x->idx, (kd->n_dom + 1) * sizeof(*cnt));
        if (!cnt) return NULL;
        v[x->n_keys] = (sc_key){kd, cnt};
        return &v[x->n_keys++];
}

/* weight for every pod of g, at the pair of its node for `key`. */
static int sc_add_group(sc_state *x, const topo_group *g, const char *key, int64_t weight) {
        sc_key *k = sc_key_of(x, key);
        if (!k) return -ENOMEM;
        for (size_t i = 0; i < g->n_nodes; i++) {
                int64_t ni = g->count[i] > 0 ? topo_node_tab(x->idx, g->node[i]) : -1;
                int32_t d = ni >= 0 ? k->kd->dom[ni] : -1;
                if (d < 0) continue;
                k->cnt[d] += weight * g->count[i];
                x->any = true;
        }
        return 0;
}

static int sc_incoming(topo_group *g, void *ud) {
        sc_state *x = ud;
        if (!topo_term_matches(x->term, x->st, g->ns, g->labels, g->n_labels)) return 0;
        return sc_add_group(x, g, x->term->key, x->weight);
}

static int sc_existing(topo_group *g, void *ud) {
        sc_state *x = ud;
        for (size_t i = 0; i < g->n_sterm; i++) {
                int64_t w = g->sweight[i] ? g->sweight[i] : x->hard;
                if (!w || !topo_term_matches(&g->sterm[i], x->st, x->ns, x->p->meta.labels, x->p->meta.n_labels))
                        continue;
                int r = sc_add_group(x, g, g->sterm[i].key, w);
                if (r < 0) return r;
        }
        return 0;
}

static int sc_incoming_terms(sc_state *x, const dp_pod_affinity_term *v, size_t n, int sign) {
        for (size_t i = 0; i < n; i++) {
                topo_term t;
                int r = topo_term_compile(&t, &v[i], x->ns, x->p->meta.labels, x->p->meta.n_labels);
                if (r < 0) return r;
                x->term = &t;
                x->weight = sign * (int64_t)v[i].weight;
                r = topo_groups_each(x->idx, &t.sel, sc_incoming, x);
                topo_term_done(&t);
                if (r < 0) return r;
        }
        return 0;
}

int topo_interpod_score(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns,
                        const struct dp_score_profile *prof, const uint32_t *feas, size_t n, int64_t *out,
                        bool *ret_any) {
        *ret_any = false;
        bool constraints = p->n_preferred_pod_affinity || p->n_preferred_pod_anti_affinity;
        if (prof->ignore_preferred_terms_of_existing && !constraints) return 0; /* Skip */
        sc_state x = {.idx = idx, .st = s->store, .ns = ns, .p = p, .hard = prof->hard_pod_affinity_weight};
        int r = sc_incoming_terms(&x, p->preferred_pod_affinity, p->n_preferred_pod_affinity, +1);
        if (r >= 0) r = sc_incoming_terms(&x, p->preferred_pod_anti_affinity, p->n_preferred_pod_anti_affinity, -1);
        if (r >= 0) r = topo_scored_each(idx, sc_existing, &x);
        if (r >= 0 && x.any) {
                for (size_t i = 0; i < n; i++) {
                        int64_t v = 0;
                        for (size_t k = 0; k < x.n_keys; k++) {
                                int32_t d = x.keys[k].kd->dom[feas[i]];
                                if (d >= 0) v += x.keys[k].cnt[d];
                        }
                        out[i] = v;
                }
                *ret_any = true;
        }
        free(x.keys);
        return r < 0 ? r : 0;
}
