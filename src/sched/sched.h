/* SPDX-License-Identifier: Apache-2.0
 *
 * sched.h — a scheduler over a dp_store, as kube-scheduler does it, for the
 * resources that matter for devices.
 *
 *   queue     pods without spec.nodeName (schedulerName unset, or the
 *             instance's name), ordered by priority (higher first), then the
 *             time they joined, then creationTimestamp, then arrival (store
 *             order). Gated pods and other schedulers' pods are recorded as
 *             Pending with the reason and never tried. A pod that does not
 *             fit waits with backoff (1 s doubling to 10 s by default) and is
 *             retried once the cluster changed in a way that can help (a pod
 *             or claim freed, a node or slice written) and its backoff ran
 *             out, or after 5 minutes anyway.
 *   filter    node.spec.unschedulable (unless tolerated); node taints
 *             (NoSchedule, NoExecute) against pod tolerations; nodeSelector
 *             and required node affinity; host ports (NodePorts);
 *             allocatable pods, cpu, memory and extended resources (container
 *             limits; a request must equal its limit) against allocatable
 *             minus what pods bound to the node hold, every insufficient one
 *             a reason (NodeResourcesFit); pod topology spread and
 *             inter-pod affinity (topology.h); DRA claims, by name or from
 *             a template, allocated by the structured allocator; extended
 *             resources backed by DRA (DeviceClass extendedResourceName or
 *             deviceclass.resource.kubernetes.io/<class>) on nodes that do not
 *             advertise the name through a device plugin.
 *   score     DEFAULT: kube-scheduler's default profile (score.h), the
 *             highest total wins, then node name. BINPACK/SPREAD/NONE: the
 *             firstAvailable subrequest indexes chosen (lower wins), then
 *             binpack (fullest node) or spread (emptiest), then node name.
 *   reserve   gang members (PodGroup minMember) are assumed one after the
 *             other; all are bound or none.
 *   bind      allocations are written to their claims (resourceVersion and
 *             device ledger checked by the store), then pod.spec.nodeName;
 *             a rejected write undoes the cycle's writes and requeues the pod.
 *
 * Time is given by the caller (milliseconds of simulated time): the
 * scheduler reads no clock. Two instances may share one store; each plans
 * from what it read and the store refuses stale writes (scenario 15).
 */
#pragma once

#include "alloc/adapter.h"
#include "sched/diagnosis.h"
#include "sched/store.h"

/* NONE: every feasible node scores the same, so the first in name order
 * wins (kube-scheduler with every Score plugin disabled).
 * DEFAULT: kube-scheduler 1.35's default profile (score.h), or the profile
 * given in dp_sched_config.profile; the default for Node-object clusters. */
typedef enum { DP_SCORE_BINPACK = 0, DP_SCORE_SPREAD, DP_SCORE_NONE, DP_SCORE_DEFAULT } dp_score_policy;

struct dp_score_profile;

typedef struct dp_sched_config {
        const char *name; /* schedulerName this instance serves; NULL: "default-scheduler" */
        dp_score_policy policy;
        const struct dp_score_profile *profile; /* DP_SCORE_DEFAULT: NULL is the default profile (copied) */
        int64_t backoff_initial_ms; /* 0: 1000 */
        int64_t backoff_max_ms;     /* 0: 10000 */
        /* Called after each pod is bound, before the next cycle (the node
         * agent acts at once, so the next cycle sees what it changed). A
         * negative return ends dp_sched_run with that error. */
        int (*on_bind)(void *userdata, const char *ns, const char *name, dp_error *err);
        /* Called after each attempt dp_sched_run makes (for progress; keep it
         * cheap). NULL: none. */
        void (*on_attempt)(void *userdata);
        void *userdata;
        dp_alloc_cluster_options alloc; /* feature gates for the allocator snapshot */
        /* queue, ports, defaults (kube-scheduler parity): schedule the pods
         * of every schedulerName as this instance's own (else they are
         * reported, "not scheduled by default-scheduler: ...") */
        bool all_schedulers;
        /* preemption (preempt.c): kube-scheduler's DefaultPreemption
         * PostFilter. A pod that fits no node and whose preemptionPolicy is
         * not Never deletes lower-priority pods on one node (PDBs, reprieve
         * and node choice as upstream) and is nominated there; its message
         * gets the PostFilter's words. Off: no PostFilter at all.
         * dra_preemption: the KEP-5690 what-if, devices held by
         * lower-priority pods count as freed by preempting them.
         * on_preempt deletes a victim (NULL: dp_sched_delete_pod); `by` is
         * the preemptor's "ns/name". A negative return ends the run. */
        bool preemption, dra_preemption;
        int (*on_preempt)(void *userdata, const char *ns, const char *name, const char *by, const char *node,
                          dp_error *err);
} dp_sched_config;

typedef enum {
        DP_POD_QUEUED = 0,    /* waiting for its first attempt */
        DP_POD_UNSCHEDULABLE, /* tried, did not fit: message says why */
        DP_POD_BOUND,
} dp_pod_sched_state;

typedef struct dp_sched_pod_info {
        dp_pod_sched_state state;
        char *node;    /* BOUND */
        char *message; /* UNSCHEDULABLE: "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, ..." */
        /* UNSCHEDULABLE by the filter (last attempt): verdict -> number of
         * nodes (arguments in dp_sched_strings); empty for a pod-level
         * message (a claim not created yet, a gang short of members...).
         * Nothing is kept per node: dp_sched_diagnose computes that. */
        dp_diag_hist reasons;
        unsigned attempts;
        int64_t bound_at_ms;
        /* preemption (preempt.c) */
        char *postfilter; /* UNSCHEDULABLE, preemption on: the PostFilter's words kube-scheduler
                           * appends ("no new claims to deallocate, preemption: 0/3 nodes are
                           * available: ..."); NULL for a pod-level message */
        char *nominated;  /* status.nominatedNodeName, from its last preemption */
        char *victims;    /* whom that preemption deleted there: "ns/a,ns/b" */
        int64_t preempted_at_ms;
        char *preempted_by; /* a victim: the preemptor ("ns/name"); the pod is gone */
} dp_sched_pod_info;

