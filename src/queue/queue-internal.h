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
        size_t idx;    /* its index in dp_queue.nodes */
        uint64_t ustamp; /* bumped at every change of its usage by q_add_usage / q_remove_usage */
        int walk;  /* cycle check: 1 on the path, 2 done */
        /* a root's or a ClusterQueue's pool: every admitted workload of the
         * ClusterQueues under it, in candidate order (preempt.c pool_of), made
         * again when read after q_state_changed of one of them */
        struct qpooled *pool;
        size_t n_pool, cap_pool;
        bool pool_built;
} qnode;

/* One resource group of a ClusterQueue, indexed once (quota.c
 * q_build_tree) so the flavor assigner formats no key: the fr of flavor
 * f's covered resource r at fr[f * n_covered + r] (each flavor lists the
 * covered resources in their order), and each flavor's object (NULL: none
 * of that name). */
typedef struct qgroup {
        ssize_t *fr;
        const dp_resource_flavor **flavor;
} qgroup;

typedef struct qcq {
        qnode *node;
        qgroup *groups; /* cq->n_groups entries */
        const dp_cluster_queue *cq;
        const char *inactive; /* why it is inactive, NULL when active */
        size_t *wl;           /* its workloads in queue order */
        size_t n_wl;
        size_t next; /* wl[next] is the first that may still be a head */
        bool blocked; /* StrictFIFO: its head can never be admitted */
        size_t sticky; /* workload + 1 that issued preemptions last cycle: the head until tried again */
        /* its admitted workloads, in queue order, for the preemption search
         * (preempt.c adm_of): made again when read after q_state_changed */
        size_t *adm;
        size_t n_adm, cap_adm;
        bool adm_built;
        /* preempt.c's scratch for one search: the subtree its candidates
         * were found under (dp_queue.pmark says which kind they are) */
        const qnode *plca;
        char *inactive_msg; /* Kueue's Active=False message when its admission checks make it inactive (checks.c) */
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
        struct qdriver *drivers; /* dra-sources.c: the ResourceSlices Kueue reads, per driver */
        size_t n_drivers;
        size_t cycles;
        bool churning; /* a preemption loop was proved (loop.c): admission stopped */
        struct qafs *afs; /* Admission Fair Sharing (afs.c), NULL when off */
        const dp_queue_options *opts; /* borrowed: Configuration and what-if, NULL none */
        int64_t *usage0; /* every node's usage before the first cycle (what the input admitted) */
        bool over_time;  /* dp_queue_set_over_time */
        bool recount;    /* a workload finished: usage counted again before the next cycle */
        struct qtas *tas; /* Topology-Aware Scheduling (queue/tas.h), NULL without a TAS flavor */
        int64_t now_ms;  /* dp_queue_set_time: the simulation's time, for history.c */
        struct qhistory *history; /* history.c, NULL until the first cycle */
        uint8_t *pmark; /* preempt.c's scratch, per ClusterQueue: the kind of its candidates in one search */
        size_t n_pmarked; /* how many are marked */
        struct qsharememo *share_memo; /* preempt.c's fair-sharing search: shares per node (dp_queue.nodes) */
        size_t n_share_memo;
        struct qwalk *walk; /* preempt.c's fair-sharing search: the cohort walk's heaps */
        uint64_t search; /* the search they were computed in */
};

/* A workload's state is about to change (or has): its ClusterQueue's list
 * of admitted workloads is made again when next read (preempt.c). Every
 * assignment of dp_queue_workload.state goes with one; test builds check
 * the lists against a scan. */
static inline void q_state_changed(dp_queue *q, const dp_queue_workload *w) {
        if (!w->cluster_queue || w->cq >= q->n_cqs) return;
        q->cqs[w->cq].adm_built = false;
        for (qnode *r = q->cqs[w->cq].node; r; r = r->parent)
                if (!r->parent || r->is_cq) r->pool_built = false;
}

/* ---- checks.c: admission checks. q_checks_cluster_queue: a ClusterQueue
 * whose checks are missing or inactive (or break MultiKueue's rules) is
 * inactive, c->inactive = Kueue's reason, c->inactive_msg its message.
 * q_checks_reserved: w's quota was just reserved: its checks not Ready go
 * into w->checks_pending. q_checks_rejected: an input Workload with a
 * Rejected check, Kueue's deactivation message (NULL: none). -ENOMEM or 0. ---- */
int q_checks_cluster_queue(dp_queue *q, qcq *c);
int q_checks_reserved(dp_queue *q, size_t w);
const char *q_checks_rejected(const dp_kq_workload *kw, char *buf, size_t size);
/* --set-check names an AdmissionCheck of the input: else -EINVAL naming the flag. */
int q_checks_whatif(const dp_queue *q, dp_error *err);
/* explain's lines for a workload QuotaReserved on its checks (none for
 * another). -ENOMEM or 0. */
