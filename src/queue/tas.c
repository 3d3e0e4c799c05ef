/* SPDX-License-Identifier: Apache-2.0
 *
 * tas.c — Topology-Aware Scheduling's part of the queue: the snapshot of
 * every TAS flavor (nodes grouped by the Topology's levels, free capacity),
 * Kueue's flavor check for TAS (tas_flavorassigner.go
 * checkPodSetAndFlavorMatchForTAS), the placement of each pod set that asks
 * for a topology once its flavors are chosen, the assignment an admitted
 * workload keeps, and each pod's nodeSelector (Kueue's topology ungater).
 * The placement itself is tas-place.c.
 */
#include <stdio.h>

#include "base/strv.h"
#include "queue/tas.h"

/* What one workload's pod sets were placed at (by pod set), the last time
 * it was nominated; it holds TAS usage while the workload is admitted. */
typedef struct twl {
        tas_placement *ps; /* n entries, empty when the pod set has none */
        ssize_t *flavor;   /* per pod set: its tflavor, -1 none */
        size_t n;
        int32_t pinned;  /* pods given their domain so far (q_tas_pin) */
        bool listed;     /* in qtas.holders */
        bool preempting; /* its last assignment preempts for its topology: flavor[] says where (q_tas_fits) */
} twl;

struct qtas {
        tflavor *f;
        size_t n_f;
        char **res; /* every node's allocatable resource names, sorted */
        size_t n_res;
        tdom **all; /* every domain, owned */
        size_t n_all;
        twl *wl; /* per workload */
        size_t n_wl;
        size_t *holders; /* the workloads ever placed (recount looks at these only) */
        size_t n_holders;
        size_t *tent; /* workloads placed in cycle tent_cycle, not yet admitted */
        size_t n_tent, tent_cycle;
        bool loaded; /* the input's admitted Workloads' topologyAssignments read (load_preadmitted) */
};

/* ---- snapshot ---- */

static ssize_t res_index(const struct qtas *t, const char *name) {
        size_t lo = 0, hi = t->n_res;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(t->res[mid], name);
                if (!c) return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static int cmp_strp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int collect_resources(struct qtas *t, const dp_object_list *l) {
        if (dp_strv_push_n(&t->res, &t->n_res, "pods") < 0) return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_NODE) continue;
                const dp_node *n = l->items[i].node;
                for (size_t k = 0; k < n->n_allocatable; k++) {
                        bool seen = false;
                        for (size_t j = 0; j < t->n_res && !seen; j++)
                                seen = streq(t->res[j], n->allocatable[k].name);
                        if (!seen && dp_strv_push_n(&t->res, &t->n_res, n->allocatable[k].name) < 0) return -ENOMEM;
                }
        }
        qsort(t->res, t->n_res, sizeof(char *), cmp_strp);
        return 0;
}

static tdom *dom_new(struct qtas *t, size_t level, bool leaf) {
        tdom **v = realloc(t->all, (t->n_all + 1) * sizeof(*v));
        if (!v) return NULL;
        t->all = v;
        tdom *d = calloc(1, sizeof(*d));
        if (!d) return NULL;
        v[t->n_all++] = d;
        d->level = level;
        d->values = calloc(level + 1, sizeof(char *));
        if (leaf) {
                d->free = calloc(t->n_res + 1, sizeof(int64_t));
                d->used = calloc(t->n_res + 1, sizeof(int64_t));
        }
        return d->values && (!leaf || (d->free && d->used)) ? d : NULL;
}

static void dom_free(tdom *d) {
        dp_strv_free_n(d->values, d->level + 1);
        for (size_t i = 0; i < d->n_labels; i++)
                dp_free_many(d->labels[i].key, d->labels[i].value);
        for (size_t i = 0; i < d->n_taints; i++)
                dp_free_many(d->taints[i].key, d->taints[i].value, d->taints[i].effect, d->taints[i].time_added);
        dp_free_many(d->kids, d->free, d->used, d->labels, d->taints, d->node);
        free(d);
}

/* The nodes of a flavor: schedulable, its nodeLabels, every level's label
 * (utiltas.NodeMatchesFlavor). */
static bool node_matches(const dp_node *n, const dp_resource_flavor *rf, const dp_kq_topology *topo) {
        if (n->unschedulable) return false;
        for (size_t i = 0; i < rf->n_node_labels; i++)
                if (!streq_ptr(dp_kv_get(n->meta.labels, n->meta.n_labels, rf->node_labels[i].key),
                               rf->node_labels[i].value))
                        return false;
        for (size_t i = 0; i < topo->n_levels; i++)
                if (!dp_kv_get(n->meta.labels, n->meta.n_labels, topo->levels[i])) return false;
        return true;
}

/* Nodes by their level values, then name (qsort_r; userdata the Topology). */
static int cmp_node(const void *a, const void *b, void *userdata) {
        const dp_kq_topology *topo = userdata;
        const dp_node *x = *(const dp_node *const *)a, *y = *(const dp_node *const *)b;
        for (size_t i = 0; i < topo->n_levels; i++) {
                int c = strcmp(dp_kv_get(x->meta.labels, x->meta.n_labels, topo->levels[i]),
                               dp_kv_get(y->meta.labels, y->meta.n_labels, topo->levels[i]));
                if (c) return c;
        }
        return strcmp(x->meta.name, y->meta.name);
}