/* kube-scheduler's PodScheduled message: message, then the PostFilter's
 * words. A new string ("" for none); NULL on -ENOMEM. */
char *dp_sched_message(const dp_sched_pod_info *pi);

typedef struct dp_sched dp_sched;

int dp_sched_new(dp_store *store, const dp_sched_config *cfg, dp_sched **ret);
dp_sched *dp_sched_free(dp_sched *s);
DEFINE_FREEP(dp_sched, dp_sched_free)

/* Read pods from the store: new pending pods join the queue, deleted ones
 * leave it. Called by dp_sched_run; exposed for tests. */
int dp_sched_sync(dp_sched *s, int64_t now_ms);
/* Schedule every pod that may be tried at now_ms, best first, until none is
 * left. Returns the number of pods bound, or a negative errno for an error
 * that is not a pod's (err). A pod whose claims cannot be decided (a CEL run-time
 * error) is unschedulable with that message, not an error of the run. */
int dp_sched_run(dp_sched *s, int64_t now_ms, dp_error *err);
/* Earliest time a waiting pod becomes eligible again; -1 when none waits. */
int64_t dp_sched_next_retry(const dp_sched *s);
/* This instance's record of a pod; NULL if it never saw it. */
const dp_sched_pod_info *dp_sched_pod(const dp_sched *s, const char *ns, const char *name);
/* The arguments of the verdicts in the pods' histograms. */
const dp_diag_strings *dp_sched_strings(const dp_sched *s);

/* ---- per-node verdicts, on request (explain) ---- */
typedef struct dp_sched_node_verdict {
        const char *node;     /* the store's Node name: valid until the store changes */
        dp_verdict_code code; /* DP_VERDICT_FIT where the pod fits now */
        const char *arg;      /* valid while the scheduler lives */
        char *detail;         /* DP_VERDICT_DRA: the allocator's reasons, one per line; else NULL */
} dp_sched_node_verdict;

/* Run the filter for one pod the scheduler knows, against the store as it is
 * now, on every node in name order, and say what each node decided. Nothing
 * of the pod's record changes and nothing is written. 1 with the verdicts
 * (*ret, *ret_n); 0 when the pod is decided before any node is looked at
 * (*ret_message says why: a claim missing, a bad request...); -ENOENT the
 * scheduler has no such pod; <0 other errors (err). */
int dp_sched_diagnose(dp_sched *s, const char *ns, const char *name, dp_sched_node_verdict **ret, size_t *ret_n,
                      char **ret_message, dp_error *err);
void dp_sched_node_verdicts_free(dp_sched_node_verdict *v, size_t n);

/* ---- one pod, in two steps (tests drive these to interleave schedulers) ---- */
typedef struct dp_sched_plan dp_sched_plan;
/* Filter and score the pod against the store as it is now, allocating
 * claims in memory. 1: a plan; 0: unschedulable (info updated); <0 error. */
int dp_sched_plan_pod(dp_sched *s, const char *ns, const char *name, int64_t now_ms, dp_sched_plan **ret,
                      dp_error *err);
/* Write the plan (claims then binding). 1 bound; 0 a write was rejected
 * (stale view or device taken): nothing of the plan stays, the pod is queued
 * again; <0 error. Frees the plan. */
int dp_sched_commit(dp_sched *s, dp_sched_plan *plan, int64_t now_ms, dp_error *err);
const char *dp_sched_plan_node(const dp_sched_plan *p);
const char *dp_sched_plan_pod_key(const dp_sched_plan *p); /* "ns/name" */
/* The queue's next pod that may be tried at now_ms (not `exclude`, a
 * "ns/name"): 1 with a plan; 0 when it was handled without one (it does not
 * fit, or it was a gang, placed or not, here and now); -ENOENT when no pod
 * is eligible; other <0 errors. */
int dp_sched_next(dp_sched *s, int64_t now_ms, const char *exclude, dp_sched_plan **ret, dp_error *err);
/* dp_sched_commit, then the on_bind hook when the pod was bound. */
int dp_sched_commit_bind(dp_sched *s, dp_sched_plan *plan, int64_t now_ms, dp_error *err);
dp_sched_plan *dp_sched_plan_free(dp_sched_plan *p);

/* ---- the controllers the scheduler relies on (resourceclaim controller) ---- */
/* Create the ResourceClaims of pods' resourceClaimTemplates ("<pod>-<claim>",
 * owned by the pod; "<podgroup>-<claim>", owned by the group and shared by its
 * members, when the pod's PodGroup lists the same claim) and record them in
 * pod.status.resourceClaimStatuses. */
int dp_sched_claims_from_templates(dp_store *st, dp_error *err);
/* A pod is gone: drop its reservations (deallocating claims nobody holds)
 * and delete the claims it owns. Deletes the pod. */
int dp_sched_delete_pod(dp_store *st, const char *ns, const char *name);
/* The claim name for pod claim `pc` (NULL when the claim is not created yet). */
const char *dp_sched_pod_claim_name(const dp_pod *p, const dp_pod_resource_claim *pc);
