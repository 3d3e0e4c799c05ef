/* SPDX-License-Identifier: Apache-2.0
 * plugin-spread.c — PodTopologySpread's filter, as kube-scheduler 1.35 runs
 * it (topology.h): the pod's DoNotSchedule constraints (ScheduleAnyway and
 * the cluster's default constraints, all ScheduleAnyway, only score).
 *
 * PreFilter: a node counts for a constraint when it has the topology keys of
 * every constraint and passes the constraint's inclusion policies
 * (nodeAffinityPolicy Honor: the pod's nodeSelector and required node
 * affinity; nodeTaintsPolicy Honor: its tolerations of NoSchedule and
 * NoExecute taints). Its domain is then one of the constraint's domains,
 * and the pods of the pod's namespace its selector matches there count
 * (none when the selector is empty: kube-scheduler counts no pod for `{}`).
 * The minimum is over those domains, 0 when there are fewer than minDomains.
 * Filter: a node without the key fails (unresolvable, "missing required
 * label"); else matching pods in its domain + 1 if the pod matches its own
 * selector - minimum must not exceed maxSkew. */
#include "sched/topology.h"

typedef struct spread_c {
        topo_sel sel;
        const topo_keydom *kd;
        int32_t max_skew, min_domains;
        bool honor_affinity, honor_taints;
        bool self;     /* the pod matches its own selector */
        int64_t *cnt;  /* matching pods per domain */
        int32_t *touched; /* the domains counted, each once (listed) */
        uint8_t *listed;
        size_t n_touched;
        uint8_t *present; /* the domain is one of the constraint's */
        size_t n_present;
        int64_t min;
} spread_c;

struct topo_spread {
        const char *ns; /* the pod's, borrowed for the cycle */
        spread_c *c;
        size_t n;
        uint8_t *elig; /* [node * n + constraint]: the node counts for the constraint; NULL: `simple` */
        size_t n_tab;
};

/* Node ni counts for constraint i. Without elig (one constraint and no
 * inclusion policy that applies) that is having the key. */
static inline bool eligible(const topo_spread *sp, size_t ni, size_t i) {
        return sp->elig ? sp->elig[ni * sp->n + i] : sp->c[i].kd->dom[ni] >= 0;
}

topo_spread *topo_spread_free(topo_spread *sp) {
        if (!sp) return NULL;
        for (size_t i = 0; i < sp->n; i++)
                topo_sel_done(&sp->c[i].sel); /* the arrays are the index's scratch */
        free(sp->c);
        free(sp);
        return NULL;
}
DEFINE_FREEP(topo_spread, topo_spread_free)

static int constraints_compile(topo_spread *sp, dp_topo_index *idx, const dp_pod *p) {
        for (size_t i = 0; i < p->n_spread; i++) {
                const dp_spread_constraint *src = &p->spread[i];
                if (src->schedule_anyway) continue;
                spread_c *c = &sp->c[sp->n++];
                int r = topo_sel_compile(&c->sel, src->label_selector, p->meta.labels, p->meta.n_labels,
                                         src->match_label_keys, src->n_match_label_keys, NULL, 0);
                if (r < 0) return r;
                c->max_skew = src->max_skew;
                c->min_domains = src->min_domains > 0 ? src->min_domains : 1;
                c->honor_affinity = !src->node_affinity_ignore;
                c->honor_taints = src->node_taints_honor;
                c->self = topo_sel_matches(&c->sel, p->meta.labels, p->meta.n_labels, NULL, NULL);
                if (!(c->kd = topo_keydom_get(idx, src->topology_key))) return -ENOMEM;
                c->cnt = topo_scratch(idx, (c->kd->n_dom + 1) * sizeof(*c->cnt));
                c->present = topo_scratch(idx, c->kd->n_dom + 1);
                c->touched = topo_scratch(idx, (c->kd->n_dom + 1) * sizeof(*c->touched));
                c->listed = topo_scratch(idx, c->kd->n_dom + 1);
                if (!c->cnt || !c->present || !c->touched || !c->listed) return -ENOMEM;
        }
        return 0;
}

