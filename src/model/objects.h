/* SPDX-License-Identifier: Apache-2.0
 *
 * objects.h — typed Kubernetes objects: resource.k8s.io (DRA), core/v1 Node,
 * Pod and Namespace, and gang PodGroups.
 *
 * One struct shape per kind, whatever API version it was read from: v1beta1
 * (`basic` device wrapper, flat requests) and v1beta2 are normalised into the
 * v1 shape; dp_object_header.api_version records what was written.
 *
 * Ownership (one rule everywhere): every `char *` and every array is owned by
 * the struct that holds it and freed by that object's free function; arrays
 * are a pointer plus an `n_` count; a NULL string means "not set" (an empty
 * string that was written stays ""). Optional sub-objects are pointers (NULL =
 * absent); optional scalars carry a `has_` flag. Maps from the input
 * (attributes, capacity, labels...) become arrays in input order.
 *
 * Quantities are model/quantity.h values. Opaque configuration parameters
 * are kept as compact JSON text (valid JSON, re-parseable with dp_doc_parse).
 *
 * Names of the Kubernetes limit constants live in model/validate.h.
 */
#pragma once

#include "base/error.h"
#include "model/quantity.h"

/* ---- common pieces ---- */

typedef struct dp_kv {
        char *key;
        char *value;
} dp_kv;

typedef struct dp_owner_ref {
        char *api_version, *kind, *name, *uid;
        bool controller;
} dp_owner_ref;

/* metav1.ObjectMeta. Fields kubectl emits that devplane does not use
 * (managedFields, finalizers, selfLink, deletionGracePeriodSeconds) are
 * accepted and dropped. */
typedef struct dp_object_meta {
        char *name;
        char *generate_name;
        char *namespace; /* NULL for cluster-scoped objects, or unset (namespaced kinds: "default") */
        char *uid;
        char *resource_version;
        int64_t generation;
        char *creation_timestamp;
        char *deletion_timestamp; /* set: terminating (a bound pod still holds its node's resources) */
        dp_kv *labels;
        size_t n_labels;
        dp_kv *annotations;
        size_t n_annotations;
        dp_owner_ref *owner_references;
        size_t n_owner_references;
} dp_object_meta;

typedef enum {
        DP_KIND_NONE = 0,
        DP_KIND_RESOURCE_SLICE,
        DP_KIND_DEVICE_CLASS,
        DP_KIND_RESOURCE_CLAIM,
        DP_KIND_RESOURCE_CLAIM_TEMPLATE,
        DP_KIND_DEVICE_TAINT_RULE,
        DP_KIND_NODE,
        DP_KIND_POD,
        DP_KIND_NAMESPACE,
        DP_KIND_POD_GROUP,
        DP_KIND_PRIORITY_CLASS, /* scheduling.k8s.io/v1 */
        DP_KIND_DEPLOYMENT,
        /* the other pod owners, in dp_deployment's shape */
        DP_KIND_REPLICA_SET,
        DP_KIND_STATEFUL_SET,
        DP_KIND_JOB,
        DP_KIND_DAEMON_SET,
        DP_KIND_POD_DISRUPTION_BUDGET, /* policy/v1: preemption's victim order (sched/preempt.c) */
        /* v1 Service and ReplicationController in dp_deployment's shape,
         * spec.selector (a plain map) in selector_match_labels and nothing
         * else: PodTopologySpread's default constraints select with them */
        DP_KIND_SERVICE,
        DP_KIND_REPLICATION_CONTROLLER,
        /* after the built-in kinds, so their numbers (which generated names
         * hash) stay what they were */
        DP_KIND_EXT, /* a kind another module decodes (dp_model_ext; Kueue's in src/queue) */
} dp_kind;
#define DP_KIND_LAST DP_KIND_REPLICATION_CONTROLLER /* the last built-in kind */

/* First member of every object struct. */
typedef struct dp_object_header {
        dp_kind kind;
        char *api_version; /* as written, e.g. "resource.k8s.io/v1beta1" */
        char *source;      /* file name as given to the loader (or the parse name) */
        size_t doc_index;  /* 0-based document index in that file */
        size_t item_index; /* index inside a `List`, 0 otherwise */
        uint32_t line;     /* line of the object's first key */
} dp_object_header;

