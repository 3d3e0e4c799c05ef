/* SPDX-License-Identifier: Apache-2.0
 *
 * queue.h — Kueue's admission as a what-if engine: which workloads a set of
 * ClusterQueues, Cohorts and ResourceFlavors admits, with which flavors, and
 * why the others wait, in Kueue's own words (docs/queues.md says rule by rule
 * what is the same as Kueue v0.19 and what differs).
 *
 *     l->ext = &dp_queue_model_ext;               // before decoding
 *     ... dp_model_decode...(l) ...; dp_model_generate_names(l)
 *     dp_queue *q = NULL;
 *     dp_queue_new(l, &q, &err);                  // takes the Kueue objects out of l
 *     dp_queue_admit(q, &err);                    // Kueue's scheduling cycles
 *     dp_queue_apply_owners(q, l);                // admitted Jobs run, the others stay suspended
 *     dp_model_expand_workloads(l, ...);
 *     dp_queue_apply_pods(q, l, &err);            // flavors' nodeLabels/tolerations into the pods
 *
 * An input without any Kueue object is a cluster without Kueue: no
 * workloads, and labelled Jobs run as written (one warning in l).
 *
 * Workloads are derived as Kueue's integrations derive them: a batch/v1 Job
 * labelled kueue.x-k8s.io/queue-name is one pod set "main" of
 * min(parallelism, completions) pods; a Pod with the label is one pod set
 * "main" of one pod (Kueue's pod integration); a kueue.x-k8s.io Workload is
 * read as written, and one with status.admission holds its quota from the
 * start; plain Pods of a pod group (kueue.x-k8s.io/pod-group-name) are one
 * workload with a pod set per role; a JobSet is one pod set per
 * replicatedJob. Partial admission: a pod set with a minimum count may be
 * admitted with fewer pods (dp_queue_podset.admitted_count).
 *
 * Pure: no files, clocks or globals. Errors: -ENOMEM, or -EINVAL with one
 * message (file, object, field path, rule).
 */
#pragma once

#include "doc/doc.h"
#include "base/strbuf.h"
#include "queue/kueue.h"

typedef enum {
        DP_QW_PENDING = 0, /* in its ClusterQueue, not admitted (message says why) */
        DP_QW_ADMITTED,    /* quota reserved and admitted */
        DP_QW_INADMISSIBLE, /* never reaches a ClusterQueue (missing LocalQueue...) */
        DP_QW_FINISHED      /* admitted, then its pods ended (Timeline delete): quota released */
} dp_qw_state;

/* One request of a pod set: per pod, in Kueue's units (cpu in millicores,
 * everything else Quantity.Value()), sorted by name. */
typedef struct dp_queue_request {
        char *name;
        int64_t value;
} dp_queue_request;

typedef struct dp_queue_podset {
        char *name;
        int32_t count;
        /* Partial admission (queue/partial.c): the least count Kueue may admit
         * (a Job's kueue.x-k8s.io/job-min-parallelism, a Workload's
         * minCount), and once admitted the count admitted (count itself
         * unless the pod-set reducer cut it) */
        bool has_min_count;
        int32_t min_count;
        int32_t admitted_count;
        dp_queue_request *requests;
        size_t n_requests;
        char **flavors; /* admitted: the flavor of each request (NULL: none needed) */
        const dp_pod *tmpl; /* the template, while dp_queue_admit runs only */
        const dp_pod *tmpl_kept; /* a Job's or Workload's template, for explain's trials (queue/explain.c) */
} dp_queue_podset;