/* Which nodes count for which constraint, and so which domains exist. */
static void nodes_eligible(topo_spread *sp, const dp_pod *p, const dp_node *const *tab) {
        bool has_affinity = p->n_node_selector || p->required_node_affinity;
        for (size_t ni = 0; ni < sp->n_tab; ni++) {
                bool keys = true;
                for (size_t i = 0; i < sp->n && keys; i++)
                        keys = sp->c[i].kd->dom[ni] >= 0;
                int aff = -1, tol = -1; /* computed on first need */
                for (size_t i = 0; i < sp->n; i++) {
                        spread_c *c = &sp->c[i];
                        bool ok = keys;
                        if (ok && c->honor_affinity && has_affinity) {
                                if (aff < 0) aff = dp_sched_pod_node_affinity(p, tab[ni]);
                                ok = aff;
                        }
                        if (ok && c->honor_taints && tab[ni]->n_taints) {
                                if (tol < 0) tol = dp_sched_pod_tolerates(p, tab[ni]);
                                ok = tol;
                        }
                        sp->elig[ni * sp->n + i] = ok;
                        int32_t d = c->kd->dom[ni];
                        if (ok && !c->present[d]) {
                                c->present[d] = 1;
                                c->n_present++;
                        }
                }
        }
}

static void count(spread_c *c, int32_t d, int64_t n) {
        if (!c->listed[d]) {
                c->listed[d] = 1;
                c->touched[c->n_touched++] = d;
        }
        c->cnt[d] += n;
}

typedef struct count_ctx {
        topo_spread *sp;
        size_t i;
        const dp_topo_index *idx;
} count_ctx;

static int count_group(topo_group *g, void *ud) {
        count_ctx *x = ud;
        spread_c *c = &x->sp->c[x->i];
        /* terminating pods are not counted (kube-scheduler, kubernetes#87621) */
        if (g->terminating || !streq(g->ns, x->sp->ns) ||
            !topo_sel_matches(&c->sel, g->labels, g->n_labels, NULL, NULL))
                return 0;
        for (size_t k = 0; k < g->n_nodes; k++) {
                int64_t ni = g->count[k] > 0 ? topo_node_tab(x->idx, g->node[k]) : -1;
                if (ni >= 0 && eligible(x->sp, (size_t)ni, x->i)) count(c, c->kd->dom[ni], g->count[k]);
        }
        return 0;
}

int topo_spread_prefilter(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns, const dp_node *const *tab,
                          size_t n_tab, topo_spread **ret) {
        (void)s;
        *ret = NULL;
        size_t want = 0;
        for (size_t i = 0; i < p->n_spread; i++)
                want += !p->spread[i].schedule_anyway;
        if (!want) return 0; /* Skip */
        _cleanup_(topo_spread_freep) topo_spread *sp = calloc(1, sizeof(*sp));
        if (!sp || !(sp->c = calloc(want, sizeof(*sp->c)))) return -ENOMEM;
        sp->ns = ns;
        sp->n_tab = n_tab;
        int r = constraints_compile(sp, idx, p);
        if (r < 0) return r;
        bool has_affinity = p->n_node_selector || p->required_node_affinity, simple = sp->n == 1;
        for (size_t i = 0; i < sp->n; i++)
                simple &= !(sp->c[i].honor_affinity && has_affinity) && !sp->c[i].honor_taints;
        if (simple) { /* every domain of the key is one of the constraint's: no walk over the nodes */
                memset(sp->c[0].present, 1, sp->c[0].kd->n_dom);
                sp->c[0].n_present = sp->c[0].kd->n_dom;
        } else {
                if (!(sp->elig = topo_scratch(idx, n_tab * sp->n + 1))) return -ENOMEM;
                nodes_eligible(sp, p, tab);
        }
        for (size_t i = 0; i < sp->n; i++) {
                if (topo_sel_empty(&sp->c[i].sel)) continue; /* counts no pod */
                count_ctx x = {sp, i, idx};
                topo_groups_each(idx, &sp->c[i].sel, count_group, &x);
        }
        *ret = TAKE_PTR(sp);
        return 0;
}

int topo_spread_update(topo_spread *sp, const dp_pod *p, const char *ns, size_t ni, int delta) {
        for (size_t i = 0; i < sp->n && ni < sp->n_tab; i++) {
                spread_c *c = &sp->c[i];
                if (!streq(ns, sp->ns) || topo_sel_empty(&c->sel) || !eligible(sp, ni, i)) continue;
                if (topo_sel_matches(&c->sel, p->meta.labels, p->meta.n_labels, NULL, NULL))
                        count(c, c->kd->dom[ni], delta);
        }
        return 0;
}

void topo_spread_finish(topo_spread *sp) {
        for (size_t i = 0; i < sp->n; i++) {
                spread_c *c = &sp->c[i];
                int64_t min = INT64_MAX;
                for (size_t d = 0; d < c->kd->n_dom; d++)
                        if (c->present[d] && c->cnt[d] < min) min = c->cnt[d];
                c->min = c->n_present < (size_t)c->min_domains || min == INT64_MAX ? 0 : min;
        }
}

