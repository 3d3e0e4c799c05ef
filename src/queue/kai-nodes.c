/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-nodes.c — KAI's allocation onto nodes, as its admission needs it: a
 * pod fits a node that passes the pod's predicates (the node filter the
 * caller gives: in simulate, the kube-scheduler engine's cordon, taints,
 * node selector and required node affinity) and has the pod's cpu, memory
 * and GPUs free (allocatable less the requests of the pods bound there and
 * of those admission placed); a gang's pods are placed all together or not
 * at all. Nodes are taken first fit in input order (KAI scores them, binpack
 * by default: the same yes or no for one pod, not always the same node).
 * What is free is kept in a max tree over the nodes, per resource, so that
 * a pod that fits nowhere costs a walk down the tree, not one of every node.
 */
#include <math.h>

#include "base/hashmap.h"
#include "queue/kai-internal.h"

void dp_kai_set_node_filter(dp_kai *k, dp_kai_node_filter f) {
        if (k) k->node_filter = f;
}

static double *tree_at(const dp_kai *k, size_t t) { return &k->fit_tree[t * DP_KAI_NRES]; }

static void tree_pull(dp_kai *k, size_t t) {
        double *m = tree_at(k, t), *a = tree_at(k, 2 * t), *b = tree_at(k, 2 * t + 1);
        for (int r = 0; r < DP_KAI_NRES; r++)
                m[r] = fmax(a[r], b[r]);
}

/* Node i's free resources changed by sign × v. */
static void node_add(dp_kai *k, size_t i, const double v[DP_KAI_NRES], int sign) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                k->nodes[i].free[r] += sign * v[r];
        size_t t = k->fit_size + i;
        memcpy(tree_at(k, t), k->nodes[i].free, sizeof(k->nodes[i].free));
        for (t /= 2; t >= 1; t /= 2)
                tree_pull(k, t);
}

const double *kai_most_free(const dp_kai *k) { return tree_at(k, 1); }

static int build_tree(dp_kai *k) {
        k->fit_size = 1;
        while (k->fit_size < k->n_nodes)
                k->fit_size *= 2;
        if (!(k->fit_tree = calloc(2 * k->fit_size * DP_KAI_NRES, sizeof(double)))) return -ENOMEM;
        for (size_t i = 0; i < k->fit_size; i++)
                for (int r = 0; r < DP_KAI_NRES; r++) /* no node: room for nothing (requests of 0 check i) */
                        tree_at(k, k->fit_size + i)[r] = i < k->n_nodes ? k->nodes[i].free[r] : -1;
        for (size_t t = k->fit_size - 1; t >= 1; t--)
                tree_pull(k, t);
        return 0;
}

/* The bound pods' requests leave their nodes (pods of any scheduler:
 * KAI's and the others'). */
static int bind_pods(dp_kai *k, const dp_object_list *l) {
        _cleanup_(dp_hashmap_freep) dp_hashmap *by_name = dp_hashmap_new();
        if (!by_name) return -ENOMEM;
        for (size_t i = 0; i < k->n_nodes; i++)
                if (k->nodes[i].node->meta.name &&
                    dp_hashmap_replace(by_name, k->nodes[i].node->meta.name, (void *)(uintptr_t)(i + 1)) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                const dp_pod *p = l->items[i].hdr->kind == DP_KIND_POD ? l->items[i].pod : NULL;
                uintptr_t at = p && p->node_name ? (uintptr_t)dp_hashmap_get(by_name, p->node_name) : 0;
                if (!at) continue;
                double v[DP_KAI_NRES];
                kai_pod_request(p, v);
                for (int r = 0; r < DP_KAI_NRES; r++)
                        k->nodes[at - 1].free[r] -= v[r];
        }
        for (size_t i = 0; i < k->n_pods; i++) {
                dp_kai_pod *kp = &k->pods[i];
                uintptr_t at = kp->running ? (uintptr_t)dp_hashmap_get(by_name, kp->pod->node_name) : 0;
                kp->node = at ? at - 1 : KAI_NONE;
        }
        return 0;
}

int kai_nodes_init(dp_kai *k, const dp_object_list *l, dp_error *err) {
        size_t n = dp_object_list_count(l, DP_KIND_NODE);
        if (!(k->nodes = calloc(n + 1, sizeof(*k->nodes)))) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_NODE) continue;
                dp_kai_node *nd = &k->nodes[k->n_nodes++];
                nd->node = l->items[i].node;
                kai_node_allocatable(nd->node, nd->free);
        }
        for (size_t i = k->n_pods; i-- > 0;) { /* each group's pods chained in input order */
                dp_kai_group *g = &k->g[k->pods[i].group];
                k->pods[i].next = g->first_pod;
                g->first_pod = i;
        }
        if (bind_pods(k, l) < 0 || build_tree(k) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

static bool room(const double have[DP_KAI_NRES], const double want[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (want[r] > 0 && !kai_le(want[r], have[r])) return false;
        return true;
}

/* The first node under tree node t where p fits, -1 none. */
static ssize_t first_fit(const dp_kai *k, size_t t, const dp_kai_pod *p) {
        if (!room(tree_at(k, t), p->req)) return -1;
        if (t >= k->fit_size) {
                size_t i = t - k->fit_size;
                bool ok = i < k->n_nodes && (!k->node_filter || k->node_filter(p->pod, k->nodes[i].node));
                return ok ? (ssize_t)i : -1;
        }
        ssize_t i = first_fit(k, 2 * t, p);
        return i >= 0 ? i : first_fit(k, 2 * t + 1, p);
}

size_t kai_place(dp_kai *k, const dp_kai_group *g, size_t n, bool commit, size_t *ret_failed) {
        size_t placed = 0;
        for (size_t i = g->first_pod; i != KAI_NONE && placed < n; i = k->pods[i].next) {
                dp_kai_pod *p = &k->pods[i];
                if (p->running || p->node != KAI_NONE) continue; /* bound, or placed before */
                ssize_t at = first_fit(k, 1, p);
                if (at < 0) {
                        if (ret_failed) *ret_failed = i;
                        break;
                }
                node_add(k, (size_t)at, p->req, -1);
                p->node = (size_t)at;
                p->trial = true;
                placed++;
        }
        bool ok = placed == n;
        for (size_t i = g->first_pod; i != KAI_NONE; i = k->pods[i].next) {
                dp_kai_pod *p = &k->pods[i];
                if (!p->trial) continue;
                p->trial = false;
                if (ok && commit) continue;
                node_add(k, p->node, p->req, +1);
                p->node = KAI_NONE;
        }
        return placed;
}

void kai_nodes_hold(dp_kai *k, const dp_kai_group *g, int sign) {
        for (size_t i = g->first_pod; i != KAI_NONE; i = k->pods[i].next)
                if (k->pods[i].node != KAI_NONE)
                        node_add(k, k->pods[i].node, k->pods[i].req, -sign); /* leaving frees */
}

void kai_nodes_unplace(dp_kai *k, const dp_kai_group *g) {
        for (size_t i = g->first_pod; i != KAI_NONE; i = k->pods[i].next)
                if (!k->pods[i].running) k->pods[i].node = KAI_NONE;
}