/* core/v1 NodeSelector. */
typedef enum {
        DP_NS_OP_IN = 0,
        DP_NS_OP_NOT_IN,
        DP_NS_OP_EXISTS,
        DP_NS_OP_DOES_NOT_EXIST,
        DP_NS_OP_GT,
        DP_NS_OP_LT,
} dp_node_selector_op;

typedef struct dp_node_selector_requirement {
        char *key;
        dp_node_selector_op op;
        char **values;
        size_t n_values;
} dp_node_selector_requirement;

typedef struct dp_node_selector_term {
        dp_node_selector_requirement *match_expressions;
        size_t n_match_expressions;
        dp_node_selector_requirement *match_fields; /* only key metadata.name is meaningful */
        size_t n_match_fields;
} dp_node_selector_term;

typedef struct dp_node_selector {
        dp_node_selector_term *terms; /* ORed */
        size_t n_terms;
} dp_node_selector;

/* A node taint (core/v1) or a device taint (resource.k8s.io): same fields. */
typedef struct dp_taint {
        char *key;
        char *value;      /* NULL when unset */
        char *effect;     /* NoSchedule, PreferNoSchedule, NoExecute; devices also None */
        char *time_added; /* RFC 3339 text, NULL when unset */
} dp_taint;

/* A pod toleration or a device-request toleration. */
typedef struct dp_toleration {
        char *key;
        char *op; /* "operator": Exists or Equal; NULL = Equal */
        char *value;
        char *effect; /* NULL = all effects */
        bool has_toleration_seconds;
        int64_t toleration_seconds;
} dp_toleration;

/* A name with a quantity: counters, capacity requests, consumed capacity,
 * container limits/requests, node capacity/allocatable. */
typedef struct dp_named_quantity {
        char *name;
        dp_quantity value;
} dp_named_quantity;

/* metav1.Condition (claim device status, taint rule status). */
typedef struct dp_condition {
        char *type, *status, *reason, *message, *last_transition_time;
        int64_t observed_generation;
} dp_condition;

/* ---- resource.k8s.io: ResourceSlice ---- */

typedef enum {
        DP_ATTR_INT = 0,
        DP_ATTR_BOOL,
        DP_ATTR_STRING,
        DP_ATTR_VERSION,
        /* list-typed attributes (DRAListTypeAttributes, alpha): `n` entries */
        DP_ATTR_INTS,
        DP_ATTR_BOOLS,
        DP_ATTR_STRINGS,
        DP_ATTR_VERSIONS,
} dp_attr_type;

typedef struct dp_device_attribute {
        char *name; /* qualified name as written: "model" or "domain/model" */
        dp_attr_type type;
        int64_t i;     /* INT */
        bool b;        /* BOOL */
        char *s;       /* STRING, VERSION */
        int64_t *ints; /* INTS */
        bool *bools;   /* BOOLS */
        char **strs;   /* STRINGS, VERSIONS */
        size_t n;      /* entries of the list forms */
} dp_device_attribute;

typedef struct dp_capacity_range {
        dp_quantity min;
        bool has_max;
        dp_quantity max;
        bool has_step;
        dp_quantity step;
} dp_capacity_range;

typedef struct dp_device_capacity {
        char *name; /* qualified name */
        dp_quantity value;
        bool has_request_policy;
        bool has_default;
        dp_quantity default_;      /* requestPolicy.default */
        dp_quantity *valid_values; /* requestPolicy.validValues, ascending */
        size_t n_valid_values;
        dp_capacity_range *valid_range; /* requestPolicy.validRange, NULL if unset */
} dp_device_capacity;

typedef struct dp_counter_set {
        char *name;
        dp_named_quantity *counters; /* input map counters{name: {value}} */
        size_t n_counters;
} dp_counter_set;

typedef struct dp_counter_consumption {
        char *counter_set;
        dp_named_quantity *counters;
        size_t n_counters;
        char **compatibility_groups; /* 1.37 DRADeviceCompatibilityGroups; none = "no groups" */
        size_t n_compatibility_groups;
} dp_counter_consumption;