typedef struct dp_queue_workload {
        char *kind; /* "Job", "Pod", "Workload", "PodGroup" (Kueue's pod group) or "JobSet" */
        char *ns, *name;
        char *local_queue;
        char *cluster_queue; /* NULL: its LocalQueue is missing */
        int32_t priority;
        char *created; /* metadata.creationTimestamp, NULL when unset */
        size_t order;  /* input order: FIFO among equal timestamps */
        dp_queue_podset *podsets;
        size_t n_podsets;
        dp_qw_state state;
        bool preadmitted; /* status.admission in the input */
        char *reason;     /* QuotaReserved=False reason: Pending, Inadmissible */
        char *message;    /* Kueue's condition message ("couldn't assign flavors to pod set main: ...") */
        char *note;       /* devplane's own remark (never Kueue's text), NULL when none */
        int borrowing;    /* admitted: the height of the cohort subtree it borrows from, 0 none */
        size_t cycle;     /* admitted: the scheduling cycle, from 1; 0 for preadmitted */
        size_t cq;        /* index in the queue's ClusterQueues when cluster_queue resolves */
        char *reserved_at; /* preadmitted: QuotaReserved's lastTransitionTime (candidates' order), NULL unknown */
        /* Preemption (queue/preempt.c): the last time this workload was
         * preempted (Kueue's Preempted condition), and whom it preempted. */
        char *preempted_by;      /* ns/name of the preemptor, NULL when never preempted */
        char *preempted_reason;  /* InClusterQueue | InCohortReclamation | InCohortReclaimWhileBorrowing */
        char *preempted_message; /* the condition's message */
        size_t preempted_cycle;  /* the cycle that issued it */
        size_t times_preempted;
        char **victims; /* "ns/name (reason, cycle N)" of every workload it preempted */
        size_t n_victims;
        /* DRA (queue/dra.c): Kueue's message when its claims make it
         * Inadmissible (a ResourceClaim named directly, a DeviceClass not
         * mapped, allocationMode All...), NULL when none */
        char *dra_message;
        /* placement (dp_queue_placement_*): its pods kube-scheduler placed
         * and those it left Pending, once the simulation has run */
        bool placement_known;
        int32_t pods_placed, pods_unplaced;
        /* Admission checks (queue/checks.c): with quota reserved (state
         * Admitted), the checks of its ClusterQueue not Ready for it, named
         * ("prov, mk"): QuotaReserved, not admitted, its pods stay suspended
         * or gated. NULL: none, or all Ready. */
        char *checks_pending;
} dp_queue_workload;

/* Whether w runs: admitted, every admission check Ready (its Job unsuspended,
 * its pods ungated and given their flavors). */
static inline bool dp_queue_workload_runs(const dp_queue_workload *w) {
        return w->state == DP_QW_ADMITTED && !w->checks_pending;
}

typedef struct dp_queue dp_queue;

/* ---- Kueue's Configuration (queue/config.c): the controller manager's
 * file (config.kueue.x-k8s.io v1beta2 or v1beta1), the parts admission
 * reads. The caps are Kueue's configuration validation's. ---- */
#define DP_KUEUE_MAX_DEVICE_CLASS_MAPPINGS 16
#define DP_KUEUE_MAX_DEVICE_CLASSES 8
#define DP_KUEUE_MAX_SOURCES 16 /* devplane's: Kueue sets none */

/* A mapping's sources[]: counter- (partitionable devices) or capacity-based
 * (consumable capacity) charging instead of the device count (queue/dra-sources.c). */
typedef enum {
        DP_KUEUE_SOURCE_COUNTER,
        DP_KUEUE_SOURCE_CAPACITY,
} dp_kueue_source_kind;

typedef struct dp_kueue_dra_source {
        dp_kueue_source_kind kind;
        char *name;   /* the counter's name, or the capacity dimension (as the devices key it) */
        char *driver; /* the driver whose ResourceSlices hold the devices */
        char *cel;    /* deviceSelector.cel.expression; NULL: every device of the driver */
        unsigned line;
} dp_kueue_dra_source;

typedef struct dp_kueue_device_class_mapping {
        char *name; /* the quota's resource name */
        char **device_class_names;
        size_t n_device_class_names;
        dp_kueue_dra_source *sources;
        size_t n_sources;
} dp_kueue_device_class_mapping;

/* resources.transformations[]: a request of `input` adds, per whole unit
 * (times the pod's `multiplyBy` resource when set), each output's amount;
 * Replace drops the input (queue/transform.c). */
#define DP_KUEUE_MAX_TRANSFORMATIONS 64 /* devplane's: Kueue sets none */
typedef struct dp_kueue_transformation {
        char *input;
        bool replace; /* strategy Replace; Retain (the default) keeps the input */
        char *multiply_by;
        dp_named_quantity *outputs;
        size_t n_outputs;
} dp_kueue_transformation;

enum { DP_KUEUE_FS_LTEFS = 1, DP_KUEUE_FS_LTIS = 2 }; /* LessThanOrEqualToFinalShare, LessThanInitialShare */