dp_verdict_code topo_spread_filter(const topo_spread *sp, size_t ni) {
        for (size_t i = 0; i < sp->n; i++) {
                const spread_c *c = &sp->c[i];
                int32_t d = ni < sp->n_tab ? c->kd->dom[ni] : -1;
                if (d < 0) return DP_VERDICT_SPREAD_LABEL;
                int64_t match = c->present[d] ? c->cnt[d] : 0;
                if (match + c->self - c->min > c->max_skew) return DP_VERDICT_SPREAD;
        }
        return DP_VERDICT_FIT;
}

int topo_spread_checks(const topo_spread *sp, topo_checks *ret) {
        for (size_t i = 0; i < sp->n; i++) {
                const spread_c *c = &sp->c[i];
                if (DP_GROW(ret->v, ret->cap, ret->n + 1) < 0) return -ENOMEM;
                /* n + self - min > maxSkew */
                ret->v[ret->n++] = (topo_check){.kd = c->kd, .cnt = c->cnt, .present = c->present,
                                                .touched = c->touched, .n_touched = c->n_touched,
                                                .limit = c->max_skew - c->self + c->min, .above = true,
                                                .verdict = DP_VERDICT_SPREAD, .missing = DP_VERDICT_SPREAD_LABEL};
        }
        return 0;
}

/* ---- Score (score.h): the pod's ScheduleAnyway constraints. PreScore: a
 * feasible node lacking a constraint's key is ignored (scores 0); the other
 * feasible nodes' domains are the constraint's (their number, or for the
 * hostname key the number of those nodes, weighs ln(size + 2)); every node
 * with all the keys that passes the inclusion policies adds its matching
 * pods to its domain. Score: per constraint the domain's count (on the
 * hostname key the node's own matching pods) * weight + maxSkew - 1,
 * summed in double and rounded. Normalised in score.c. ---- */

#define HOSTNAME_KEY "kubernetes.io/hostname"

typedef struct soft_c {
        topo_sel sel;
        const topo_keydom *kd;
        int32_t max_skew;
        bool honor_affinity, honor_taints, hostname;
        int64_t *cnt;     /* per domain (per table node for the hostname key) */
        uint8_t *present; /* the domain is a feasible node's */
        int64_t size;
} soft_c;

typedef struct soft_ctx {
        dp_topo_index *idx;
        const char *ns;
        soft_c *c;
        const uint8_t *elig; /* per table node: counts for this constraint */
} soft_ctx;

static int soft_count(topo_group *g, void *ud) {
        soft_ctx *x = ud;
        soft_c *c = x->c;
        if (!streq(g->ns, x->ns) || !topo_sel_matches(&c->sel, g->labels, g->n_labels, NULL, NULL)) return 0;
        for (size_t k = 0; k < g->n_nodes; k++) {
                int64_t ni = g->count[k] > 0 ? topo_node_tab(x->idx, g->node[k]) : -1;
                if (ni < 0) continue;
                if (c->hostname)
                        c->cnt[ni] += g->count[k]; /* Score counts the node's own pods, no policy */
                else if (x->elig[ni] && c->present[c->kd->dom[ni]])
                        c->cnt[c->kd->dom[ni]] += g->count[k];
        }
        return 0;
}

static bool soft_keys(const soft_c *c, size_t n, size_t ni) {
        for (size_t i = 0; i < n; i++)
                if (c[i].kd->dom[ni] < 0) return false;
        return true;
}

/* Which table nodes count for constraint c (all keys, or with the
 * cluster's defaults c's own: inclusion policies). */
static void soft_eligible(const soft_c *all, size_t n_c, const soft_c *c, bool all_keys, const dp_pod *p,
                          const dp_node *const *tab, size_t n_tab, uint8_t *elig) {
        bool has_affinity = p->n_node_selector || p->required_node_affinity;
        for (size_t ni = 0; ni < n_tab; ni++) {
                bool ok = all_keys ? soft_keys(all, n_c, ni) : c->kd->dom[ni] >= 0;
                if (ok && c->honor_affinity && has_affinity) ok = dp_sched_pod_node_affinity(p, tab[ni]);
                if (ok && c->honor_taints && tab[ni]->n_taints) ok = dp_sched_pod_tolerates(p, tab[ni]);
                elig[ni] = ok;
        }
}