typedef struct dp_device {
        char *name;
        dp_device_attribute *attributes;
        size_t n_attributes;
        dp_device_capacity *capacity;
        size_t n_capacity;
        dp_counter_consumption *consumes_counters;
        size_t n_consumes_counters;
        /* per-device node selection (slice spec.perDeviceNodeSelection) */
        char *node_name;
        dp_node_selector *node_selector;
        bool all_nodes;
        dp_taint *taints;
        size_t n_taints;
        bool binds_to_node;
        char **binding_conditions;
        size_t n_binding_conditions;
        char **binding_failure_conditions;
        size_t n_binding_failure_conditions;
        bool allow_multiple_allocations;
} dp_device;

typedef struct dp_resource_slice {
        dp_object_header hdr;
        dp_object_meta meta;
        char *driver;
        char *pool_name;
        int64_t pool_generation;
        int64_t pool_resource_slice_count;
        char *node_name;
        dp_node_selector *node_selector;
        bool all_nodes;
        bool per_device_node_selection;
        dp_device *devices;
        size_t n_devices;
        dp_counter_set *shared_counters;
        size_t n_shared_counters;
        char **skip_node_operations; /* 1.37: NodePrepareResources, NodeUnprepareResources, "*" */
        size_t n_skip_node_operations;
        char *partition_type_attribute; /* 1.37 DRAPartitionableDevicesType, NULL if unset */
} dp_resource_slice;

/* ---- DeviceClass ---- */

typedef struct dp_device_selector {
        char *cel_expression; /* selectors[].cel.expression */
} dp_device_selector;

/* Opaque configuration: config[].opaque{driver, parameters}. */
typedef struct dp_device_config {
        char **requests; /* claim config only: the requests it applies to (empty = all) */
        size_t n_requests;
        char *driver;
        char *parameters_json; /* compact JSON of `parameters` */
} dp_device_config;

typedef struct dp_device_class {
        dp_object_header hdr;
        dp_object_meta meta;
        dp_device_selector *selectors;
        size_t n_selectors;
        dp_device_config *config;
        size_t n_config;
        char *extended_resource_name; /* KEP-5004, NULL if unset */
} dp_device_class;

/* ---- ResourceClaim / ResourceClaimTemplate ---- */

typedef enum {
        DP_ALLOCATION_MODE_EXACT_COUNT = 0,
        DP_ALLOCATION_MODE_ALL,
} dp_allocation_mode;

/* The body of `exactly`, and of each firstAvailable entry (which cannot ask
 * for adminAccess). Defaults applied: mode ExactCount, count 1. */
typedef struct dp_device_request_spec {
        char *device_class_name;
        dp_device_selector *selectors;
        size_t n_selectors;
        dp_allocation_mode allocation_mode;
        int64_t count;
        bool has_admin_access;
        bool admin_access;
        dp_toleration *tolerations;
        size_t n_tolerations;
        dp_named_quantity *capacity_requests; /* capacity.requests */
        size_t n_capacity_requests;
} dp_device_request_spec;

typedef struct dp_device_sub_request {
        char *name;
        dp_device_request_spec spec;
} dp_device_sub_request;

typedef struct dp_device_request {
        char *name;
        dp_device_request_spec *exactly; /* exactly one of exactly / first_available */
        dp_device_sub_request *first_available;
        size_t n_first_available;
} dp_device_request;

typedef struct dp_device_constraint {
        char **requests; /* empty = all requests */
        size_t n_requests;
        char *match_attribute;    /* fully qualified, or NULL */
        char *distinct_attribute; /* fully qualified, or NULL */
} dp_device_constraint;

typedef struct dp_resource_claim_spec {
        dp_device_request *requests;
        size_t n_requests;
        dp_device_constraint *constraints;
        size_t n_constraints;
        dp_device_config *config;
        size_t n_config;
} dp_resource_claim_spec;

