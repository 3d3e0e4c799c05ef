/* SPDX-License-Identifier: Apache-2.0
 *
 * kueue.h — Kueue's objects (kueue.x-k8s.io v1beta2 and v1beta1, as Kueue
 * v0.19 serves them) as the admission engine reads them: ClusterQueue,
 * LocalQueue, ResourceFlavor, Cohort and WorkloadPriorityClass.
 *
 * They reach a dp_object_list through the model's extension table
 * (dp_queue_model_ext, set as the list's `ext` before decoding): each is a
 * DP_KIND_EXT object whose struct starts with dp_ext_object, so
 * dp_object_free, dp_object_describe and duplicate checks work on them.
 * Use dp_queue_kind() to tell them apart.
 *
 * Decoding (queue/decode.c) follows the model's rules (one error with the
 * file, object, field path and rule, exit 2), except that a field Kueue
 * defines and devplane does not know is a warning naming it, not an error,
 * and the v1beta1 names (spec.cohort, Cohort spec.parent) are read as the
 * v1beta2 ones (spec.cohortName, spec.parentName).
 *
 * Ownership as in model/objects.h: strings and arrays belong to the struct.
 */
#pragma once

#include "model/model.h"

#define DP_KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define DP_KUEUE_PRIORITY_LABEL "kueue.x-k8s.io/priority-class"
/* partial admission: the least parallelism a Job may be admitted with */
#define DP_KUEUE_JOB_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
/* the scheduling gate Kueue's pod integration holds plain Pods with */
#define DP_KUEUE_ADMISSION_GATE "kueue.x-k8s.io/admission"

/* Kueue's limits (apis/kueue/v1beta2 kubebuilder markers). */
#define DP_KUEUE_MAX_RESOURCE_GROUPS 16
#define DP_KUEUE_MAX_FLAVORS 64
#define DP_KUEUE_MAX_RESOURCES 64
#define DP_KUEUE_MAX_FLAVOR_LABELS 8 /* nodeLabels, nodeTaints, tolerations each */

typedef enum {
        DP_KQ_NONE = 0,
        DP_KQ_CLUSTER_QUEUE,
        DP_KQ_LOCAL_QUEUE,
        DP_KQ_RESOURCE_FLAVOR,
        DP_KQ_COHORT,
        DP_KQ_WORKLOAD_PRIORITY_CLASS,
        DP_KQ_WORKLOAD,
        DP_KQ_TOPOLOGY,        /* queue/tas-decode.c */
        DP_KQ_ADMISSION_CHECK, /* queue/checks.c */
} dp_kq_kind;

/* resourceGroups[].flavors[].resources[] */
typedef struct dp_kq_quota {
        char *name;
        dp_quantity nominal;
        bool has_borrowing_limit, has_lending_limit;
        dp_quantity borrowing_limit, lending_limit;
} dp_kq_quota;

typedef struct dp_kq_flavor_quotas {
        char *name; /* a ResourceFlavor */
        dp_kq_quota *resources;
        size_t n_resources;
} dp_kq_flavor_quotas;

typedef struct dp_kq_resource_group {
        char **covered; /* coveredResources */
        size_t n_covered;
        dp_kq_flavor_quotas *flavors; /* in the order they are tried */
        size_t n_flavors;
} dp_kq_resource_group;

typedef enum { DP_KQ_BEST_EFFORT_FIFO = 0, DP_KQ_STRICT_FIFO } dp_kq_queueing;

/* flavorFungibility: v1beta1's Borrow / Preempt read as MayStopSearch */
typedef enum { DP_KQ_MAY_STOP_SEARCH = 0, DP_KQ_TRY_NEXT_FLAVOR } dp_kq_fungibility;

typedef struct dp_kq_preemption {
        char *within_cluster_queue;  /* Never (NULL) | LowerPriority | LowerOrNewerEqualPriority */
        char *reclaim_within_cohort; /* Never (NULL) | LowerPriority | Any */
        char *borrow_within_cohort;  /* policy: Never (NULL) | LowerPriority */
        bool has_max_priority_threshold;
        int32_t max_priority_threshold;
} dp_kq_preemption;

/* Admission checks (queue/checks.c): a ClusterQueue's
 * admissionChecksStrategy.admissionChecks[] (v1beta1's admissionChecks[]
 * are rules without flavors); no onFlavors: the check runs for every
 * workload of the ClusterQueue. */
#define DP_KUEUE_MAX_ADMISSION_CHECKS 64         /* admissionChecksStrategy.admissionChecks maxItems */
#define DP_KUEUE_MAX_WORKLOAD_ADMISSION_CHECKS 8 /* Workload status.admissionChecks maxItems */
typedef struct dp_kq_check_rule {
        char *name;
        char **on_flavors;
        size_t n_on_flavors;
} dp_kq_check_rule;

typedef struct dp_cluster_queue {
        dp_ext_object x;
        dp_label_selector *namespace_selector; /* NULL matches no namespace, {} every one */
        dp_kq_resource_group *groups;
        size_t n_groups;
        char *cohort; /* cohortName (v1beta2), cohort (v1beta1) */
        dp_kq_queueing queueing;
        dp_kq_fungibility when_can_borrow;  /* default MayStopSearch */
        dp_kq_fungibility when_can_preempt; /* default TryNextFlavor */
        bool preemption_over_borrowing;     /* flavorFungibility.preference */
        dp_kq_preemption preemption;
        bool has_weight;
        dp_quantity weight;   /* fairSharing.weight */
        char *stop_policy;    /* None (NULL) | Hold | HoldAndDrain */
        bool usage_based_afs; /* admissionScope.admissionMode: UsageBasedAdmissionFairSharing */
        dp_kq_check_rule *checks; /* admission checks, in the order written */
        size_t n_checks;
} dp_cluster_queue;