int q_checks_explain(const dp_queue *q, const dp_queue_workload *w, dp_strbuf *out);

/* ---- queue.c: back to before the first cycle (usage0, every queued
 * workload pending again but those Finished), for explain's trials ---- */
int q_reset_admission(dp_queue *q); /* -ENOMEM or 0 */

/* ---- index.c: lookups by name; keys "F\x1fflavor" (ResourceFlavor),
 * "P\x1fname" (WorkloadPriorityClass), "L\x1fns\x1fname" (LocalQueue),
 * "O\x1fns\x1fname" (Workload object), "C\x1fname" (ClusterQueue index + 1),
 * "R\x1fflavor\x1fresource" (fr + 1), "W\x1fkind\x1fns\x1fname" (workload + 1),
 * "A\x1fname" (AdmissionCheck);
 * and the input's Namespaces "N\x1fname", PriorityClasses "K\x1fname", DeviceClasses "D\x1fname"
 * and "E\x1fextendedResourceName"
 * ("K\x1f" the global default), looked up only while dp_queue_new runs
 * (they point into the input list) ---- */
int q_index_put(dp_queue *q, void *value, const char *fmt, ...) _printf_(3, 4);
void *q_index_get(const dp_queue *q, const char *fmt, ...) _printf_(2, 3);
void q_index_free(dp_queue *q);
int q_index_objects(dp_queue *q);
int q_index_input(dp_queue *q, const dp_object_list *l);
/* dra-sources.c: the input's DeviceClasses by name ("D\x1fname") and, for
 * the extended-resource path, the one Kubernetes takes for an
 * extendedResourceName ("E\x1fname"). */
int q_index_device_classes(dp_queue *q, const dp_object_list *l);
void q_drivers_free(dp_queue *q);

/* ---- history.c: usage over time (asWritten.queues.usageOverTime). The
 * hooks: a sample after each cycle and after finished workloads' quota is
 * counted again; an event where a workload is admitted, finishes or is
 * evicted; where a proved preemption loop stopped admission. 0 or -ENOMEM. ---- */
int q_history_sample(dp_queue *q);
/* Admission stopped on a proved preemption loop (loop.c); w was preempted most. */
int q_history_churn(dp_queue *q, size_t w);
int q_history_admitted(dp_queue *q, size_t w);
int q_history_finished(dp_queue *q, size_t w);
int q_history_preempted(dp_queue *q, size_t w, size_t by, const char *reason);
void q_history_free(dp_queue *q);
/* NULL when no history was made (or -ENOMEM). */
dp_doc_node *q_history_encode(dp_doc_set *s, const dp_queue *q);

/* ---- quota.c ---- */
/* The fr index of (flavor, resource), or -1. */
ssize_t q_fr_find(const dp_queue *q, const char *flavor, const char *resource);
/* The tree, then every ClusterQueue's qgroup tables. */
int q_build_tree(dp_queue *q, dp_error *err);
void q_groups_free(qcq *c);
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
/* One pod's request of a resource in those units, as the API computes it
 * (containers summed, init containers and sidecars, overhead on top, a
 * missing request taken from its limit); TAS, Volcano and KAI use it too. */
int64_t q_pod_value(const dp_pod *p, const char *name);
/* Add value to the request named name (a new one when not there, unsorted). */
int q_request_add(dp_queue_request **v, size_t *n, const char *name, int64_t value);

/* ---- dra.c: the quota Kueue charges for pod set ps_index's
 * ResourceClaimTemplates, added to its requests (unsorted); or
 * w->dra_message when Kueue refuses them, or w->note when they go uncounted
 * (no Configuration). 0 or -ENOMEM. ---- */
void q_requests_free(dp_queue_request *v, size_t n);
/* queue/transform.c: the Configuration's resource transformations applied
 * to a pod set's per-pod requests (before DRA charges and exclusions). */
int q_transform_requests(const dp_queue *q, dp_queue_podset *ps);
int q_dra_requests(const dp_queue *q, const dp_object_list *l, dp_queue_workload *w, size_t ps_index);
/* queue/dra-sources.c: one Exactly request of a class whose mappings have
 * counter or capacity sources, charged per quota resource into (out,
 * n_out): 1 when so charged (not by the count then), 0 when the class has
 * no such source; Kueue's message in *ret_msg when it refuses. -ENOMEM. */
int q_dra_source_charge(const dp_queue *q, const dp_device_request_spec *e, size_t ps,
                        size_t claim, size_t req, dp_queue_request **out, size_t *n_out, char **ret_msg);
/* The extended-resource path: pod set ps_index's extended resources a
 * DeviceClass backs, checked and charged under the class's mapping. */