static bool same_prefix(const tdom *a, const dp_node *n, const dp_kq_topology *topo, size_t upto) {
        for (size_t i = 0; i <= upto; i++)
                if (!streq(a->values[i], dp_kv_get(n->meta.labels, n->meta.n_labels, topo->levels[i]))) return false;
        return true;
}

/* A node's capacity into its leaf (and, hostname lowest, its labels and
 * taints); the index finds the leaf by node name for the bound pods. */
static int leaf_node(dp_queue *q, tflavor *f, size_t fi, tdom *d, const dp_node *n) {
        struct qtas *t = q->tas;
        for (size_t k = 0; k < n->n_allocatable; k++) {
                ssize_t r = res_index(t, n->allocatable[k].name);
                if (r >= 0) d->free[r] += q_value(n->allocatable[k].name, &n->allocatable[k].value);
        }
        if (q_index_put(q, d, "T\x1f%zu\x1f%s", fi, n->meta.name) < 0) return -ENOMEM;
        if (!f->hostname || d->n_labels) return 0;
        d->labels = calloc(n->meta.n_labels + 1, sizeof(dp_kv));
        d->taints = calloc(n->n_taints + 1, sizeof(dp_taint));
        d->node = strdup(n->meta.name);
        if (!d->labels || !d->taints || !d->node) return -ENOMEM;
        for (size_t i = 0; i < n->meta.n_labels; i++, d->n_labels++)
                if (!(d->labels[i].key = strdup(n->meta.labels[i].key)) ||
                    !(d->labels[i].value = strdup(n->meta.labels[i].value ? n->meta.labels[i].value : "")))
                        return -ENOMEM;
        for (size_t i = 0; i < n->n_taints; i++) {
                const dp_taint *x = &n->taints[i];
                if (!streq_ptr(x->effect, "NoSchedule") && !streq_ptr(x->effect, "NoExecute")) continue;
                dp_taint *y = &d->taints[d->n_taints++];
                y->key = strdup(x->key);
                y->value = x->value ? strdup(x->value) : NULL;
                y->effect = strdup(x->effect);
                if (!y->key || !y->effect || (x->value && !y->value)) return -ENOMEM;
        }
        return 0;
}

/* Group a level's sorted domains (or the nodes, for the leaves) under
 * parents: consecutive ones sharing values down to `level` share a parent. */
static int parents(struct qtas *t, tflavor *f, size_t level) {
        tdom **kids = f->level[level + 1];
        size_t nk = f->n_level[level + 1];
        if (!(f->level[level] = calloc(nk + 1, sizeof(tdom *)))) return -ENOMEM;
        for (size_t i = 0; i < nk; i++) {
                tdom *p = f->n_level[level] ? f->level[level][f->n_level[level] - 1] : NULL;
                bool same = p;
                for (size_t v = 0; same && v <= level; v++)
                        same = streq(p->values[v], kids[i]->values[v]);
                if (!same) {
                        if (!(p = dom_new(t, level, false))) return -ENOMEM;
                        for (size_t v = 0; v <= level; v++)
                                if (!(p->values[v] = strdup(kids[i]->values[v]))) return -ENOMEM;
                        f->level[level][f->n_level[level]++] = p;
                }
                tdom **x = realloc(p->kids, (p->n_kids + 1) * sizeof(*x));
                if (!x) return -ENOMEM;
                p->kids = x;
                x[p->n_kids++] = kids[i];
                kids[i]->parent = p;
        }
        return 0;
}

static int leaves(dp_queue *q, tflavor *f, size_t fi, const dp_node **nodes, size_t n) {
        size_t last = f->topo->n_levels - 1;
        if (!(f->level[last] = calloc(n + 1, sizeof(tdom *)))) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                tdom *d = f->n_level[last] ? f->level[last][f->n_level[last] - 1] : NULL;
                if (!d || !same_prefix(d, nodes[i], f->topo, last)) {
                        if (!(d = dom_new(q->tas, last, true))) return -ENOMEM;
                        for (size_t v = 0; v <= last; v++)
                                if (!(d->values[v] = strdup(dp_kv_get(nodes[i]->meta.labels, nodes[i]->meta.n_labels,
                                                                      f->topo->levels[v]))))
                                        return -ENOMEM;
                        f->level[last][f->n_level[last]++] = d;
                }
                if (leaf_node(q, f, fi, d, nodes[i]) < 0) return -ENOMEM;
        }
        return 0;
}

static int build_flavor(dp_queue *q, const dp_object_list *l, size_t fi) {
        tflavor *f = &q->tas->f[fi];
        size_t nl = f->topo->n_levels;
        f->hostname = streq(f->topo->levels[nl - 1], DP_TAS_HOSTNAME_LABEL);
        f->res = q->tas->res;
        f->n_res = q->tas->n_res;
        f->level = calloc(nl, sizeof(tdom **));
        f->n_level = calloc(nl, sizeof(size_t));
        _cleanup_free_ const dp_node **nodes = calloc(l->n + 1, sizeof(*nodes));
        if (!f->level || !f->n_level || !nodes) return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_NODE && node_matches(l->items[i].node, f->rf, f->topo))
                        nodes[n++] = l->items[i].node;
        if (n) qsort_r(nodes, n, sizeof(*nodes), cmp_node, (void *)f->topo);
        int r = leaves(q, f, fi, nodes, n);
        for (size_t lv = nl - 1; lv > 0 && r >= 0; lv--)
                r = parents(q->tas, f, lv - 1);
        return r;
}