/* status.allocation.devices.results[] */
typedef struct dp_device_allocation_result {
        char *request; /* "req" or "req/sub" */
        char *driver;
        char *pool;
        char *device;
        bool has_admin_access;
        bool admin_access;
        dp_toleration *tolerations;
        size_t n_tolerations;
        char *share_id; /* NULL unless the device allows multiple allocations */
        dp_named_quantity *consumed_capacity;
        size_t n_consumed_capacity;
        char **binding_conditions;
        size_t n_binding_conditions;
        char **binding_failure_conditions;
        size_t n_binding_failure_conditions;
        char **skip_node_operations; /* 1.37 */
        size_t n_skip_node_operations;
} dp_device_allocation_result;

typedef enum {
        DP_CONFIG_SOURCE_CLASS = 0, /* "FromClass" */
        DP_CONFIG_SOURCE_CLAIM,     /* "FromClaim" */
} dp_config_source;

typedef struct dp_allocation_config {
        dp_config_source source;
        dp_device_config config; /* requests, driver, parameters */
} dp_allocation_config;

typedef struct dp_allocation_result {
        dp_device_allocation_result *results;
        size_t n_results;
        dp_allocation_config *config;
        size_t n_config;
        dp_node_selector *node_selector; /* NULL: all nodes */
        char *allocation_timestamp;      /* NULL when unset */
} dp_allocation_result;

typedef struct dp_consumer_ref {
        char *api_group; /* NULL or "" for core */
        char *resource;  /* "pods" */
        char *name;
        char *uid;
} dp_consumer_ref;

typedef struct dp_network_device_data {
        char *interface_name;
        char **ips;
        size_t n_ips;
        char *hardware_address;
} dp_network_device_data;

/* status.devices[] written by drivers. */
typedef struct dp_allocated_device_status {
        char *driver, *pool, *device;
        char *share_id;
        dp_condition *conditions;
        size_t n_conditions;
        char *data_json; /* compact JSON, NULL if unset */
        dp_network_device_data *network_data;
} dp_allocated_device_status;

typedef struct dp_resource_claim {
        dp_object_header hdr;
        dp_object_meta meta;
        dp_resource_claim_spec spec;
        dp_allocation_result *allocation; /* status.allocation, NULL = not allocated */
        dp_consumer_ref *reserved_for;
        size_t n_reserved_for;
        dp_allocated_device_status *devices; /* status.devices */
        size_t n_devices;
} dp_resource_claim;

typedef struct dp_resource_claim_template {
        dp_object_header hdr;
        dp_object_meta meta;
        dp_object_meta claim_meta; /* spec.metadata: labels/annotations for created claims */
        dp_resource_claim_spec spec;
} dp_resource_claim_template;

/* ---- DeviceTaintRule (v1alpha3, v1beta2) ---- */

typedef struct dp_device_taint_rule {
        dp_object_header hdr;
        dp_object_meta meta;
        /* spec.deviceSelector: NULL fields do not restrict; no selector at
         * all (has_device_selector false) selects nothing. */
        bool has_device_selector;
        char *driver, *pool, *device;
        char *device_class_name;       /* v1alpha3 before 1.35 only */
        dp_device_selector *selectors; /* v1alpha3 before 1.35 only */
        size_t n_selectors;
        dp_taint taint;
        dp_condition *conditions; /* status.conditions */
        size_t n_conditions;
} dp_device_taint_rule;

/* ---- core/v1 ---- */

/* core/v1 ContainerImage of node.status.images (ImageLocality's score). */
typedef struct dp_node_image {
        char **names;
        size_t n_names;
        int64_t size_bytes;
} dp_node_image;

typedef struct dp_node {
        dp_object_header hdr;
        dp_object_meta meta;
        dp_taint *taints;
        size_t n_taints;
        bool unschedulable;
        dp_named_quantity *capacity; /* status.capacity */
        size_t n_capacity;
        dp_named_quantity *allocatable; /* status.allocatable */
        size_t n_allocatable;
        dp_node_image *images; /* status.images */
        size_t n_images;
} dp_node;

typedef struct dp_container_claim {
        char *name;    /* pod.spec.resourceClaims[].name */
        char *request; /* NULL: the whole claim */
} dp_container_claim;

/* A container port that asks for a port of the node (hostPort > 0); the
 * others are not kept. */