typedef struct dp_kueue_config {
        dp_kueue_device_class_mapping *mappings; /* resources.deviceClassMappings */
        size_t n_mappings;
        char **exclude_prefixes; /* resources.excludeResourcePrefixes: not counted in quota */
        dp_kueue_transformation *transformations; /* resources.transformations */
        size_t n_transformations;
        size_t n_exclude_prefixes;
        bool dra_disabled; /* featureGates KueueDRAIntegration (DynamicResourceAllocation before 0.18): false */
        /* the DRA gates' values (Kueue 0.19's defaults: the first two on, the third off) */
        bool extended_resource_disabled; /* KueueDRAIntegrationExtendedResource: false */
        bool counters_disabled;          /* KueueDRAIntegrationPartitionableDevices: false */
        bool capacity_enabled;           /* KueueDRAIntegrationConsumableCapacity: true */
        bool prioritized_list_enabled;   /* KueueDRAIntegrationPrioritizedList (Kueue v0.20, alpha): true */
        bool fair_sharing; /* fairSharing.enable */
        /* fairSharing.preemptionStrategies in order (DP_KUEUE_FS_*); none:
         * Kueue's default, LessThanOrEqualToFinalShare then LessThanInitialShare */
        uint8_t fs_strategies[2];
        size_t n_fs_strategies;
        /* admissionFairSharing (given: has_afs) */
        bool has_afs;
        double afs_half_life_s, afs_sampling_s; /* usageHalfLifeTime, usageSamplingInterval (default 5 min) */
        char **afs_weight_names;                /* resourceWeights: others weigh 1 */
        double *afs_weights;
        size_t n_afs_weights;
        /* featureGates that change the order of admission (Kueue v0.19's defaults: on) */
        bool gate_afs_off;           /* AdmissionFairSharing: false */
        bool gate_non_borrowing_off; /* FairSharingPrioritizeNonBorrowing: false */
        char **warnings;   /* "FILE: Configuration: PATH: what (line N)" */
        size_t n_warnings;
} dp_kueue_config;

/* Parse one Configuration document. Unknown fields are warnings; a bad value
 * is -EINVAL with "FILE: Configuration: PATH: rule (line N)". -ENOMEM. */
int dp_kueue_config_parse(const char *text, size_t len, const char *source, dp_kueue_config **ret, dp_error *err);
dp_kueue_config *dp_kueue_config_free(dp_kueue_config *c);
DEFINE_FREEP(dp_kueue_config, dp_kueue_config_free)
/* The quota resource a DeviceClass is charged to (its first mapping), NULL
 * when not mapped. */
const char *dp_kueue_config_map(const dp_kueue_config *c, const char *device_class);
/* The class's sources of that kind, from every mapping naming it, in order:
 * *n of them into v (at most cap; returns how many exist). A gate that is
 * off (counters_disabled, !capacity_enabled) gives none. */
size_t dp_kueue_config_sources(const dp_kueue_config *c, const char *device_class, dp_kueue_source_kind kind,
                               const dp_kueue_dra_source **v, const char **quota, size_t cap);

/* ---- what-if (queue/explain.c parses them; dp_queue_new_opts applies
 * them to the ClusterQueues before anything is admitted) ---- */
typedef struct dp_queue_set_quota {
        char *cq, *flavor, *resource; /* --set-quota CQ/FLAVOR/RESOURCE=QUANTITY */
        dp_quantity value;
} dp_queue_set_quota;

typedef struct dp_queue_set_weight {
        char *cq; /* --set-weight CQ=W */
        dp_quantity weight;
} dp_queue_set_weight;

typedef struct dp_queue_set_preemption {
        char *cq, *field; /* --set-preemption CQ/FIELD=VALUE: withinClusterQueue, reclaimWithinCohort, */
        char *value;      /* borrowWithinCohort.policy or borrowWithinCohort.maxPriorityThreshold */
} dp_queue_set_preemption;

/* --add-nodes FLAVOR=N: N copies of the first Node object the flavor's
 * nodeLabels select (sched/sim-input.c adds them before placement). */
#define DP_QUEUE_MAX_ADD_NODES 1000
typedef struct dp_queue_add_nodes {
        char *flavor;
        int32_t count;
} dp_queue_add_nodes;

/* --set-check NAME=Ready|Pending: the state of AdmissionCheck NAME for every
 * workload it applies to, over what the input's Workloads say (queue/checks.c). */
typedef struct dp_queue_set_check {
        char *name;
        bool ready;
} dp_queue_set_check;

typedef struct dp_queue_options {
        const dp_kueue_config *config; /* borrowed; NULL: none given */
        dp_queue_set_quota *quotas;
        size_t n_quotas;
        dp_queue_set_weight *weights;
        size_t n_weights;
        dp_queue_set_preemption *preemptions;
        size_t n_preemptions;
        dp_queue_add_nodes *add_nodes;
        size_t n_add_nodes;
        dp_queue_set_check *checks;
        size_t n_checks;
} dp_queue_options;