/* A TAS pod (Kueue's utiltas.IsTAS): one of the topology annotations.
 * Its usage is its workload's topologyAssignment, not non-TAS usage. */
static bool tas_pod(const dp_pod *p) {
        static const char *const keys[] = {DP_KUEUE_TAS_REQUIRED, DP_KUEUE_TAS_PREFERRED, DP_KUEUE_TAS_UNCONSTRAINED,
                                           DP_KUEUE_TAS_SLICE_REQUIRED};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (dp_kv_get(p->meta.annotations, p->meta.n_annotations, keys[i])) return true;
        return false;
}

/* Pods bound to a node of a flavor use its capacity (non-TAS usage:
 * DaemonSets, static pods, whatever ran before; Kueue's
 * belongsToNonTASCache: bound, not terminated, not a TAS pod). */
static void bound_pods(dp_queue *q, const dp_object_list *l) {
        struct qtas *t = q->tas;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                const dp_pod *p = l->items[i].pod;
                if (!p->node_name || (p->phase && (streq(p->phase, "Succeeded") || streq(p->phase, "Failed"))) ||
                    tas_pod(p))
                        continue;
                for (size_t fi = 0; fi < t->n_f; fi++) {
                        tdom *d = q_index_get(q, "T\x1f%zu\x1f%s", fi, p->node_name);
                        for (size_t r = 0; d && r < t->n_res; r++)
                                d->free[r] -= streq(t->res[r], "pods") ? 1 : q_pod_value(p, t->res[r]);
                }
        }
}

static const dp_kq_topology *topology(const dp_queue *q, const char *name) {
        for (size_t i = 0; i < q->n_owned; i++)
                if (dp_queue_kind(q->owned[i]) == DP_KQ_TOPOLOGY && streq(q->owned[i].ext->meta.name, name))
                        return (const dp_kq_topology *)q->owned[i].ext;
        return NULL;
}

static ssize_t flavor_index(const struct qtas *t, const char *name) {
        for (size_t i = 0; t && i < t->n_f; i++)
                if (streq(t->f[i].rf->x.meta.name, name)) return (ssize_t)i;
        return -1;
}

/* A ClusterQueue with a TAS flavor whose Topology is not in the input is
 * inactive (Kueue's TopologyNotFound). */
static void inactive_queues(dp_queue *q) {
        for (size_t c = 0; c < q->n_cqs; c++)
                for (size_t g = 0; g < q->cqs[c].cq->n_groups && !q->cqs[c].inactive; g++)
                        for (size_t k = 0; k < q->cqs[c].cq->groups[g].n_flavors; k++) {
                                const char *name = q->cqs[c].cq->groups[g].flavors[k].name;
                                const dp_resource_flavor *rf = q_index_get(q, "F\x1f%s", name);
                                if (rf && rf->topology_name && flavor_index(q->tas, name) < 0)
                                        q->cqs[c].inactive = "TopologyNotFound";
                        }
}

int q_tas_new(dp_queue *q, const dp_object_list *l) {
        size_t n = 0;
        for (size_t i = 0; i < q->n_owned; i++)
                n += dp_queue_kind(q->owned[i]) == DP_KQ_RESOURCE_FLAVOR &&
                     ((const dp_resource_flavor *)q->owned[i].ext)->topology_name;
        if (!n) return 0;
        if (!(q->tas = calloc(1, sizeof(*q->tas))) || !(q->tas->f = calloc(n, sizeof(tflavor))) ||
            collect_resources(q->tas, l) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < q->n_owned; i++) {
                if (dp_queue_kind(q->owned[i]) != DP_KQ_RESOURCE_FLAVOR) continue;
                const dp_resource_flavor *rf = (const dp_resource_flavor *)q->owned[i].ext;
                const dp_kq_topology *topo = rf->topology_name ? topology(q, rf->topology_name) : NULL;
                if (!topo) continue;
                q->tas->f[q->tas->n_f] = (tflavor){.rf = rf, .topo = topo};
                if (build_flavor(q, l, q->tas->n_f++) < 0) return -ENOMEM;
        }
        bound_pods(q, l);
        inactive_queues(q);
        return 0;
}

void q_tas_free(dp_queue *q) {
        struct qtas *t = q->tas;
        if (!t) return;
        for (size_t i = 0; i < t->n_all; i++)
                dom_free(t->all[i]);
        for (size_t i = 0; i < t->n_f; i++) {
                for (size_t l = 0; t->f[i].level && l < t->f[i].topo->n_levels; l++)
                        free(t->f[i].level[l]);
                dp_free_many(t->f[i].level, t->f[i].n_level);
        }
        for (size_t i = 0; i < t->n_wl; i++) {
                for (size_t p = 0; p < t->wl[i].n; p++)
                        tas_placement_done(&t->wl[i].ps[p]);
                dp_free_many(t->wl[i].ps, t->wl[i].flavor);
        }
        dp_strv_free_n(t->res, t->n_res);
        dp_free_many(t->all, t->f, t->wl, t->tent, t->holders, t);
        q->tas = NULL;
}