typedef struct dp_container_port {
        int32_t host_port;
        char *host_ip;  /* NULL: unset (0.0.0.0) */
        char *protocol; /* NULL: unset (TCP) */
} dp_container_port;

typedef struct dp_container {
        char *name;
        char *image;
        char *restart_policy; /* init containers: "Always" makes a sidecar */
        dp_named_quantity *limits;
        size_t n_limits;
        dp_named_quantity *requests;
        size_t n_requests;
        dp_container_claim *claims; /* resources.claims */
        size_t n_claims;
        /* queue, ports, defaults (kube-scheduler parity) */
        dp_container_port *host_ports; /* ports[] with a hostPort */
        size_t n_host_ports;
} dp_container;

typedef struct dp_pod_resource_claim {
        char *name;
        char *resource_claim_name; /* exactly one of these two */
        char *resource_claim_template_name;
} dp_pod_resource_claim;

typedef struct dp_pod_claim_status {
        char *name;                /* pod.status.resourceClaimStatuses[].name */
        char *resource_claim_name; /* NULL: no claim needed */
} dp_pod_claim_status;

typedef struct dp_extended_resource_mapping {
        char *container_name;
        char *resource_name;
        char *request_name;
} dp_extended_resource_mapping;

/* inter-pod affinity and topology spread: metav1.LabelSelector (matchLabels
 * and matchExpressions ANDed; operators In, NotIn, Exists, DoesNotExist). */
typedef struct dp_label_selector {
        dp_kv *match_labels;
        size_t n_match_labels;
        dp_node_selector_requirement *match_expressions;
        size_t n_match_expressions;
} dp_label_selector;

/* core/v1 PodAffinityTerm. label_selector NULL matches no pod;
 * namespace_selector NULL is unset (with no namespaces: the pod's own
 * namespace), an empty one matches every namespace. */
typedef struct dp_pod_affinity_term {
        dp_label_selector *label_selector;
        char **namespaces;
        size_t n_namespaces;
        dp_label_selector *namespace_selector;
        char *topology_key;
        char **match_label_keys;
        size_t n_match_label_keys;
        char **mismatch_label_keys;
        size_t n_mismatch_label_keys;
        int32_t weight; /* preferred terms only (1..100) */
} dp_pod_affinity_term;

/* core/v1 TopologySpreadConstraint, with the API's defaults applied:
 * minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore. */
typedef struct dp_spread_constraint {
        int32_t max_skew;
        char *topology_key;
        bool schedule_anyway; /* whenUnsatisfiable ScheduleAnyway (else DoNotSchedule) */
        dp_label_selector *label_selector; /* NULL matches no pod */
        int32_t min_domains;
        bool node_affinity_ignore; /* nodeAffinityPolicy: Ignore */
        bool node_taints_honor;    /* nodeTaintsPolicy: Honor */
        char **match_label_keys;
        size_t n_match_label_keys;
} dp_spread_constraint;

/* core/v1 PreferredSchedulingTerm: NodeAffinity's score adds the weight
 * of each term the node matches. */
typedef struct dp_preferred_node_term {
        int32_t weight; /* 1..100 */
        dp_node_selector_term preference;
} dp_preferred_node_term;