typedef struct dp_local_queue {
        dp_ext_object x;
        char *cluster_queue;
        char *stop_policy;
        bool has_weight;
        dp_quantity weight; /* fairSharing.weight (Admission Fair Sharing divides the usage by it) */
        /* status.fairSharing.admissionFairSharingStatus.consumedResources:
         * its decayed historical usage, as Kueue last wrote it */
        dp_named_quantity *consumed;
        size_t n_consumed;
} dp_local_queue;

typedef struct dp_resource_flavor {
        dp_ext_object x;
        dp_kv *node_labels;
        size_t n_node_labels;
        dp_taint *node_taints;
        size_t n_node_taints;
        dp_toleration *tolerations;
        size_t n_tolerations;
        char *topology_name;
} dp_resource_flavor;

typedef struct dp_kq_cohort {
        dp_ext_object x;
        char *parent; /* parentName (v1beta2), parent (v1beta1) */
        dp_kq_resource_group *groups;
        size_t n_groups;
        bool has_weight;
        dp_quantity weight;
} dp_kq_cohort;

typedef struct dp_workload_priority_class {
        dp_ext_object x;
        int32_t value;
        char *description;
} dp_workload_priority_class;

/* A Workload as Kueue's job integrations write it (a Job's is derived by
 * queue/workloads.c; one written in the input, as Kueue's own tests and a
 * `kubectl get workloads -o yaml` dump give them, is read here), with
 * status.admission when it already holds quota. */
/* One domain of an admitted pod set's topologyAssignment: a value per
 * level of the assignment's levels, and how many pods it holds. */
typedef struct dp_kq_topology_domain {
        char **values;
        size_t n_values;
        int32_t count;
} dp_kq_topology_domain;

typedef struct dp_kq_podset_assignment {
        char *name;
        dp_kv *flavors; /* resource -> flavor */
        size_t n_flavors;
        bool has_count;
        int32_t count;
        /* topologyAssignment (queue/tas-decode.c): v1beta1's domains, or
         * v1beta2's slices expanded into domains; none when absent */
        char **topo_levels;
        size_t n_topo_levels;
        dp_kq_topology_domain *topo_domains;
        size_t n_topo_domains;
} dp_kq_podset_assignment;

typedef struct dp_kq_podset {
        char *name;
        int32_t count;
        bool has_min_count; /* minCount (partial admission) */
        int32_t min_count;
        dp_pod *template_; /* spec.podSets[].template as a Pod */
} dp_kq_podset;

/* Workload status.admissionChecks[]: a check's state as its controller
 * last wrote it (Pending, Ready, Retry, Rejected). */
typedef struct dp_kq_check_state {
        char *name;
        char *state;
        char *message;
} dp_kq_check_state;

typedef struct dp_kq_workload {
        dp_ext_object x;
        char *queue_name;
        char *priority_class_name;
        bool has_priority;
        int32_t priority;
        bool inactive; /* spec.active: false */
        dp_kq_podset *podsets;
        size_t n_podsets;
        char *admitted_cq; /* status.admission.clusterQueue; NULL: not admitted */
        dp_kq_podset_assignment *assignments;
        size_t n_assignments;
        char *reserved_at; /* status.conditions QuotaReserved=True lastTransitionTime */
        dp_kq_check_state *checks; /* status.admissionChecks */
        size_t n_checks;
} dp_kq_workload;

#define DP_KUEUE_MAX_PODSETS 8

/* Topology (Topology-Aware Scheduling, queue/tas-decode.c): the node
 * labels that group nodes into domains, highest level first. */
#define DP_KUEUE_MAX_TOPOLOGY_LEVELS 16 /* spec.levels maxItems */
typedef struct dp_kq_topology {
        dp_ext_object x;
        char **levels; /* spec.levels[].nodeLabel */
        size_t n_levels;
} dp_kq_topology;

/* AdmissionCheck (queue/checks.c): what a ClusterQueue's checks name. Its
 * controller decides each workload's state at run time; devplane reads
 * whether the check is Active (status.conditions Active) when the input
 * says, as a `kubectl get admissionchecks -o yaml` dump does. */
#define DP_KUEUE_MULTIKUEUE_CONTROLLER "kueue.x-k8s.io/multikueue"
#define DP_KUEUE_PROVISIONING_CONTROLLER "kueue.x-k8s.io/provisioning-request"
typedef struct dp_kq_admission_check {
        dp_ext_object x;
        char *controller_name;                   /* spec.controllerName, required */
        char *parameters_kind, *parameters_name; /* spec.parameters (not read further) */
        bool has_active;                         /* status.conditions has type Active */
        bool active;                             /* ... with status True */
        char *active_message;                    /* its message, NULL none */
} dp_kq_admission_check;

/* The extension table to set as a dp_object_list's `ext`. */
extern const dp_model_ext dp_queue_model_ext;

/* Which Kueue kind o is (DP_KQ_NONE for anything else). */
dp_kq_kind dp_queue_kind(dp_object o);