void q_tas_reset(dp_queue *q) {
        if (!q->tas) return;
        q->tas->n_tent = 0;
        q->tas->loaded = false;
        for (size_t i = 0; i < q->tas->n_wl; i++)
                q->tas->wl[i].pinned = 0;
}

/* ---- what a pod set asks for ---- */

static const char *annotation(const dp_queue_podset *ps, const char *key) {
        const dp_pod *p = ps->tmpl;
        const char *v = p ? dp_kv_get(p->meta.annotations, p->meta.n_annotations, key) : NULL;
        return v && v[0] ? v : NULL;
}

/* Every flavor of the ClusterQueue is a TAS one (isTASOnly). */
static bool tas_only(const dp_queue *q, const qcq *cq) {
        for (size_t g = 0; g < cq->cq->n_groups; g++)
                for (size_t k = 0; k < cq->cq->groups[g].n_flavors; k++)
                        if (flavor_index(q->tas, cq->cq->groups[g].flavors[k].name) < 0) return false;
        return true;
}

/* The pod set's topology request; false when it asks for none. */
static bool request_of(const dp_queue *q, const qcq *cq, const dp_queue_podset *ps, tas_request *ret) {
        tas_request rq = {.required = annotation(ps, DP_KUEUE_TAS_REQUIRED),
                          .preferred = annotation(ps, DP_KUEUE_TAS_PREFERRED),
                          .slice_level = annotation(ps, DP_KUEUE_TAS_SLICE_REQUIRED)};
        const char *u = annotation(ps, DP_KUEUE_TAS_UNCONSTRAINED), *size = annotation(ps, DP_KUEUE_TAS_SLICE_SIZE);
        rq.unconstrained = u && streq(u, "true");
        if (size) {
                char *end = NULL;
                long v = strtol(size, &end, 10);
                rq.has_slice_size = end && !*end && v > 0 && v <= INT32_MAX;
                rq.slice_size = rq.has_slice_size ? (int32_t)v : 0;
        }
        bool explicit_ = rq.required || rq.preferred || rq.unconstrained || rq.slice_level;
        rq.implied = !explicit_ && q->tas && tas_only(q, cq);
        *ret = rq;
        return explicit_ || rq.implied;
}

/* HasLevel: the request's level and slice level are levels of f. */
static bool has_level(const tflavor *f, const tas_request *rq) {
        const char *key = rq->required ? rq->required : rq->preferred;
        if (!key && !rq->slice_level && !rq->unconstrained) return false;
        return (!key || tas_level_of(f, key) >= 0) && (!rq->slice_level || tas_level_of(f, rq->slice_level) >= 0);
}

const char *q_tas_flavor_check(const dp_queue *q, const qcq *cq, const dp_queue_podset *ps,
                               const dp_kq_resource_group *g, const char *name, char *buf, size_t size) {
        const dp_resource_flavor *rf = q_index_get(q, "F\x1f%s", name);
        if (!rf) return NULL; /* "flavor x not found" is the assigner's */
        tas_request rq;
        if (!request_of(q, cq, ps, &rq)) {
                if (!rf->topology_name) return NULL;
                snprintf(buf, size, "Flavor \"%s\" supports only TopologyAwareScheduling", name);
                return buf;
        }
        if (rq.implied) return NULL;
        if (!rf->topology_name) {
                bool overlap = false; /* a flavor for resources the pods do not ask is fine */
                for (size_t i = 0; i < ps->n_requests && !overlap; i++)
                        for (size_t k = 0; k < g->n_covered && !overlap; k++)
                                overlap = ps->requests[i].value && streq(ps->requests[i].name, g->covered[k]);
                if (!overlap) return NULL;
                snprintf(buf, size, "Flavor \"%s\" does not support TopologyAwareScheduling", name);
                return buf;
        }
        ssize_t f = flavor_index(q->tas, name);
        if (f < 0) {
                snprintf(buf, size, "Flavor \"%s\" information missing in TAS cache", name);
                return buf;
        }
        if (has_level(&q->tas->f[f], &rq)) return NULL;
        snprintf(buf, size, "Flavor \"%s\" does not contain the requested level", name);
        return buf;
}

/* ---- placement and TAS usage ---- */

/* Need i of a pod of ps on t's resources: its requests (a pods request
 * counts the pod too), then one pod when none of them is pods; false past
 * the end. */
static bool need_at(const struct qtas *t, const dp_queue_podset *ps, size_t i, tas_need *ret) {
        if (i < ps->n_requests) {
                const char *name = ps->requests[i].name;
                *ret = (tas_need){name, ps->requests[i].value + streq(name, "pods"), res_index(t, name)};
                return true;
        }
        for (size_t k = 0; k < ps->n_requests; k++)
                if (streq(ps->requests[k].name, "pods")) return false;
        *ret = (tas_need){"pods", 1, res_index(t, "pods")};
        return i == ps->n_requests;
}

static tas_need *needs_of(const struct qtas *t, const dp_queue_podset *ps, size_t *ret_n) {
        tas_need *v = calloc(ps->n_requests + 2, sizeof(*v));
        if (!v) return NULL;
        size_t n = 0;
        while (need_at(t, ps, n, &v[n]))
                n++;
        *ret_n = n;
        return v;
}