typedef struct dp_pod {
        dp_object_header hdr;
        dp_object_meta meta;
        char *node_name;
        dp_kv *node_selector;
        size_t n_node_selector;
        /* affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
         * NULL when absent. Preferred node affinity terms and pod (anti-)affinity
         * are at the end of the struct. */
        dp_node_selector *required_node_affinity;
        dp_toleration *tolerations;
        size_t n_tolerations;
        bool has_priority;
        int32_t priority;
        char *priority_class_name;
        char *scheduler_name;
        dp_container *init_containers;
        size_t n_init_containers;
        dp_container *containers;
        size_t n_containers;
        dp_named_quantity *overhead;
        size_t n_overhead;
        dp_pod_resource_claim *resource_claims;
        size_t n_resource_claims;
        char *workload_name;      /* spec.workloadRef.name (gang scheduling, 1.35+) */
        char *workload_pod_group; /* spec.workloadRef.podGroup */
        /* status */
        char *phase;
        char *nominated_node_name;
        dp_pod_claim_status *claim_statuses; /* status.resourceClaimStatuses */
        size_t n_claim_statuses;
        /* spec.resources: pod-level limits/requests (PodLevelResources) */
        dp_named_quantity *pod_limits;
        size_t n_pod_limits;
        dp_named_quantity *pod_requests;
        size_t n_pod_requests;
        /* status.extendedResourceClaimStatus (KEP-5004): the claim the
         * scheduler created for extended resources backed by DRA. */
        char *extended_resource_claim_name;
        dp_extended_resource_mapping *extended_resource_mappings;
        size_t n_extended_resource_mappings;
        char *scheduling_group; /* spec.schedulingGroup.podGroupName (PodGroup v1alpha2) */
        /* inter-pod affinity and topology spread (model/decode-podaffinity.c):
         * affinity.podAffinity / podAntiAffinity, required and preferred
         * (weight in each term), and spec.topologySpreadConstraints */
        dp_pod_affinity_term *pod_affinity, *pod_anti_affinity;
        size_t n_pod_affinity, n_pod_anti_affinity;
        dp_pod_affinity_term *preferred_pod_affinity, *preferred_pod_anti_affinity;
        size_t n_preferred_pod_affinity, n_preferred_pod_anti_affinity;
        dp_spread_constraint *spread;
        size_t n_spread;
        /* queue, ports, defaults (kube-scheduler parity) */
        char *preemption_policy; /* spec.preemptionPolicy: PreemptLowerPriority or Never; NULL unset */
        char **scheduling_gates; /* spec.schedulingGates[].name: never scheduled while any is left */
        size_t n_scheduling_gates;
        /* Fields read but not modelled by the scheduler, as "field (why)",
         * for one warning naming the pod (dp_model_unmodelled_warnings). */
        char **unmodelled;
        size_t n_unmodelled;
        /* preemption (sched/preempt.c): status.startTime as written (RFC
         * 3339); the scheduler's binding writes one (the kubelet's part) */
        char *start_time;
        /* affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution
         * (NodeAffinity's score, sched/score.c) */
        dp_preferred_node_term *preferred_node_affinity;
        size_t n_preferred_node_affinity;
} dp_pod;

/* scheduling.k8s.io/v1 PriorityClass: the priority its pods get (the API
 * server's Priority admission; model/defaults.c). */
typedef struct dp_priority_class {
        dp_object_header hdr;
        dp_object_meta meta;
        int32_t value;
        bool global_default;
        char *preemption_policy; /* NULL: PreemptLowerPriority */
} dp_priority_class;

/* policy/v1 PodDisruptionBudget. kube-scheduler's preemption reads only
 * the selector and status.disruptionsAllowed (and disruptedPods); the
 * budget itself is kept as written for reports (no disruption controller
 * computes the status here). */
typedef struct dp_int_or_percent {
        bool set;
        bool percent; /* "30%" */
        int32_t value;
} dp_int_or_percent;

#define DP_PDB_DISRUPTED_PODS_MAX 100000 /* no API limit: the input cap of DP_WORKLOAD_PODS_MAX */

typedef struct dp_pod_disruption_budget {
        dp_object_header hdr;
        dp_object_meta meta;
        dp_label_selector *selector; /* NULL: matches no pod (and so does {} for the scheduler) */
        dp_int_or_percent min_available, max_unavailable;
        int32_t disruptions_allowed; /* status.disruptionsAllowed; 0 when unset */
        char **disrupted_pods;       /* status.disruptedPods: the names (keys) */
        size_t n_disrupted_pods;
} dp_pod_disruption_budget;

typedef struct dp_namespace {
        dp_object_header hdr;
        dp_object_meta meta;
} dp_namespace;

/* A gang. Two shapes are read into this struct:
 *   - scheduling.x-k8s.io/v1alpha1 (scheduler-plugins coscheduling; also
 *     accepted as scheduling.k8s.io/v1alpha1): spec.minMember; pods join
 *     with label scheduling.x-k8s.io/pod-group=<name>;
 *   - scheduling.k8s.io/v1alpha2: spec.schedulingPolicy.gang.minCount (a
 *     `basic` policy gives min_member 1) and spec.resourceClaims shared by
 *     the group; pods join with spec.schedulingGroup.podGroupName.
 * dp_pod_group_name() gives a pod's group under either rule. */