static int soft_compile(dp_topo_index *idx, const dp_pod *p, size_t n_tab, soft_c *v, size_t *ret_n) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_spread; i++) {
                const dp_spread_constraint *src = &p->spread[i];
                if (!src->schedule_anyway) continue;
                soft_c *c = &v[n++];
                int r = topo_sel_compile(&c->sel, src->label_selector, p->meta.labels, p->meta.n_labels,
                                         src->match_label_keys, src->n_match_label_keys, NULL, 0);
                *ret_n = n;
                if (r < 0) return r;
                c->max_skew = src->max_skew;
                c->honor_affinity = !src->node_affinity_ignore;
                c->honor_taints = src->node_taints_honor;
                c->hostname = streq(src->topology_key, HOSTNAME_KEY);
                if (!(c->kd = topo_keydom_get(idx, src->topology_key))) return -ENOMEM;
                size_t cells = c->hostname ? n_tab : c->kd->n_dom;
                c->cnt = topo_scratch(idx, (cells + 1) * sizeof(*c->cnt));
                c->present = topo_scratch(idx, c->kd->n_dom + 1);
                if (!c->cnt || !c->present) return -ENOMEM;
        }
        return 0;
}

/* The selector of the cluster's default constraints (PodTopologySpreadArgs
 * defaultingType System: hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway)
 * for a pod, as helper.DefaultSelector makes it: the selectors of the
 * Services of its namespace that select it (a Service without a selector
 * selects nothing), merged, then its controller's: a v1
 * ReplicationController's spec.selector merged in, an apps/v1 ReplicaSet's
 * or StatefulSet's matchLabels added (devplane's own pods of a Deployment:
 * the Deployment, standing for its ReplicaSet). Labels borrowed from the
 * store; sel->n 0: no default constraints. */
typedef struct default_sel {
        dp_kv *kv;
        size_t n, cap;
} default_sel;

static int sel_merge(default_sel *d, const dp_kv *kv, size_t n) {
        for (size_t i = 0; i < n; i++) {
                size_t j = 0;
                while (j < d->n && !streq(d->kv[j].key, kv[i].key))
                        j++;
                if (j == d->n && DP_GROW(d->kv, d->cap, d->n + 1) < 0) return -ENOMEM;
                if (j == d->n) d->n++;
                d->kv[j] = kv[i]; /* the later one wins, as labels.Merge */
        }
        return 0;
}

static bool selects(const dp_deployment *svc, const dp_pod *p) {
        for (size_t i = 0; i < svc->n_selector_match_labels; i++) {
                const char *v = dp_kv_get(p->meta.labels, p->meta.n_labels, svc->selector_match_labels[i].key);
                if (!v || !streq(v, svc->selector_match_labels[i].value)) return false;
        }
        return true;
}

static const dp_deployment *controller_of(const dp_store *st, const dp_pod *p, const char *ns) {
        static const struct {
                dp_kind kind;
                const char *api_version;
        } kinds[] = {{DP_KIND_REPLICATION_CONTROLLER, "v1"},
                     {DP_KIND_REPLICA_SET, "apps/v1"},
                     {DP_KIND_STATEFUL_SET, "apps/v1"},
                     {DP_KIND_DEPLOYMENT, "apps/v1"}};
        for (size_t i = 0; i < p->meta.n_owner_references; i++) {
                const dp_owner_ref *o = &p->meta.owner_references[i];
                if (!o->controller) continue;
                for (size_t k = 0; o->kind && o->name && k < ELEMENTSOF(kinds); k++)
                        if (streq(o->kind, dp_kind_name(kinds[k].kind)) && streq_ptr(o->api_version, kinds[k].api_version))
                                return dp_store_get(st, kinds[k].kind, ns, o->name, NULL).deployment;
                return NULL; /* the controller, of another kind */
        }
        return NULL;
}

static int default_selector(const dp_store *st, const dp_pod *p, const char *ns, default_sel *sel) {
        size_t it = 0;
        dp_object o;
        while (dp_store_count(st, DP_KIND_SERVICE) && dp_store_next(st, DP_KIND_SERVICE, &it, &o, NULL)) {
                const dp_deployment *svc = o.deployment;
                if (svc->n_selector_match_labels && streq(dp_store_ns_of(o), ns) && selects(svc, p)) {
                        int r = sel_merge(sel, svc->selector_match_labels, svc->n_selector_match_labels);
                        if (r < 0) return r;
                }
        }
        const dp_deployment *own = controller_of(st, p, ns);
        return own ? sel_merge(sel, own->selector_match_labels, own->n_selector_match_labels) : 0;
}