/* The usage of ps's placement pl into (sign 1) or out of (-1) its leaves. */
static void add_usage(struct qtas *t, const dp_queue_podset *ps, const tas_placement *pl, int sign) {
        tas_need need;
        for (size_t i = 0; need_at(t, ps, i, &need); i++)
                for (size_t d = 0; need.res >= 0 && d < pl->n; d++)
                        pl->dom[d]->used[need.res] += sign * need.value * pl->count[d];
}

static void workload_usage(dp_queue *q, size_t w, int sign) {
        const twl *x = w < q->tas->n_wl ? &q->tas->wl[w] : NULL;
        for (size_t p = 0; x && p < x->n && p < q->wl[w].n_podsets; p++)
                if (x->ps[p].n) add_usage(q->tas, &q->wl[w].podsets[p], &x->ps[p], sign);
}

static int load_preadmitted(dp_queue *q);

/* TAS usage now: the admitted workloads' assignments and this cycle's
 * placements so far. */
static int recount(dp_queue *q) {
        struct qtas *t = q->tas;
        for (size_t i = 0; i < t->n_all; i++)
                if (t->all[i]->used) memset(t->all[i]->used, 0, t->n_res * sizeof(int64_t));
        if (t->tent_cycle != q->cycles) t->n_tent = 0;
        t->tent_cycle = q->cycles;
        if (!t->loaded && load_preadmitted(q) < 0) return -ENOMEM;
        for (size_t i = 0; i < t->n_holders; i++)
                if (q->wl[t->holders[i]].state == DP_QW_ADMITTED) workload_usage(q, t->holders[i], 1);
        for (size_t i = 0; i < t->n_tent; i++)
                if (q->wl[t->tent[i]].state != DP_QW_ADMITTED) workload_usage(q, t->tent[i], 1);
        return 0;
}

/* Forget what w was placed at; room for its pod sets. */
static twl *clear_workload(dp_queue *q, size_t w) {
        struct qtas *t = q->tas;
        if (w >= t->n_wl && DP_EXTEND(t->wl, t->n_wl, q->n_wl) < 0) return NULL;
        twl *x = &t->wl[w];
        for (size_t p = 0; p < x->n; p++)
                tas_placement_done(&x->ps[p]);
        if (x->n < q->wl[w].n_podsets) {
                dp_free_many(x->ps, x->flavor);
                x->ps = calloc(q->wl[w].n_podsets, sizeof(*x->ps));
                x->flavor = calloc(q->wl[w].n_podsets, sizeof(*x->flavor));
                x->n = x->ps && x->flavor ? q->wl[w].n_podsets : 0;
                if (!x->n) return NULL;
        }
        x->pinned = 0;
        x->preempting = false;
        for (size_t p = 0; p < x->n; p++)
                x->flavor[p] = -1;
        for (size_t i = 0; i < t->n_tent; i++)
                if (t->tent[i] == w) t->tent[i--] = t->tent[--t->n_tent];
        return x;
}

/* The TAS flavor pod set p took (onlyTASFlavor), -1 none. */
static ssize_t podset_flavor(const dp_queue *q, const dp_queue_podset *ps, const ssize_t *flavor_fr) {
        for (size_t i = 0; i < ps->n_requests; i++) {
                ssize_t f = flavor_fr[i] >= 0 ? flavor_index(q->tas, q->fr[flavor_fr[i]].flavor) : -1;
                if (f >= 0) return f;
        }
        return -1;
}

