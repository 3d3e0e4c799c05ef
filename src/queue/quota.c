/* SPDX-License-Identifier: Apache-2.0
 *
 * quota.c — Kueue's quota tree: ClusterQueues as leaves, Cohorts (written as
 * objects or only named by a ClusterQueue's cohortName) above them, and per
 * flavor-resource the arithmetic of Kueue's resourceNode
 * (pkg/cache/scheduler/resource_node.go): local quota kept below a lending
 * limit, what is available through the parents within a borrowing limit, and
 * usage that bubbles up past the local quota.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

static int64_t sat_add(int64_t a, int64_t b) {
        int64_t r;
        if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
        return r;
}

static int64_t sat_sub(int64_t a, int64_t b) {
        int64_t r;
        if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
        return r;
}

ssize_t q_fr_find(const dp_queue *q, const char *flavor, const char *resource) {
        uintptr_t v = (uintptr_t)q_index_get(q, "R\x1f%s\x1f%s", flavor, resource);
        return v ? (ssize_t)v - 1 : -1;
}

/* Kueue's localQuota: what stays below the lending limit, never lent up. */
static int64_t local_quota(const qnode *n, size_t fr) {
        const qquota *x = &n->q[fr];
        if (!x->has_lending_limit) return 0;
        return DP_MAX(0, sat_sub(x->subtree, x->lending_limit));
}

static int64_t local_available(const qnode *n, size_t fr) {
        return DP_MAX(0, sat_sub(local_quota(n, fr), n->q[fr].usage));
}

int64_t q_local_available(const qnode *n, size_t fr) { return local_available(n, fr); }

int64_t q_available(const qnode *n, size_t fr) {
        const qquota *x = &n->q[fr];
        if (!n->parent) return sat_sub(x->subtree, x->usage);
        int64_t parent = q_available(n->parent, fr);
        if (x->has_borrowing_limit) {
                int64_t stored = sat_sub(x->subtree, local_quota(n, fr));
                int64_t used = DP_MAX(0, sat_sub(x->usage, local_quota(n, fr)));
                parent = DP_MIN(parent, sat_add(sat_sub(stored, used), x->borrowing_limit));
        }
        return sat_add(local_available(n, fr), parent);
}

int64_t q_potential(const qnode *n, size_t fr) {
        const qquota *x = &n->q[fr];
        if (!n->parent) return x->subtree;
        int64_t avail = sat_add(local_quota(n, fr), q_potential(n->parent, fr));
        if (x->has_borrowing_limit) avail = DP_MIN(avail, sat_add(x->subtree, x->borrowing_limit));
        return avail;
}

void q_add_usage(qnode *n, size_t fr, int64_t v) {
        int64_t local = local_available(n, fr);
        n->q[fr].usage = sat_add(n->q[fr].usage, v);
        n->ustamp++;
        if (n->parent && v > local) q_add_usage(n->parent, fr, v - local);
}

/* Kueue's removeUsage: the exact inverse of q_add_usage. */
void q_remove_usage(qnode *n, size_t fr, int64_t v) {
        int64_t stored = sat_sub(n->q[fr].usage, local_quota(n, fr));
        n->q[fr].usage = sat_sub(n->q[fr].usage, v);
        n->ustamp++;
        if (stored > 0 && n->parent) q_remove_usage(n->parent, fr, DP_MIN(v, stored));
}

static bool borrowing_with(const qnode *n, size_t fr, int64_t v) {
        return sat_add(n->q[fr].usage, v) > n->q[fr].subtree;
}

/* Kueue's getNodeHeight: the distance to the furthest leaf of a Cohort. */
static int height(const qnode *n) {
        int h = n->n_kids ? 1 : 0;
        for (size_t i = 0; i < n->n_kids; i++)
                if (!n->kids[i]->is_cq) h = DP_MAX(h, height(n->kids[i]) + 1);
        return h;
}

int q_borrow_height(const qnode *cq, size_t fr, int64_t val, bool *ret_below_root) {
        *ret_below_root = cq->parent != NULL;
        if (!borrowing_with(cq, fr, val) || !cq->parent) return 0;
        int64_t remaining = sat_sub(val, local_available(cq, fr));
        for (const qnode *t = cq->parent; t; t = t->parent) {
                if (!borrowing_with(t, fr, remaining)) {
                        *ret_below_root = t->parent != NULL;
                        return height(t);
                }
                remaining = sat_sub(remaining, local_available(t, fr));
        }
        const qnode *root = cq->parent;
        while (root->parent)
                root = root->parent;
        *ret_below_root = false;
        return height(root);
}