bool topo_spread_defaults_apply(const dp_store *st, const dp_pod *p, const char *ns) {
        default_sel sel = {0};
        int r = default_selector(st, p, ns, &sel);
        free(sel.kv);
        return r < 0 || sel.n > 0; /* out of memory: scored, where the error comes back */
}

static int soft_defaults(dp_topo_index *idx, const dp_store *st, const dp_pod *p, const char *ns, size_t n_tab,
                         soft_c *v, size_t *ret_n) {
        _cleanup_free_ dp_kv *kv = NULL;
        default_sel sel = {0};
        int rs = default_selector(st, p, ns, &sel);
        kv = sel.kv;
        if (rs < 0) return rs;
        if (!sel.n) return 0;
        dp_label_selector ls = {.match_labels = sel.kv, .n_match_labels = sel.n};
        static const struct {
                const char *key;
                int32_t skew;
        } dc[] = {{HOSTNAME_KEY, 3}, {"topology.kubernetes.io/zone", 5}};
        for (size_t k = 0; k < ELEMENTSOF(dc); k++) {
                soft_c *c = &v[(*ret_n)++];
                int r = topo_sel_compile(&c->sel, &ls, NULL, 0, NULL, 0, NULL, 0);
                if (r < 0) return r;
                c->max_skew = dc[k].skew;
                c->honor_affinity = true;
                c->hostname = k == 0;
                if (!(c->kd = topo_keydom_get(idx, dc[k].key))) return -ENOMEM;
                c->cnt = topo_scratch(idx, ((c->hostname ? n_tab : c->kd->n_dom) + 1) * sizeof(*c->cnt));
                c->present = topo_scratch(idx, c->kd->n_dom + 1);
                if (!c->cnt || !c->present) return -ENOMEM;
        }
        return 0;
}

int topo_spread_score(dp_topo_index *idx, const dp_store *st, bool defaults, const dp_pod *p, const char *ns,
                      const dp_node *const *tab, size_t n_tab, const uint32_t *feas, size_t n, int64_t *out,
                      bool *ignored, bool *ret_any) {
        *ret_any = false;
        size_t want = 0, nc = 0;
        for (size_t i = 0; i < p->n_spread; i++)
                want += p->spread[i].schedule_anyway;
        bool sys = !p->n_spread && defaults; /* the cluster's: no node needs every key */
        if ((!want && !sys) || !n) return 0; /* Skip */
        soft_c *c = calloc(sys ? 2 : want, sizeof(*c));
        uint8_t *elig = topo_scratch(idx, n_tab + 1);
        int r = !c || !elig ? -ENOMEM
                : sys       ? soft_defaults(idx, st, p, ns, n_tab, c, &nc)
                            : soft_compile(idx, p, n_tab, c, &nc);
        size_t n_ignored = 0;
        bool missing[2] = {false, false}; /* a feasible node lacks the key: the "" domain */
        for (size_t i = 0; r >= 0 && i < n; i++) {
                ignored[i] = !sys && !soft_keys(c, nc, feas[i]);
                n_ignored += ignored[i];
                for (size_t k = 0; !ignored[i] && k < nc; k++) {
                        int32_t d = c[k].kd->dom[feas[i]];
                        if (d < 0) {
                                if (k < 2 && !missing[k]) c[k].size++;
                                if (k < 2) missing[k] = true;
                        } else if (!c[k].present[d]) {
                                c[k].present[d] = 1;
                                c[k].size++;
                        }
                }
        }
        for (size_t k = 0; r >= 0 && k < nc; k++) {
                if (c[k].hostname) c[k].size = (int64_t)(n - n_ignored);
                if (topo_sel_empty(&c[k].sel)) continue; /* counts no pod */
                soft_eligible(c, nc, &c[k], !sys, p, tab, n_tab, elig);
                soft_ctx x = {idx, ns, &c[k], elig};
                r = topo_groups_each(idx, &c[k].sel, soft_count, &x);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                double sc = 0;
                for (size_t k = 0; !ignored[i] && k < nc; k++) {
                        int32_t d = c[k].kd->dom[feas[i]];
                        if (d < 0) continue; /* the cluster's defaults: no key, no term */
                        int64_t cnt = c[k].hostname ? c[k].cnt[feas[i]] : c[k].cnt[d];
                        sc += dp_score_spread_term(cnt, c[k].max_skew, c[k].size);
                }
                out[i] = ignored[i] ? 0 : dp_score_round(sc);
        }
        for (size_t k = 0; c && k < nc; k++)
                topo_sel_done(&c[k].sel);
        free(c);
        if (r >= 0) *ret_any = nc > 0;
        return r < 0 ? r : 0;
}