typedef struct dp_pod_group {
        dp_object_header hdr;
        dp_object_meta meta;
        int32_t min_member;
        bool has_schedule_timeout_seconds;
        int32_t schedule_timeout_seconds;
        dp_named_quantity *min_resources;
        size_t n_min_resources;
        bool gang;                              /* v1alpha2: schedulingPolicy.gang (all or nothing); v1alpha1: always */
        dp_pod_resource_claim *resource_claims; /* v1alpha2 spec.resourceClaims */
        size_t n_resource_claims;
        /* Volcano and KAI-Scheduler: the queue the group waits in and its
         * priority class (spec.queue, spec.priorityClassName); KAI:
         * spec.preemptibility ("preemptible", "non-preemptible"). NULL: unset. */
        char *queue;
        char *priority_class_name;
        char *preemptibility;
} dp_pod_group;

/* A pod owner: apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and
 * batch/v1 Job (hdr.kind says which), with only what is needed to stand its
 * pods up (dp_model_expand_workloads() in model.h). */
typedef struct dp_deployment {
        dp_object_header hdr;
        dp_object_meta meta;
        int32_t replicas; /* spec.replicas (defaulted to 1); a Job: the pods running at once,
                           * min(parallelism, completions) (both defaulted to 1); a DaemonSet: unused */
        dp_kv *selector_match_labels;
        size_t n_selector_match_labels;
        int32_t job_pods;    /* a Job: min(parallelism, completions) whatever spec.suspend says
                              * (Kueue admits suspended Jobs; src/queue) */
        dp_pod *template_;   /* spec.template as a Pod (no name; hdr.kind DP_KIND_POD) */
        char *template_json; /* spec.template as compact JSON, for expansion */
} dp_deployment;

#define DP_POD_GROUP_LABEL "scheduling.x-k8s.io/pod-group"

/* An object of a kind another module decodes through the list's extension
 * table (dp_model_ext in model.h): that module's struct starts with this one
 * and `ext` says which of its kinds it is (its name, its free function). */
struct dp_model_ext_kind;
typedef struct dp_ext_object {
        dp_object_header hdr;
        dp_object_meta meta;
        const struct dp_model_ext_kind *ext;
} dp_ext_object;

/* Other projects' PodGroups, read as minMember gangs (spec.minMember; the
 * rest of their spec is accepted and not modelled, their status ignored):
 *   - Volcano, scheduling.volcano.sh/v1beta1: pods join with the annotation
 *     DP_VOLCANO_GROUP_ANNOTATION (what Volcano's job controller writes);
 *   - KAI-Scheduler, scheduling.run.ai/v2alpha2: pods join with the
 *     annotation DP_KAI_GROUP_KEY (also read as a label).
 * A pod joins a group only by its own API's rule (dp_pod_group_has_member). */
#define DP_VOLCANO_GROUP_ANNOTATION "scheduling.k8s.io/group-name"
#define DP_KAI_GROUP_KEY "pod-group-name"
typedef enum {
        DP_POD_GROUP_COSCHEDULING, /* scheduling.x-k8s.io/v1alpha1, scheduling.k8s.io/v1alpha1 */
        DP_POD_GROUP_NATIVE,       /* scheduling.k8s.io/v1alpha2 */
        DP_POD_GROUP_VOLCANO,
        DP_POD_GROUP_KAI,
} dp_pod_group_api;

/* ---- any object ---- */

/* A tagged pointer to one of the structs above; hdr.kind says which. */
typedef union dp_object {
        dp_object_header *hdr;
        dp_resource_slice *slice;
        dp_device_class *device_class;
        dp_resource_claim *claim;
        dp_resource_claim_template *claim_template;
        dp_device_taint_rule *taint_rule;
        dp_node *node;
        dp_pod *pod;
        dp_namespace *ns;
        dp_pod_group *pod_group;
        dp_deployment *deployment;
        dp_priority_class *priority_class;
        dp_ext_object *ext;
        dp_pod_disruption_budget *pdb;
} dp_object;