/* "CQ/FLAVOR/RESOURCE=QUANTITY", "CQ=W", "CQ/FIELD=VALUE" (queue/explain-preempt.c)
 * and "FLAVOR=N" (queue/explain-nodes.c) added to o; -EINVAL with a message
 * naming the flag for a malformed value, -ENOMEM. */
int dp_queue_options_add_quota(dp_queue_options *o, const char *arg, dp_error *err);
int dp_queue_options_add_weight(dp_queue_options *o, const char *arg, dp_error *err);
int dp_queue_options_add_preemption(dp_queue_options *o, const char *arg, dp_error *err);
int dp_queue_options_add_nodes(dp_queue_options *o, const char *arg, dp_error *err);
/* "NAME=Ready|Pending" (queue/checks.c). */
int dp_queue_options_add_check(dp_queue_options *o, const char *arg, dp_error *err);
/* The Node object of l whose copies --add-nodes an adds: the first one the
 * ResourceFlavor's nodeLabels select (the flavor is looked up in l, before
 * dp_queue_new takes it). -EINVAL naming the flag when the flavor is not in
 * l or no Node object matches. */
int dp_queue_flavor_node(const dp_object_list *l, const dp_queue_add_nodes *an, const dp_node **ret, dp_error *err);
void dp_queue_options_done(dp_queue_options *o);

/* Take the Kueue objects (ClusterQueue, LocalQueue, ResourceFlavor, Cohort,
 * WorkloadPriorityClass, Workload) out of l and derive the workloads of the
 * labelled Jobs and Pods left in it. Names must be generated first
 * (dp_model_generate_names). Bad references between Kueue objects (a Cohort
 * cycle) are -EINVAL with a message; missing ones are admission outcomes. */
int dp_queue_new(dp_object_list *l, dp_queue **ret, dp_error *err);
/* The same with a Configuration and what-if changes (opts may be NULL). A
 * what-if naming a ClusterQueue, flavor or resource the input does not have
 * is -EINVAL with a message. opts must outlive q. */
int dp_queue_new_opts(dp_object_list *l, const dp_queue_options *opts, dp_queue **ret, dp_error *err);
dp_queue *dp_queue_free(dp_queue *q);
/* The warning dp_queue_new would give about the input (labelled workloads and
 * no Kueue object; with Kueue, a pod group short of its total count, which
 * gets no workload), added to l->warnings without taking anything out of l:
 * for the tools, which print a list's warnings once. 0 or -ENOMEM. */
int dp_queue_warn_input(dp_object_list *l, dp_error *err);
DEFINE_FREEP(dp_queue, dp_queue_free)

/* Kueue's Configuration fairSharing.enable (off by default, as in Kueue):
 * heads are ordered by the cohort tournament and queues may preempt while
 * borrowing when reclaimWithinCohort allows it. Set before dp_queue_admit. */
void dp_queue_set_fair_sharing(dp_queue *q, bool enable);

/* Kueue's scheduling cycles until one admits nothing more: the result is
 * what a quiet cluster settles at. */
int dp_queue_admit(dp_queue *q, dp_error *err);
/* At most max_cycles more cycles (Kueue's tests look at one). */
int dp_queue_admit_cycles(dp_queue *q, size_t max_cycles, dp_error *err);

/* Before the owners' pods are stood up: every JobSet's Jobs are added to l
 * (as its controller names them); an admitted Job runs its pods (as many as
 * admitted), a pending one stays suspended (no pods); a pending Pod, and
 * every pod of a pending or incomplete pod group, keeps Kueue's scheduling
 * gate. */
int dp_queue_apply_owners(const dp_queue *q, dp_object_list *l, dp_error *err);
/* After: the pods of admitted workloads get their flavors' nodeLabels as
 * nodeSelector and the flavors' tolerations, as Kueue injects them. */
int dp_queue_apply_pods(const dp_queue *q, dp_object_list *l, dp_error *err);

size_t dp_queue_n_workloads(const dp_queue *q);
const dp_queue_workload *dp_queue_workload_at(const dp_queue *q, size_t i);
/* By namespace and name (NULL when not there); a pod of a pod group or a
 * Job of a JobSet finds its group's or JobSet's workload. */
const dp_queue_workload *dp_queue_find(const dp_queue *q, const char *ns, const char *name);
size_t dp_queue_n_cluster_queues(const dp_queue *q);

/* ---- over time (simulate with a Timeline deleting queued pods) ---- */
/* From now on dp_queue_apply_owners stands up the pods of every Job and
 * suspend-based integration, pending ones too: the caller holds those back
 * until admitted. Pods Kueue gates (plain Pods, pod groups, the pod-based
 * integrations) stand up gated, as without it. */