int q_dra_extended(const dp_queue *q, dp_queue_workload *w, size_t ps_index);

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
        int32_t *counts;    /* per pod set: the counts assigned when partial admission cut them, NULL: full */
} qassign;

int q_assign(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *ret);
/* The same for the given counts per pod set (NULL: the full counts). */
int q_assign_counts(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const int32_t *counts, qassign *ret);

/* ---- jobset.c: the Jobs of every JobSet in l appended to it (those the
 * list does not hold yet), suspended as the JobSet is (apply.c then runs or
 * holds them as their workload says). 0, -ENOMEM, -EINVAL (a template the
 * Job decoder refuses, with its message). ---- */
struct dp_jobset;
struct dp_jobset_rjob;
int q_jobset_jobs(dp_object_list *l, dp_error *err);
/* <jobset>-<replicatedJob>-<index>, as the JobSet controller names its Jobs. */
void q_jobset_job_name(const struct dp_jobset *js, const struct dp_jobset_rjob *rj, size_t index, char *buf,
                       size_t size);

/* ---- workloads.c, shared with podgroup.c ---- */
dp_queue_workload *q_new_workload(dp_queue *q, const char *kind, const dp_object_meta *m, const char *queue);
int q_add_podset(dp_queue *q, const dp_object_list *l, dp_queue_workload *w, const char *name, int32_t count,
                 const dp_pod *tmpl);
int32_t q_priority_of(const dp_queue *q, const dp_object_meta *m, const dp_pod *tmpl, char **ret_note);

/* ---- podgroup.c: Kueue's pod groups (plain Pods labelled
 * kueue.x-k8s.io/pod-group-name): one workload per group once
 * kueue.x-k8s.io/pod-group-total-count of its pods exist, its pod sets the
 * pods' roles; each member pod indexed ("W\x1fPod\x1fns\x1fpod") to it.
 * A group still short of pods has no workload (its pods stay gated).
 * -EINVAL for a total count Kueue's webhook refuses. ---- */
#define DP_KUEUE_POD_GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define DP_KUEUE_POD_GROUP_TOTAL_COUNT "kueue.x-k8s.io/pod-group-total-count"
#define DP_KUEUE_ROLE_HASH "kueue.x-k8s.io/role-hash"
int q_pod_groups(dp_queue *q, const dp_object_list *l, dp_error *err);
/* One warning in l per group short of pods (dp_queue_warn_input). */
int q_pod_group_warnings(dp_object_list *l, dp_error *err);
/* The pod's role: the pod set it belongs to in its group's workload. */
void q_pod_role(const dp_pod *p, char buf[static 64]);
/* Is o a Pod of a Kueue pod group (queue and group labels, no owner)? */
bool q_is_group_pod(dp_object o);

/* ---- partial.c: Kueue's PartialAdmission (on by default) ---- */
/* a, the full assignment, did not fit: when w may be admitted with fewer
 * pods (a pod set's min_count) and the full assignment has no preemption
 * targets, the pod-set reducer's largest counts that fit (or preempt with
 * targets) replace it (a->counts set). 0 or -ENOMEM. */
int q_partial(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *a);
/* Kueue's PodSetReducer.Search: n pod sets of full counts, each at least
 * min (min == full: fixed); the largest counts, cut together in proportion
 * to what each may give, for which fits says *ret_ok. 1 found (ret_counts
 * set), 0 none (no pod set may shrink, or not even the minimum fits), or
 * fits' negative error. */
typedef int (*q_fits_fn)(const int32_t *counts, void *userdata, bool *ret_ok);
int q_podset_reduce(const int32_t *full, const int32_t *min, size_t n, q_fits_fn fits, void *userdata,
                    int32_t *ret_counts);
/* At admission: each pod set's admitted_count from the assignment. */
void q_partial_admitted(dp_queue_workload *w, const qassign *a);
void q_assign_done(qassign *a);

/* ---- preempt.c: Kueue's classical preemption (pkg/scheduler/preemption) ---- */

/* The quota an admitted workload holds, per fr (what eviction gives back). */
typedef struct qheld {
        qusage *v;
        size_t n;
} qheld;

int q_held_add(dp_queue *q, size_t w, size_t fr, int64_t v);
void q_held_free(dp_queue *q);
/* the preemption search's scratch (dp_queue.pmark, share_memo, walk) */
void q_preempt_free(dp_queue *q);

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
/* CandidatesOrdering, for a preemptor in ClusterQueue cq: < 0 when
 * workload a goes before b (other ClusterQueues first, lower priority, most
 * recently admitted; input order instead of Kueue's UID). */
int q_cand_order(const dp_queue *q, size_t cq, size_t a, size_t b);
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