int64_t *q_usage_save(const dp_queue *q) {
        int64_t *v = calloc(q->n_nodes * q->n_fr + 1, sizeof(*v));
        if (!v) return NULL;
        for (size_t n = 0; n < q->n_nodes; n++)
                for (size_t f = 0; f < q->n_fr; f++)
                        v[n * q->n_fr + f] = q->nodes[n]->q[f].usage;
        return v;
}

void q_usage_restore(dp_queue *q, const int64_t *saved) {
        for (size_t n = 0; n < q->n_nodes; n++)
                for (size_t f = 0; f < q->n_fr; f++)
                        q->nodes[n]->q[f].usage = saved[n * q->n_fr + f];
}

/* ---- building ---- */

static int index_groups(dp_queue *q);

static int add_fr(dp_queue *q, const char *flavor, const char *resource) {
        if (q_fr_find(q, flavor, resource) >= 0) return 0;
        qfr *v = realloc(q->fr, (q->n_fr + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        q->fr = v;
        v[q->n_fr++] = (qfr){flavor, resource};
        return q_index_put(q, (void *)(uintptr_t)q->n_fr, "R\x1f%s\x1f%s", flavor, resource);
}

static int groups_frs(dp_queue *q, const dp_kq_resource_group *g, size_t ng) {
        for (size_t i = 0; i < ng; i++)
                for (size_t f = 0; f < g[i].n_flavors; f++)
                        for (size_t r = 0; r < g[i].flavors[f].n_resources; r++)
                                if (add_fr(q, g[i].flavors[f].name, g[i].flavors[f].resources[r].name) < 0)
                                        return -ENOMEM;
        return 0;
}

static void fill_quotas(dp_queue *q, qnode *n, const dp_kq_resource_group *g, size_t ng) {
        for (size_t i = 0; i < ng; i++)
                for (size_t f = 0; f < g[i].n_flavors; f++)
                        for (size_t r = 0; r < g[i].flavors[f].n_resources; r++) {
                                const dp_kq_quota *k = &g[i].flavors[f].resources[r];
                                ssize_t fr = q_fr_find(q, g[i].flavors[f].name, k->name);
                                qquota *x = &n->q[fr];
                                x->nominal = q_value(k->name, &k->nominal);
                                x->has_borrowing_limit = k->has_borrowing_limit;
                                x->has_lending_limit = k->has_lending_limit;
                                if (k->has_borrowing_limit) x->borrowing_limit = q_value(k->name, &k->borrowing_limit);
                                if (k->has_lending_limit) x->lending_limit = q_value(k->name, &k->lending_limit);
                        }
}

static qnode *node_new(dp_queue *q, const char *name, bool is_cq) {
        qnode **v = realloc(q->nodes, (q->n_nodes + 1) * sizeof(*v));
        if (!v) return NULL;
        q->nodes = v;
        qnode *n = calloc(1, sizeof(*n));
        if (n && !(n->q = calloc(q->n_fr + 1, sizeof(qquota)))) n = (free(n), NULL);
        if (!n) return NULL;
        n->name = name;
        n->is_cq = is_cq;
        n->weight = 1;
        n->cq = -1;
        n->idx = q->n_nodes;
        v[q->n_nodes++] = n;
        return n;
}

static qnode *cohort_node(dp_queue *q, const char *name) {
        for (size_t i = 0; i < q->n_nodes; i++)
                if (!q->nodes[i]->is_cq && streq(q->nodes[i]->name, name)) return q->nodes[i];
        return node_new(q, name, false);
}

static int link_child(qnode *child, qnode *parent) {
        qnode **v = realloc(parent->kids, (parent->n_kids + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        parent->kids = v;
        v[parent->n_kids++] = child;
        child->parent = parent;
        return 0;
}

/* Kueue's updateCohortResourceNode, from a root down. */
static void accumulate(dp_queue *q, qnode *n) {
        for (size_t f = 0; f < q->n_fr; f++)
                n->q[f].subtree = n->q[f].nominal;
        for (size_t k = 0; k < n->n_kids; k++) {
                accumulate(q, n->kids[k]);
                for (size_t f = 0; f < q->n_fr; f++)
                        n->q[f].subtree =
                                sat_add(n->q[f].subtree, sat_sub(n->kids[k]->q[f].subtree, local_quota(n->kids[k], f)));
        }
}

static int check_cycle(qnode *n, dp_error *err) {
        if (n->walk == 2) return 0;
        if (n->walk == 1)
                return dp_error_set(err, -EINVAL, "Cohort %s: spec.parentName: the cohorts' parents form a cycle",
                                    n->name);
        n->walk = 1;
        int r = n->parent ? check_cycle(n->parent, err) : 0;
        n->walk = 2;
        return r;
}

static int cohort_objects(dp_queue *q, dp_error *err) {
        for (size_t i = 0; i < q->n_owned; i++) {
                if (dp_queue_kind(q->owned[i]) != DP_KQ_COHORT) continue;
                const dp_kq_cohort *co = (const dp_kq_cohort *)q->owned[i].ext;
                qnode *n = cohort_node(q, co->x.meta.name);
                if (!n) return -ENOMEM;
                fill_quotas(q, n, co->groups, co->n_groups);
                if (co->has_weight) n->weight = dp_quantity_as_double(&co->weight);
                if (!co->parent) continue;
                qnode *p = cohort_node(q, co->parent);
                if (!p || link_child(n, p) < 0) return -ENOMEM;
        }
        for (size_t i = 0; i < q->n_nodes; i++) {
                int r = check_cycle(q->nodes[i], err);
                if (r < 0) return r;
        }
        return 0;
}

int q_build_tree(dp_queue *q, dp_error *err) {
        for (size_t i = 0; i < q->n_owned; i++) {
                dp_kq_kind k = dp_queue_kind(q->owned[i]);
                int r = 0;
                if (k == DP_KQ_CLUSTER_QUEUE) {
                        const dp_cluster_queue *cq = (const dp_cluster_queue *)q->owned[i].ext;
                        r = groups_frs(q, cq->groups, cq->n_groups);
                } else if (k == DP_KQ_COHORT) {
                        const dp_kq_cohort *co = (const dp_kq_cohort *)q->owned[i].ext;
                        r = groups_frs(q, co->groups, co->n_groups);
                }
                if (r < 0) return dp_error_set(err, r, "out of memory");
        }
        int r = cohort_objects(q, err);
        if (r < 0) return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : r;
        for (size_t i = 0; i < q->n_cqs; i++) {
                qnode *n = node_new(q, q->cqs[i].cq->x.meta.name, true);
                if (!n) return dp_error_set(err, -ENOMEM, "out of memory");
                q->cqs[i].node = n;
                n->cq = (ssize_t)i;
                fill_quotas(q, n, q->cqs[i].cq->groups, q->cqs[i].cq->n_groups);
                if (q->cqs[i].cq->has_weight) n->weight = dp_quantity_as_double(&q->cqs[i].cq->weight);
                qnode *p = q->cqs[i].cq->cohort && q->cqs[i].cq->cohort[0] ? cohort_node(q, q->cqs[i].cq->cohort) : NULL;
                if (q->cqs[i].cq->cohort && q->cqs[i].cq->cohort[0] && (!p || link_child(n, p) < 0))
                        return dp_error_set(err, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < q->n_nodes; i++)
                if (!q->nodes[i]->parent) accumulate(q, q->nodes[i]);
        return index_groups(q) < 0 ? dp_error_set(err, -ENOMEM, "out of memory") : 0;
}

/* ---- the per-ClusterQueue tables of the flavor assigner ---- */

static int index_group(dp_queue *q, const dp_kq_resource_group *g, qgroup *out) {
        out->fr = calloc(g->n_flavors * g->n_covered + 1, sizeof(*out->fr));
        out->flavor = calloc(g->n_flavors + 1, sizeof(*out->flavor));
        if (!out->fr || !out->flavor) return -ENOMEM;
        for (size_t f = 0; f < g->n_flavors; f++) {
                out->flavor[f] = q_index_get(q, "F\x1f%s", g->flavors[f].name);
                for (size_t r = 0; r < g->n_covered; r++)
                        out->fr[f * g->n_covered + r] =
                                r < g->flavors[f].n_resources
                                        ? q_fr_find(q, g->flavors[f].name, g->flavors[f].resources[r].name)
                                        : -1;
        }
        return 0;
}

static int index_groups(dp_queue *q) {
        for (size_t i = 0; i < q->n_cqs; i++) {
                qcq *c = &q->cqs[i];
                if (!(c->groups = calloc(c->cq->n_groups + 1, sizeof(*c->groups)))) return -ENOMEM;
                for (size_t g = 0; g < c->cq->n_groups; g++)
                        if (index_group(q, &c->cq->groups[g], &c->groups[g]) < 0) return -ENOMEM;
        }
        return 0;
}

void q_groups_free(qcq *c) {
        for (size_t g = 0; c->groups && g < c->cq->n_groups; g++) {
                free(c->groups[g].fr);
                free(c->groups[g].flavor);
        }
        free(c->groups);
        c->groups = NULL;
}