static int list_add(size_t **v, size_t *n, size_t w) {
        size_t *x = realloc(*v, (*n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        *v = x;
        x[(*n)++] = w;
        return 0;
}

/* One pod set on the snapshot (with empty, on the flavor's nodes without
 * TAS workloads: Kueue's simulateEmpty): 0 and the placement in *ret (the
 * caller's; usage is not counted here), or an empty *ret when the pod set
 * asks for no topology; 1 when it does not fit, with Kueue's reason in why
 * (NULL: none wanted); -ENOMEM. */
static int place_podset(dp_queue *q, const qcq *cq, const dp_queue_podset *ps, ssize_t fi, bool empty,
                        tas_placement *ret, dp_strbuf *why) {
        tas_request rq;
        *ret = (tas_placement){0};
        if (fi < 0 || !ps->count || !request_of(q, cq, ps, &rq)) return 0;
        size_t n = 0;
        _cleanup_free_ tas_need *need = needs_of(q->tas, ps, &n);
        if (!need) return -ENOMEM;
        char reason[1024];
        int r = tas_place(&q->tas->f[fi], &rq, ps->count, need, n, ps->tmpl, empty, ret, reason, sizeof(reason));
        if (r != 1 || !why) return r;
        dp_strbuf_printf(why, "%scouldn't assign flavors to pod set %s: %s", why->len ? "; " : "", ps->name, reason);
        return dp_strbuf_failed(why) ? -ENOMEM : 1;
}

/* Every pod set of w in turn, each on the TAS flavor it took, into x;
 * stops at the first that does not fit (1). On the snapshot, each
 * placement's usage counts for the next pod sets. On empty nodes, a TAS
 * pod set's flavor-resources need preemption (Kueue's
 * updateModeForTASRequests). */
static int each_podset(dp_queue *q, const qcq *cq, const dp_queue_workload *w, twl *x, qassign *a, bool empty,
                       dp_strbuf *why) {
        int r = 0;
        size_t off = 0;
        for (size_t p = 0; p < w->n_podsets && r == 0; off += w->podsets[p++].n_requests) {
                ssize_t fi = podset_flavor(q, &w->podsets[p], a->flavor_fr + off);
                r = place_podset(q, cq, &w->podsets[p], fi, empty, &x->ps[p], why);
                if (r != 0 || !x->ps[p].n) continue;
                x->flavor[p] = fi;
                if (!empty) add_usage(q->tas, &w->podsets[p], &x->ps[p], 1);
                for (size_t i = 0; empty && i < w->podsets[p].n_requests; i++)
                        for (size_t u = 0; u < a->n_usage; u++)
                                a->usage[u].preempt |= a->usage[u].fr == (size_t)a->flavor_fr[off + i];
        }
        return r;
}

/* Forget the placements of w's pod sets and the usage they counted. */
static twl *unplace(dp_queue *q, size_t w) {
        workload_usage(q, w, -1);
        return clear_workload(q, w);
}

/* Does any pod set of w ask for a topology on a TAS flavor it took? */
static bool asks_tas(const dp_queue *q, const qcq *cq, const dp_queue_workload *w, const qassign *a) {
        size_t off = 0;
        for (size_t p = 0; p < w->n_podsets; off += w->podsets[p++].n_requests) {
                tas_request rq;
                if (w->podsets[p].count && podset_flavor(q, &w->podsets[p], a->flavor_fr + off) >= 0 &&
                    request_of(q, cq, &w->podsets[p], &rq))
                        return true;
        }
        return false;
}

/* Kueue's assignTopology: with quota to fit, every pod set is placed, and
 * the first that does not fit puts its reason in the message and the
 * assignment in mode Preempt. In a preempting mode each pod set must fit
 * the flavor's nodes without TAS workloads (else NoFit), and the
 * flavor-resources of them all then need preemption: preempt.c finds
 * targets whose removal lets the topology fit (q_tas_fits). That placement
 * on empty nodes is held for the rest of the cycle, so heads placed after
 * it do not take what it waits for (Kueue reserves it for the cycle). */
int q_tas_assign(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *a) {
        if (!q->tas || a->mode == QM_NOFIT || !asks_tas(q, cq, w, a)) return 0;
        size_t wi = (size_t)(w - q->wl);
        int r = clear_workload(q, wi) ? recount(q) : -ENOMEM; /* its own reservation no longer counts */
        if (r < 0) return r;
        twl *x = &q->tas->wl[wi];
        if (a->mode == QM_FIT && (r = each_podset(q, cq, w, x, a, false, &a->message)) == 0) {
                bool placed = false;
                for (size_t p = 0; p < x->n; p++)
                        placed |= x->ps[p].n > 0;
                if (!placed) return 0;
                if (!x->listed && list_add(&q->tas->holders, &q->tas->n_holders, wi) < 0) return -ENOMEM;
                x->listed = true;
                return list_add(&q->tas->tent, &q->tas->n_tent, wi);
        }
        if (r < 0 || !(x = unplace(q, wi))) return r < 0 ? r : -ENOMEM;
        if (a->mode == QM_FIT) a->mode = QM_PREEMPT;
        r = each_podset(q, cq, w, x, a, true, NULL);
        if (r < 0 || !(x = r ? clear_workload(q, wi) : x)) return r < 0 ? r : -ENOMEM;
        if (r == 1) {
                a->mode = QM_NOFIT; /* not even on empty nodes */
                return 0;
        }
        x->preempting = true;
        return list_add(&q->tas->tent, &q->tas->n_tent, wi);
}

/* The pod sets a preempting w waits for, placed on the leaves' usage now
 * into pl (one per pod set), each counting for the next; 0 when all fit,
 * 1 when one does not, -ENOMEM. The usage stays until unplace_all. */
static int place_all(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const twl *x, tas_placement *pl) {
        int r = 0;
        for (size_t p = 0; p < x->n && p < w->n_podsets && r == 0; p++) {
                if (x->flavor[p] < 0) continue;
                r = place_podset(q, cq, &w->podsets[p], x->flavor[p], false, &pl[p], NULL);
                if (r == 0) add_usage(q->tas, &w->podsets[p], &pl[p], 1);
        }
        return r;
}

/* place_all's usage out again; the placements freed unless keep. */
static void unplace_all(dp_queue *q, const dp_queue_workload *w, const twl *x, tas_placement *pl, bool keep) {
        for (size_t p = 0; p < x->n && p < w->n_podsets; p++) {
                add_usage(q->tas, &w->podsets[p], &pl[p], -1);
                if (!keep) tas_placement_done(&pl[p]);
        }
}

static twl *preempting(dp_queue *q, const dp_queue_workload *w) {
        size_t wi = (size_t)(w - q->wl);
        twl *x = q->tas && wi < q->tas->n_wl ? &q->tas->wl[wi] : NULL;
        return x && x->preempting ? x : NULL;
}

bool q_tas_fits(dp_queue *q, const qcq *cq, const dp_queue_workload *w) {
        const twl *x = preempting(q, w);
        if (!x) return true;
        tas_placement *pl = calloc(x->n + 1, sizeof(*pl));
        int r = pl ? place_all(q, cq, w, x, pl) : -ENOMEM;
        if (pl) unplace_all(q, w, x, pl, false);
        free(pl);
        return r == 0;
}

void q_tas_reserve(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const qtarget *t, size_t n) {
        twl *x = preempting(q, w);
        tas_placement *pl = x ? calloc(x->n + 1, sizeof(*pl)) : NULL;
        if (!pl) return; /* no memory: the placement on empty nodes stays held */
        for (size_t i = 0; i < n; i++)
                q_tas_hold(q, t[i].w, -1);
        int r = place_all(q, cq, w, x, pl);
        unplace_all(q, w, x, pl, r == 0);
        for (size_t i = n; i-- > 0;)
                q_tas_hold(q, t[i].w, 1);
        for (size_t p = 0; r == 0 && p < x->n; p++) {
                tas_placement_done(&x->ps[p]);
                x->ps[p] = pl[p];
        }
        free(pl);
}

void q_tas_hold(dp_queue *q, size_t w, int sign) {
        if (q->tas && q->wl[w].state == DP_QW_ADMITTED) workload_usage(q, w, sign);
}

/* ---- the input's admitted Workloads ---- */

/* The leaf of f whose values at the assignment's levels are d's; NULL when
 * none is (its node is gone). */
static tdom *leaf_of(const tflavor *f, const dp_kq_podset_assignment *pa, const dp_kq_topology_domain *d) {
        size_t last = f->topo->n_levels - 1;
        for (size_t i = 0; i < f->n_level[last]; i++) {
                tdom *x = f->level[last][i];
                bool same = true;
                for (size_t l = 0; l < pa->n_topo_levels && same; l++) {
                        ssize_t k = tas_level_of(f, pa->topo_levels[l]);
                        same = k >= 0 && streq(x->values[k], d->values[l]);
                }
                if (same) return x;
        }
        return NULL;
}

/* A pod set assignment's domains as a placement on flavor fi. */
static int assignment_placement(const struct qtas *t, ssize_t fi, const dp_kq_podset_assignment *pa,
                                tas_placement *ret) {
        tas_placement pl = {calloc(pa->n_topo_domains + 1, sizeof(tdom *)),
                            calloc(pa->n_topo_domains + 1, sizeof(int32_t)), 0};
        if (!pl.dom || !pl.count) {
                tas_placement_done(&pl);
                return -ENOMEM;
        }
        for (size_t d = 0; d < pa->n_topo_domains; d++) {
                tdom *leaf = leaf_of(&t->f[fi], pa, &pa->topo_domains[d]);
                if (!leaf) continue;
                pl.dom[pl.n] = leaf;
                pl.count[pl.n++] = pa->topo_domains[d].count;
        }
        *ret = pl;
        return 0;
}

/* Workload w, admitted in the input, holds the domains its
 * status.admission's topologyAssignments name, as Kueue's TAS cache counts
 * an admitted workload's usage from its assignment. */
static int preadmitted_one(dp_queue *q, size_t w, const dp_kq_workload *kw) {
        const dp_queue_workload *wl = &q->wl[w];
        twl *x = NULL;
        for (size_t a = 0; a < kw->n_assignments; a++) {
                const dp_kq_podset_assignment *pa = &kw->assignments[a];
                ssize_t fi = -1;
                for (size_t k = 0; k < pa->n_flavors && fi < 0; k++)
                        fi = flavor_index(q->tas, pa->flavors[k].value);
                for (size_t p = 0; fi >= 0 && pa->n_topo_domains && p < wl->n_podsets; p++) {
                        if (!streq(wl->podsets[p].name, pa->name)) continue;
                        if (!x && !(x = clear_workload(q, w))) return -ENOMEM;
                        tas_placement_done(&x->ps[p]);
                        if (assignment_placement(q->tas, fi, pa, &x->ps[p]) < 0) return -ENOMEM;
                        x->flavor[p] = fi;
                }
        }
        if (!x || x->listed) return 0;
        x->listed = true;
        return list_add(&q->tas->holders, &q->tas->n_holders, w);
}

static int load_preadmitted(dp_queue *q) {
        for (size_t i = 0; i < q->n_wl; i++) {
                const dp_queue_workload *w = &q->wl[i];
                if (!w->preadmitted || w->state != DP_QW_ADMITTED || !streq(w->kind, "Workload")) continue;
                const dp_kq_workload *kw = q_index_get(q, "O\x1f%s\x1f%s", w->ns, w->name);
                if (kw && preadmitted_one(q, i, kw) < 0) return -ENOMEM;
        }
        q->tas->loaded = true;
        return 0;
}

/* ---- what the admitted workload keeps ---- */

static const twl *placed(const dp_queue *q, const dp_queue_workload *w) {
        size_t wi = (size_t)(w - q->wl);
        if (!q->tas || wi >= q->tas->n_wl || (w->state != DP_QW_ADMITTED && w->state != DP_QW_FINISHED)) return NULL;
        const twl *x = &q->tas->wl[wi];
        for (size_t p = 0; p < x->n; p++)
                if (x->ps[p].n) return x;
        return NULL;
}

/* The first level an assignment names: only the hostname when it is the
 * lowest level (buildAssignment), else all. */
static size_t first_level(const tflavor *f) { return f->hostname ? f->topo->n_levels - 1 : 0; }

static int set_selector(dp_pod *p, const char *key, const char *value) {
        for (size_t i = 0; i < p->n_node_selector; i++)
                if (streq(p->node_selector[i].key, key)) {
                        char *v = strdup(value);
                        if (!v) return -ENOMEM;
                        free(p->node_selector[i].value);
                        p->node_selector[i].value = v;
                        return 0;
                }
        dp_kv *v = realloc(p->node_selector, (p->n_node_selector + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        p->node_selector = v;
        v[p->n_node_selector] = (dp_kv){strdup(key), strdup(value)};
        if (!v[p->n_node_selector].key || !v[p->n_node_selector].value) {
                dp_free_many(v[p->n_node_selector].key, v[p->n_node_selector].value);
                return -ENOMEM;
        }
        p->n_node_selector++;
        return 0;
}

int q_tas_pin(const dp_queue *q, const dp_queue_workload *w, dp_pod *p) {
        const twl *x = placed(q, w);
        if (!x || !x->ps[0].n) return 0;
        twl *m = &q->tas->wl[w - q->wl];
        const tas_placement *pl = &x->ps[0];
        const tflavor *f = &q->tas->f[x->flavor[0]];
        int32_t k = m->pinned++;
        for (size_t d = 0; d < pl->n; k -= pl->count[d++]) {
                if (k >= pl->count[d]) continue;
                for (size_t l = first_level(f); l < f->topo->n_levels; l++)
                        if (set_selector(p, f->topo->levels[l], pl->dom[d]->values[l]) < 0) return -ENOMEM;
                return 0;
        }
        return 0; /* more pods than the assignment counts: left to kube-scheduler */
}

static dp_doc_node *assignment_doc(dp_doc_set *s, const tflavor *f, const tas_placement *pl) {
        dp_doc_node *m = dp_doc_new_map(s), *levels = dp_doc_new_seq(s), *doms = dp_doc_new_seq(s);
        if (!m || !levels || !doms) return NULL;
        size_t first = first_level(f);
        for (size_t l = first; l < f->topo->n_levels; l++)
                if (dp_doc_seq_add(s, levels, dp_doc_new_str(s, f->topo->levels[l])) < 0) return NULL;
        for (size_t d = 0; d < pl->n; d++) {
                dp_doc_node *dm = dp_doc_new_map(s), *vals = dp_doc_new_seq(s);
                if (!dm || !vals) return NULL;
                for (size_t l = first; l < f->topo->n_levels; l++)
                        if (dp_doc_seq_add(s, vals, dp_doc_new_str(s, pl->dom[d]->values[l])) < 0) return NULL;
                if (dp_doc_map_add(s, dm, "values", vals) < 0 ||
                    dp_doc_map_add(s, dm, "count", dp_doc_new_int(s, pl->count[d])) < 0 ||
                    dp_doc_seq_add(s, doms, dm) < 0)
                        return NULL;
        }
        if (dp_doc_map_add(s, m, "levels", levels) < 0 || dp_doc_map_add(s, m, "domains", doms) < 0) return NULL;
        return m;
}

int q_tas_encode(dp_doc_set *s, const dp_queue *q, const dp_queue_workload *w, dp_doc_node *d) {
        const twl *x = d ? placed(q, w) : NULL;
        if (!x) return 0;
        if (w->n_podsets == 1)
                return dp_doc_map_add(s, d, "topologyAssignment",
                                      assignment_doc(s, &q->tas->f[x->flavor[0]], &x->ps[0]));
        dp_doc_node *m = dp_doc_new_map(s);
        if (!m) return -ENOMEM;
        for (size_t p = 0; p < x->n && p < w->n_podsets; p++)
                if (x->ps[p].n && dp_doc_map_add(s, m, w->podsets[p].name,
                                                 assignment_doc(s, &q->tas->f[x->flavor[p]], &x->ps[p])) < 0)
                        return -ENOMEM;
        return dp_doc_map_add(s, d, "topologyAssignment", m);
}

static void print_one(const dp_doc_node *a, const char *podset, dp_strbuf *out) {
        const dp_doc_node *levels = dp_doc_get(a, "levels"), *doms = dp_doc_get(a, "domains");
        if (!levels || levels->type != DP_DOC_SEQ || !doms || doms->type != DP_DOC_SEQ) return;
        dp_strbuf_printf(out, "      topology%s%s (", podset ? " of " : "", podset ? podset : "");
        for (size_t i = 0; i < levels->n; i++)
                dp_strbuf_printf(out, "%s%s", i ? "/" : "", levels->items[i]->str);
        dp_strbuf_puts(out, "):");
        for (size_t d = 0; d < doms->n; d++) {
                const dp_doc_node *v = dp_doc_get(doms->items[d], "values"), *c = dp_doc_get(doms->items[d], "count");
                dp_strbuf_puts(out, d ? ", " : " ");
                for (size_t i = 0; v && v->type == DP_DOC_SEQ && i < v->n; i++)
                        dp_strbuf_printf(out, "%s%s", i ? "/" : "", v->items[i]->str);
                dp_strbuf_printf(out, "=%s", c && c->type == DP_DOC_SCALAR ? c->str : "?");
        }
        dp_strbuf_putc(out, '\n');
}

void q_tas_print(const dp_doc_node *w, dp_strbuf *out) {
        const dp_doc_node *a = dp_doc_get(w, "topologyAssignment");
        if (!a || a->type != DP_DOC_MAP) return;
        if (dp_doc_get(a, "levels")) {
                print_one(a, NULL, out);
                return;
        }
        for (size_t i = 0; i < a->n; i++)
                print_one(a->pairs[i].value, a->pairs[i].key, out);
}