/* ---- decode.c: the preemption policies' values, "Never" first, each
 * allowing more than the one before ---- */
extern const char *const q_within_values[];  /* withinClusterQueue */
extern const char *const q_reclaim_values[]; /* reclaimWithinCohort */
extern const char *const q_borrow_values[];  /* borrowWithinCohort.policy */

/* ---- explain.c, explain-preempt.c, explain-nodes.c ---- */
#define EXPLAIN_TRIALS 8
/* The whole input admitted again from the start (q_reset_admission: the
 * workloads marked Finished stay out): 1 when workload i is admitted, 0 when
 * not, -ENOMEM. */
int q_explain_readmit(dp_queue *q, size_t i);
/* --set-preemption applied to the ClusterQueues (dp_queue_new_opts): -EINVAL
 * naming the flag for a ClusterQueue not in the input or a policy Kueue's
 * webhook refuses (borrowWithinCohort without reclaimWithinCohort). */
int q_apply_set_preemption(dp_queue *q, dp_error *err);
/* Why workload i was preempted: by whom, the reason, the rule that made it
 * a candidate (nothing when it never was). */
void q_explain_preempted(const dp_queue *q, size_t i, dp_strbuf *out);
/* What to preempt for pending workload i: the --set-preemption changes of
 * its ClusterQueue under which Kueue preempts for it and the workloads to
 * delete by hand, each checked by trials; q is left as it was settled. */
int q_explain_preempt(dp_queue *q, size_t i, dp_strbuf *out);
/* What places admitted workload i's Pending pods: --add-nodes per flavor it
 * got, checked by the simulator's trial. */
int q_explain_nodes(dp_queue *q, size_t i, dp_queue_place_trial trial, void *userdata, dp_strbuf *out);

/* ---- the job integrations (integrations.c); workloads.c and apply.c lend
 * it their steps (q_new_workload, q_add_podset, q_priority_of above) and: a
 * pod given pod set ps's flavors, Kueue's gate */
int q_inject_podset(const dp_queue *q, const dp_queue_workload *w, size_t ps, dp_pod *p);
int q_gate_pod(dp_pod *p);
/* The label kueue.x-k8s.io/podset (Kueue's on a started pod set's template)
 * and the annotation kueue.x-k8s.io/role-hash (its webhook's on the pods of
 * a LeaderWorkerSet or StatefulSet), each naming the pod set; kept when
 * there. 0 or -ENOMEM. */
#define DP_KUEUE_PODSET_LABEL "kueue.x-k8s.io/podset"
int q_label_podset(dp_pod *p, const char *podset);
int q_annotate_role(dp_pod *p, const char *podset);
/* The workloads of one input object of an integration (none for others). */
int q_integration_workloads(dp_queue *q, const dp_object_list *l, dp_object o);
/* After admission: the pods of the integrations' workloads, appended to l. */
int q_integrations_stand_up(const dp_queue *q, dp_object_list *l, dp_error *err);

/* ---- loop.c: a preemption loop, proved by a recurring admission state ---- */

/* Brent's cycle finding over the states after cycles that evicted: the
 * state kept (after such a cycle number `at`), and the search's counters. */
typedef struct qloop {
        uint8_t *saved;
        size_t len, at, power, lam;
} qloop;

/* After a cycle that evicted: the admission state is compared with the one
 * kept; when they are equal, the cycles between repeat forever, so
 * q->churning is set and the most preempted workload gets a note saying so.
 * -ENOMEM or 0. */
int q_loop_check(dp_queue *q, qloop *l);
void q_loop_done(qloop *l);

/* ---- afs.c: Kueue's Admission Fair Sharing ---- */
typedef struct qafs qafs;
/* After the workloads are placed: on when the Configuration has
 * admissionFairSharing and the gate is on. -ENOMEM or 0. */
int q_afs_init(dp_queue *q);
void q_afs_free(dp_queue *q);
bool q_afs_on(const dp_queue *q, const qcq *c);
/* Workload w's LocalQueue usage (consumed + penalties, over its weight),
 * -1 when Admission Fair Sharing is off for it. */
double q_afs_usage(const dp_queue *q, size_t w);
/* The head of an Admission Fair Sharing ClusterQueue (sticky aside): the
 * lowest usage, ties in queue order; -1 none. */
ssize_t q_afs_head(dp_queue *q, qcq *c);
void q_afs_admitted(dp_queue *q, size_t w); /* adds w's entry penalty */
void q_afs_evicted(dp_queue *q, size_t w);  /* takes it back */
void q_afs_reset(dp_queue *q);              /* q_reset_admission: the simulation's penalties go */
/* Every LocalQueue's penalty (loop.c's state). */
const double *q_afs_penalties(const dp_queue *q, size_t *ret_n);
