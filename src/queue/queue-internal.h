/* SPDX-License-Identifier: Apache-2.0
 *
 * queue-internal.h — what the queue files share: the quota tree (quota.c),
 * flavor assignment (assign.c), the workloads (workloads.c) and the cycle
 * (admit.c).
 */
#pragma once

#include "base/hashmap.h"
#include "queue/queue.h"

/* A (flavor, resource) pair every quota speaks of, interned: its index
 * addresses each node's qquota array. The strings are the Kueue objects'. */
typedef struct qfr {
        const char *flavor, *resource;
} qfr;

/* One node's numbers for one flavor-resource, in Kueue's units. subtree
 * and usage follow Kueue's resourceNode: a ClusterQueue's subtree is its
 * nominal quota; a Cohort's is its own plus what each child lends up
 * (subtree minus the child's local quota); usage counts what children use
 * past their local quota. */
typedef struct qquota {
        int64_t nominal, borrowing_limit, lending_limit, subtree, usage;
        bool has_borrowing_limit, has_lending_limit;
} qquota;

typedef struct qnode {
        const char *name;
        bool is_cq;
        struct qnode *parent;
        struct qnode **kids;
        size_t n_kids;
        qquota *q; /* dp_queue.n_fr entries */
        double weight; /* fairSharing.weight, 1 when unset */
        ssize_t cq;    /* its index in dp_queue.cqs, -1 for a Cohort */
        int walk;  /* cycle check: 1 on the path, 2 done */
} qnode;

typedef struct qcq {
        qnode *node;
        const dp_cluster_queue *cq;
        const char *inactive; /* why it is inactive, NULL when active */
        size_t *wl;           /* its workloads in queue order */
        size_t n_wl;
        size_t next; /* wl[next] is the first that may still be a head */
        bool blocked; /* StrictFIFO: its head can never be admitted */
        size_t sticky; /* workload + 1 that issued preemptions last cycle: the head until tried again */
} qcq;

struct dp_queue {
        dp_object *owned; /* the Kueue objects taken from the list */
        size_t n_owned;
        qfr *fr;
        size_t n_fr;
        qnode **nodes; /* ClusterQueues' and Cohorts' (implicit ones too) */
        size_t n_nodes;
        qcq *cqs; /* sorted by name */
        size_t n_cqs;
        dp_queue_workload *wl;
        size_t n_wl;
        bool *set_aside; /* per workload: inadmissible until the cluster changes */
        bool *ns_ok;     /* per workload: its namespace matches its ClusterQueue's selector */
        struct qheld *held; /* per workload: the quota it holds (preempt.c), NULL until one is admitted */
        bool fair_sharing;  /* Kueue's Configuration fairSharing.enable (dp_queue_set_fair_sharing) */
        dp_hashmap *index; /* index.c */
        char **index_keys;
        size_t n_index_keys;
        size_t cycles;
        bool churning; /* a workload was preempted DP_QUEUE_MAX_PREEMPTED times: admission stops */
        const dp_queue_options *opts; /* borrowed: Configuration and what-if, NULL none */
        int64_t *usage0; /* every node's usage before the first cycle (what the input admitted) */
        bool over_time;  /* dp_queue_set_over_time */
        bool recount;    /* a workload finished: usage counted again before the next cycle */
        int64_t now_ms;  /* dp_queue_set_time: the simulation's time, for history.c */
        struct qhistory *history; /* history.c, NULL until the first cycle */
};

/* A workload preempted this many times in a static input means the cycles
 * would go on preempting (Kueue has no such bound; devplane stops and says so). */
#define DP_QUEUE_MAX_PREEMPTED 8

/* ---- queue.c: back to before the first cycle (usage0, every queued
 * workload pending again but those Finished), for explain's trials ---- */
int q_reset_admission(dp_queue *q); /* -ENOMEM or 0 */

/* ---- index.c: lookups by name; keys "F\x1fflavor" (ResourceFlavor),
 * "P\x1fname" (WorkloadPriorityClass), "L\x1fns\x1fname" (LocalQueue),
 * "O\x1fns\x1fname" (Workload object), "C\x1fname" (ClusterQueue index + 1),
 * "R\x1fflavor\x1fresource" (fr + 1), "W\x1fkind\x1fns\x1fname" (workload + 1);
 * and the input's Namespaces "N\x1fname" and PriorityClasses "K\x1fname"
 * ("K\x1f" the global default), looked up only while dp_queue_new runs
 * (they point into the input list) ---- */
int q_index_put(dp_queue *q, void *value, const char *fmt, ...) _printf_(3, 4);
void *q_index_get(const dp_queue *q, const char *fmt, ...) _printf_(2, 3);
void q_index_free(dp_queue *q);
int q_index_objects(dp_queue *q);
int q_index_input(dp_queue *q, const dp_object_list *l);

/* ---- history.c: usage over time (asWritten.queues.usageOverTime). The
 * hooks: a sample after each cycle and after finished workloads' quota is
 * counted again; an event where a workload is admitted, finishes or is
 * evicted (the churn stop is seen there). 0 or -ENOMEM. ---- */
int q_history_sample(dp_queue *q);
int q_history_admitted(dp_queue *q, size_t w);
int q_history_finished(dp_queue *q, size_t w);
int q_history_preempted(dp_queue *q, size_t w, size_t by, const char *reason);
void q_history_free(dp_queue *q);
/* NULL when no history was made (or -ENOMEM). */
dp_doc_node *q_history_encode(dp_doc_set *s, const dp_queue *q);

