/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-internal.h — what queue/kai*.c share: the queue tree's accounting and
 * the comparisons KAI's proportion plugin makes (resource_share, queue_order,
 * capacity_policy, reclaimable).
 */
#pragma once

#include "queue/kai.h"

#define DP_KAI_GPU_RESOURCE "nvidia.com/gpu"
#define DP_KAI_NON_PREEMPTIBLE_PRIORITY 100 /* priority >= 100: non-preemptible (KAI:docs/priority) */
#define KAI_NONE ((size_t)-1)

/* KAI compares quantities with a small tolerance (LessOrEqualWithTolerance). */
static inline bool kai_le(double a, double b) { return a <= b + 1e-9; }

/* One pod's request and one node's allocatable in KAI's units (kai.c). */
void kai_pod_request(const dp_pod *p, double v[DP_KAI_NRES]);
void kai_node_allocatable(const dp_node *n, double v[DP_KAI_NRES]);

/* kai-nodes.c: the Node objects of l with what the bound pods leave free,
 * the groups' pods chained; 0, -ENOMEM. */
int kai_nodes_init(dp_kai *k, const dp_object_list *l, dp_error *err);
/* The next n pending pods of g (input order) placed on nodes one after the
 * other, first fit, up to the first that fits no node (*ret_failed, its
 * index in k->pods; may be NULL): how many were placed. They stay placed
 * when commit and all n were; else they are taken off again. Placing the
 * first m of them always places them where placing more did. */
size_t kai_place(dp_kai *k, const dp_kai_group *g, size_t n, bool commit, size_t *ret_failed);
/* g's pods on nodes (running, or placed in this cycle) leave them (sign -1:
 * an eviction, or a tentative one) or take them again (+1). */
void kai_nodes_hold(dp_kai *k, const dp_kai_group *g, int sign);
/* g's pods placed in this cycle are no longer (after kai_nodes_hold -1). */
void kai_nodes_unplace(dp_kai *k, const dp_kai_group *g);
/* Per resource, the most free on one node. */
const double *kai_most_free(const dp_kai *k);

/* Requests and allocations of every queue from its groups, summed up the
 * tree (kai.c). */
void kai_account(dp_kai *k);
/* n pending pods of g start (admitted) or g's running pods stop (evicted):
 * the queues up the tree and the cluster's use follow. sign +1 / -1. */
void kai_charge(dp_kai *k, const dp_kai_group *g, const double v[DP_KAI_NRES], int sign);

/* resource_share.go: min(limit, request); max(deserved, fairShare) under the limit. */
double kai_requestable(const dp_kai_queue *q, int r);
double kai_allocatable(const dp_kai_queue *q, int r);

/* queue_order.go GetQueueOrderResult for two leaf queues with their next
 * jobs: < 0 when a goes first. Compared at the first level where their
 * paths from the top part (siblings under one parent). */
int kai_queue_order(const dp_kai *k, size_t a, const dp_kai_group *ja, size_t b, const dp_kai_group *jb);
/* Pods of g still pending, and how many must start together first (the
 * gang's minMember less those running, at least one). */
static inline size_t kai_n_pending(const dp_kai_group *g) { return g->n_pods - g->n_running - g->started; }
static inline size_t kai_first_count(const dp_kai_group *g) {
        size_t need = (size_t)g->min_member > g->n_running ? (size_t)g->min_member - g->n_running : 1;
        return DP_MIN(DP_MAX(need, (size_t)1), kai_n_pending(g));
}

/* The job order inside a queue: higher priority, then earlier. */
bool kai_job_before(const dp_kai_group *a, const dp_kai_group *b);

/* capacity_policy: OverLimit, then NonPreemptibleOverQuota, up the tree
 * from g's queue, for the request v; the reason and KAI's message set on g
 * (only when set_reason). true when it passes. */
bool kai_capacity_ok(dp_kai *k, dp_kai_group *g, const double v[DP_KAI_NRES], bool set_reason);
int kai_set_reason(dp_kai_group *g, const char *reason, const char *fmt, ...) _printf_(3, 4);

/* kai-admit.c: the request of n pods of g; whether g's next n pending
 * pods can be placed on the nodes as they are now; n pods of g start (and
 * are placed: kai_fits said so); g's running pods leave their nodes and
 * queues (sign -1) or take them again (+1); g's running pods are evicted. */
void kai_need(const dp_kai_group *g, size_t n, double v[DP_KAI_NRES]);
bool kai_fits(dp_kai *k, const dp_kai_group *g, size_t n);
void kai_start(dp_kai *k, dp_kai_group *g, size_t n);
void kai_hold(dp_kai *k, dp_kai_group *g, int sign);
/* What g holds: its running pods' requests and those of the pods it started. */
void kai_held(const dp_kai_group *g, double v[DP_KAI_NRES]);
void kai_evict(dp_kai *k, dp_kai_group *g);
bool kai_in_leaf(const dp_kai *k, const dp_kai_group *g);
/* Running preemptible groups other than by that keep() accepts, of by's
 * queue (own_queue) or of the other leaves, in victim order (the lower queue
 * priority first, then the lower job priority, then the newest): indices
 * into out (n_g). */
size_t kai_victims(const dp_kai *k, const dp_kai_group *by, bool own_queue,
                   bool (*keep)(const dp_kai *, const dp_kai_group *, const dp_kai_group *), size_t *out);
/* The actions after Allocate, for one waiting job (kai-reclaim.c, kai-admit.c). */
int kai_try_reclaim(dp_kai *k, dp_kai_group *g);
int kai_try_preempt(dp_kai *k, dp_kai_group *g);