void dp_queue_set_over_time(dp_queue *q, bool on);
bool dp_queue_over_time(const dp_queue *q);
/* The index of a workload (kind "Job", "Pod" or "Workload"), -1 when none. */
ssize_t dp_queue_index(const dp_queue *q, const char *kind, const char *ns, const char *name);
/* Admitted workload i has ended: Finished, its quota released (the usage is
 * counted again at the next dp_queue_readmit). 0, -ENOMEM, or -EINVAL when
 * it is not admitted. */
int dp_queue_finish(dp_queue *q, size_t i);
/* The cluster changed (quota released): heads set aside or blocked are
 * tried again, cycles run until one admits nothing. */
int dp_queue_readmit(dp_queue *q, dp_error *err);
/* One pod of admitted workload i gets its pod set's flavors' nodeLabels and
 * tolerations and the kueue.x-k8s.io/podset label (what admission at t=0
 * does) and loses Kueue's gate; nothing for a workload not admitted. 0 or
 * -ENOMEM (the pod may then be half changed). */
int dp_queue_apply_pod(const dp_queue *q, size_t i, dp_pod *p);
/* Whether p carries Kueue's scheduling gate kueue.x-k8s.io/admission. */
bool dp_queue_pod_gated(const dp_pod *p);

/* The simulation's time (ms) from now on, for the usage history
 * (asWritten.queues.usageOverTime): set before finishing workloads and
 * readmitting. Without it everything is at t=0 and the cycles tell apart. */
void dp_queue_set_time(dp_queue *q, int64_t ms);
/* The history keeps at most this many points per line (ClusterQueue or
 * Cohort, flavor, resource; and a ClusterQueue's waiting count): only
 * changes are points; past the cap the last point moves on and "dropped"
 * counts. And at most this many events (admitted, finished, preempted) per
 * ClusterQueue ("eventsDropped" counts the rest). */
#define DP_QUEUE_HISTORY_POINTS_MAX 512
#define DP_QUEUE_HISTORY_EVENTS_MAX 256
/* A value in Kueue's units (cpu millicores, the rest Quantity.Value())
 * printed as Kueue prints it ("500m", "4", "1Gi"). */
void dp_queue_format(const char *resource, int64_t v, char *buf, size_t size);

/* After the simulation: which pods of each workload kube-scheduler placed.
 * Clear, then add each pod once under its workload (a Job's pods under
 * "Job"/ns/name, a queued plain Pod under "Pod"); unknown workloads are
 * ignored. */
void dp_queue_placement_clear(dp_queue *q);
void dp_queue_placement_add(dp_queue *q, const char *kind, const char *ns, const char *name, bool placed);

/* `devplane explain` for a workload (a Job, Pod or Workload by namespace
 * and name): its state, Kueue's message, its ClusterQueue's usage, and what
 * would let it in (quota to add per flavor and resource, as a --set-quota
 * that suffices, checked by admitting everything again with it; what to
 * preempt: the --set-preemption under which Kueue preempts for it, and the
 * admitted workloads to delete by hand, each checked likewise; a LocalQueue,
 * selector or DeviceClass mapping missing); for a preempted one, by whom
 * and under which rule. The trials leave q
 * admitted as the last one did: explain is the last use of q. Jobs' and
 * Workloads' templates must still be alive (plain Pods' are not looked at
 * in the trials: their flavors' taints and affinity are not checked there).
 * -ENOENT when no workload has that name, -ENOMEM. */
int dp_queue_explain(dp_queue *q, const char *ns, const char *name, dp_strbuf *out);
/* The simulator's trial placement for explain: the whole input run again
 * with n more nodes of flavor (as --add-nodes flavor=n, on top of the flags
 * given). 1 when every pod of w is then placed, 0 when not, < 0 with err
 * (-EINVAL: no Node object for the flavor; -ENOMEM). */
typedef int (*dp_queue_place_trial)(void *userdata, const char *flavor, int32_t n, const dp_queue_workload *w,
                                    dp_error *err);
/* dp_queue_explain, and for an admitted workload whose pods kube-scheduler
 * left Pending, the --add-nodes that places them (place may be NULL: none). */
int dp_queue_explain_placing(dp_queue *q, const char *ns, const char *name, dp_queue_place_trial place, void *userdata,
                             dp_strbuf *out);

/* The result as a document (simulate -o json|yaml: "queues") and as text. */
dp_doc_node *dp_queue_encode(dp_doc_set *s, const dp_queue *q);
void dp_queue_print(const dp_doc_node *doc, dp_strbuf *out);