/* ---- quota.c ---- */
/* The fr index of (flavor, resource), or -1. */
ssize_t q_fr_find(const dp_queue *q, const char *flavor, const char *resource);
int q_build_tree(dp_queue *q, dp_error *err);
int64_t q_available(const qnode *n, size_t fr);
int64_t q_potential(const qnode *n, size_t fr);
void q_add_usage(qnode *n, size_t fr, int64_t v);
/* Kueue's removeUsage, the exact inverse of q_add_usage. */
void q_remove_usage(qnode *n, size_t fr, int64_t v);
/* Kueue's LocalAvailable: what stays below the lending limit, unused. */
int64_t q_local_available(const qnode *n, size_t fr);
/* Kueue's FindHeightOfLowestSubtreeThatFits: how far up val must borrow
 * (0: within the ClusterQueue) and whether that subtree is below the root. */
int q_borrow_height(const qnode *cq, size_t fr, int64_t val, bool *ret_below_root);
/* Every node's usage, saved and put back around a cycle's snapshot. */
int64_t *q_usage_save(const dp_queue *q);
void q_usage_restore(dp_queue *q, const int64_t *saved);

/* ---- units (workloads.c) ---- */
/* Kueue's resource value: cpu in millicores, the rest Quantity.Value(). */
int64_t q_value(const char *resource, const dp_quantity *v);
/* Kueue's ResourceQuantity(...).String() of a value in those units. */
void q_format(const char *resource, int64_t v, char *buf, size_t size);
int q_workloads(dp_queue *q, const dp_object_list *l, dp_error *err);
/* Add value to the request named name (a new one when not there, unsorted). */
int q_request_add(dp_queue_request **v, size_t *n, const char *name, int64_t value);

/* ---- dra.c: the quota Kueue charges for pod set ps_index's
 * ResourceClaimTemplates, added to its requests (unsorted); or
 * w->dra_message when Kueue refuses them, or w->note when they go uncounted
 * (no Configuration). 0 or -ENOMEM. ---- */
int q_dra_requests(const dp_queue *q, const dp_object_list *l, dp_queue_workload *w, size_t ps_index);

/* ---- assign.c ---- */
/* Kueue's preemptionMode, worst first: no candidates, preempt (a target in
 * the ClusterQueue) and reclaim (targets elsewhere only) are the
 * FlavorAssignmentMode Preempt. */
typedef enum { QM_NOFIT = 0, QM_NO_CANDIDATES, QM_PREEMPT, QM_RECLAIM, QM_FIT } qmode;
static inline bool q_mode_preempts(qmode m) { return m == QM_NO_CANDIDATES || m == QM_PREEMPT || m == QM_RECLAIM; }

typedef struct qusage {
        size_t fr;
        int64_t value;
        bool preempt; /* its flavor was assigned in a preemption mode (frsNeedPreemption) */
} qusage;

typedef struct qassign {
        qmode mode; /* representative: the worst of its pod sets */
        int borrowing;
        dp_strbuf message; /* Assignment.Message() */
        qusage *usage;     /* quota it takes, per fr */
        size_t n_usage;
        ssize_t *flavor_fr; /* per pod set, per request: the fr assigned, -1 none */
} qassign;

int q_assign(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *ret);
void q_assign_done(qassign *a);

/* ---- preempt.c: Kueue's classical preemption (pkg/scheduler/preemption) ---- */

/* The quota an admitted workload holds, per fr (what eviction gives back). */
typedef struct qheld {
        qusage *v;
        size_t n;
} qheld;

int q_held_add(dp_queue *q, size_t w, size_t fr, int64_t v);
void q_held_free(dp_queue *q);

/* One victim and the Preempted condition's reason (InClusterQueue...). */
typedef struct qtarget {
        size_t w;
        const char *reason;
} qtarget;

/* The preemption oracle (SimulatePreemption) for val of one fr: no
 * candidates, preempt or reclaim, and the borrowing height after the
 * preemptions. -ENOMEM or 0. */
int q_preempt_oracle(dp_queue *q, const qcq *cq, const dp_queue_workload *w, size_t fr, int64_t val, qmode *ret_mode,
                     int *ret_borrow);
/* GetTargets: the minimal set of admitted workloads whose eviction lets w's
 * assignment fit (none: *ret_n 0). *ret is the caller's to free. */
int q_preempt_targets(dp_queue *q, const qcq *cq, size_t w, const qassign *a, qtarget **ret, size_t *ret_n);
/* Does a fit in cq's quota once the targets (and others) are removed? */
bool q_fits_without(dp_queue *q, const qcq *cq, const qassign *a, const size_t *gone, size_t n_gone);
/* Evict w (preempted by p for reason in cycle): its quota goes back, it
 * queues again, and its cohort's set-aside workloads are tried again. */
int q_evict(dp_queue *q, size_t w, size_t p, const char *reason);

/* ---- fair.c: Kueue's fair sharing (dominant resource share, tournament) ---- */

/* One head of the cycle, as the tournament sees it. */
typedef struct qhead {
        size_t w;
        const qassign *a; /* NULL: no assignment (namespace mismatch) */
} qhead;

/* The head to process next among those not done (fairSharingIterator.pop),
 * or -1 when all are; -ENOMEM. Usage admitted so far in the cycle counts. */
ssize_t q_fair_next(dp_queue *q, const qhead *heads, size_t n, const bool *done);
/* A node's dominant resource share at its current usage (0 without a parent). */
typedef struct qshare {
        double ratio; /* unweighted, ×1000 */
        double weight;
        bool borrowing;
} qshare;
qshare q_share(const dp_queue *q, const qnode *n);
/* CompareDRS: < 0 when a is the fairer (lower) share. */
int q_share_cmp(qshare a, qshare b);
/* status.fairSharing.weightedShare: ceil(DRS / weight), INT64_MAX for a
 * node with weight 0 that borrows, 0 without a parent. */
int64_t q_weighted_share(const dp_queue *q, const qnode *n);
