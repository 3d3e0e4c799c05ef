/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc.h — the structured DRA allocator over an interned snapshot.
 *
 * The allocator never sees Kubernetes objects: a caller (alloc/adapter.c for
 * model objects, the fuzzers, the benchmarks) builds a dp_alloc_snapshot from
 * plain specs, then asks for allocations node by node. Behaviour follows the
 * upstream 1.36 "incubating" allocator (reference/dra-semantics.md §1b/§1d)
 * with the upstream bugs of §3 fixed and the 1.37 compatibility groups and
 * skipNodeOperations added; docs/alloc.md lists the rules.
 *
 * Lifecycle:
 *   1. dp_alloc_snapshot_new(), dp_alloc_set_selector_fn(),
 *      dp_alloc_add_node()/add_slice()/add_device()/add_selector().
 *      Every string and array handed in is copied; specs may be freed after
 *      the call returns.
 *   2. The first dp_alloc_mark_allocated()/dp_alloc_allocate() freezes the
 *      snapshot (pools grouped, generations resolved, pools and slices sorted,
 *      validity checked). Adding slices or devices afterwards is -EBUSY.
 *   3. dp_alloc_allocate() for (node, claims); on success the caller may
 *      dp_alloc_commit() the result so later claims see the devices taken.
 *
 * Quantities (capacities, counters, capacity requests) are exact values in
 * nano units, the representation of model/quantity.h.
 *
 * Error convention: base/macros.h. dp_alloc_allocate() returns 1 when the
 * claims fit on the node, 0 when they do not (reasons appended to `why`), and
 * a negative errno when allocation cannot be decided (a selector failed at
 * run time: -EINVAL with err; the effort limit: -ETIME; -ENOMEM) or the
 * claims fail as upstream fails them, on every node (-EDOM with err: an
 * allocationMode All request reached a device that breaks a constraint).
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"

/* Kubernetes limits the allocator enforces (resource.k8s.io/v1 constants). */
#define DP_ALLOC_RESULTS_MAX 32        /* AllocationResultsMaxSize */
#define DP_ALLOC_REQUESTS_MAX 32       /* DeviceRequestsMaxSize */
#define DP_ALLOC_CONSTRAINTS_MAX 32    /* DeviceConstraintsMaxSize */
#define DP_ALLOC_FIRST_AVAILABLE_MAX 8 /* FirstAvailableDeviceRequestMaxSize */
#define DP_ALLOC_SELECTORS_MAX 32      /* DeviceSelectorsMaxSize */
#define DP_ALLOC_TOLERATIONS_MAX 16    /* DeviceTolerationsMaxLength */
#define DP_ALLOC_GROUPS_MAX 2          /* compatibilityGroups per consumesCounters entry */
#define DP_ALLOC_LIST_VALUES_MAX 48    /* ResourceSliceMaxAttributeValuesPerDevice */
#define DP_ALLOC_ADMIN_LABEL "resource.kubernetes.io/admin-access"

typedef struct dp_alloc_snapshot dp_alloc_snapshot;

typedef enum {
        DP_ALLOC_ATTR_INT,
        DP_ALLOC_ATTR_BOOL,
        DP_ALLOC_ATTR_STRING,
        DP_ALLOC_ATTR_VERSION,
        /* DRAListTypeAttributes (1.36 alpha): elems[0..n_elems) of one scalar
         * type. matchAttribute then asks for a value every device has (a
         * scalar is a list of one), distinctAttribute for devices that share
         * none; an empty list satisfies neither (as upstream). */
        DP_ALLOC_ATTR_LIST,
} dp_alloc_attr_type;

typedef struct dp_alloc_attr {
        const char *name; /* "domain/id", or "id" (then it belongs to the driver's domain) */
        dp_alloc_attr_type type;
        int64_t i;        /* INT */
        bool b;           /* BOOL */
        const char *s;    /* STRING, VERSION */
        const struct dp_alloc_attr *elems; /* LIST: scalars, names unused */
        size_t n_elems;                    /* LIST, at most DP_ALLOC_LIST_VALUES_MAX */
} dp_alloc_attr;

/* The flags before the values: no padding after each bool (the snapshot
 * keeps one of these per device capacity). */
typedef struct dp_alloc_capacity {
        const char *name;
        const __int128 *valid_values; /* ascending */
        size_t n_valid_values;
        bool has_policy, has_default, has_range, has_max, has_step;
        __int128 value;
        __int128 def;
        __int128 min, max, step;
} dp_alloc_capacity;

typedef struct dp_alloc_counter {
        const char *name;
        __int128 value;
} dp_alloc_counter;

typedef struct dp_alloc_counter_set {
        const char *name;
        const dp_alloc_counter *counters;
        size_t n_counters;
} dp_alloc_counter_set;

typedef struct dp_alloc_consumption {
        const char *counter_set;
        const dp_alloc_counter *counters;
        size_t n_counters;
        const char *const *groups; /* compatibilityGroups; none = "no groups" */
        size_t n_groups;
} dp_alloc_consumption;

typedef struct dp_alloc_taint {
        const char *key, *value, *effect;
} dp_alloc_taint;

typedef struct dp_alloc_toleration {
        const char *key, *op, *value, *effect; /* op "Exists" or "Equal" (also "" = Equal) */
        bool has_seconds;
        int64_t seconds;
} dp_alloc_toleration;

typedef enum {
        DP_ALLOC_NS_IN,
        DP_ALLOC_NS_NOT_IN,
        DP_ALLOC_NS_EXISTS,
        DP_ALLOC_NS_DOES_NOT_EXIST,
        DP_ALLOC_NS_GT,
        DP_ALLOC_NS_LT,
} dp_alloc_ns_op;

typedef struct dp_alloc_ns_req {
        const char *key;
        dp_alloc_ns_op op;
        const char *const *values;
        size_t n_values;
} dp_alloc_ns_req;

typedef struct dp_alloc_ns_term {
        const dp_alloc_ns_req *exprs; /* matchExpressions over node labels */
        size_t n_exprs;
        const dp_alloc_ns_req *fields; /* matchFields: only metadata.name */
        size_t n_fields;
} dp_alloc_ns_term;

/* A v1.NodeSelector: terms ORed, requirements of one term ANDed. */
typedef struct dp_alloc_node_selector {
        const dp_alloc_ns_term *terms;
        size_t n_terms;
} dp_alloc_node_selector;

typedef struct dp_alloc_label {
        const char *key, *value;
} dp_alloc_label;

typedef struct dp_alloc_slice_spec {
        const char *name; /* metadata.name: slices are searched in name order */
        const char *driver;
        const char *pool;
        int64_t generation;
        int64_t slice_count; /* pool.resourceSliceCount */
        /* node selection: at most one of these, or per_device_node_selection */
        const char *node_name;
        bool all_nodes;
        const dp_alloc_node_selector *node_selector;
        bool per_device_node_selection;
        const dp_alloc_counter_set *counter_sets; /* sharedCounters */
        size_t n_counter_sets;
        const char *const *skip_node_operations; /* 1.37, copied into results */
        size_t n_skip_node_operations;
} dp_alloc_slice_spec;

typedef struct dp_alloc_device_spec {
        const char *name;
        const dp_alloc_attr *attrs;
        size_t n_attrs;
        const dp_alloc_capacity *caps;
        size_t n_caps;
        const dp_alloc_consumption *consumes;
        size_t n_consumes;
        const dp_alloc_taint *taints; /* DeviceTaintRules already merged by the caller */
        size_t n_taints;
        bool allow_multiple_allocations;
        /* per-device node selection (slice has per_device_node_selection) */
        const char *node_name;
        bool all_nodes;
        const dp_alloc_node_selector *node_selector;
        bool binds_to_node;
        const char *const *binding_conditions;
        size_t n_binding_conditions;
        const char *const *binding_failure_conditions;
        size_t n_binding_failure_conditions;
        void *user; /* handed to the selector callback, never touched */
} dp_alloc_device_spec;

/* Selector evaluation, supplied by the caller (the CEL adapter compiles each
 * distinct expression once and registers it with dp_alloc_add_selector).
 * Returns 1 (selected), 0 (not), or a negative errno with err filled (a
 * run-time error: allocation is then undecidable). Called at most once per
 * (selector, device) per snapshot: results are cached in bitsets. */
typedef int (*dp_alloc_selector_fn)(void *userdata, void *selector, void *device_user, dp_error *err);

typedef struct dp_alloc_capacity_request {
        const char *name;
        __int128 value;
} dp_alloc_capacity_request;

/* One way to satisfy a request: the `exactly` body, or one firstAvailable entry. */
typedef struct dp_alloc_subrequest {
        const char *name;         /* firstAvailable entry name; NULL for exactly */
        const char *device_class; /* for messages */
        const uint32_t *class_selectors; /* selector ids, checked first */
        size_t n_class_selectors;
        const uint32_t *selectors;
        size_t n_selectors;
        bool all;      /* allocationMode All */
        int64_t count; /* ExactCount */
        bool admin_access;
        const dp_alloc_toleration *tolerations;
        size_t n_tolerations;
        const dp_alloc_capacity_request *capacity;
        size_t n_capacity;
        /* A class the claim names does not exist: the request cannot be met
         * (reason "device class X not found"). */
        bool class_missing;
} dp_alloc_subrequest;

typedef struct dp_alloc_request {
        const char *name;
        bool first_available; /* subs are firstAvailable entries (else n_subs == 1) */
        const dp_alloc_subrequest *subs;
        size_t n_subs;
} dp_alloc_request;

typedef struct dp_alloc_constraint {
        const char *const *requests; /* "req" or "req/sub"; none = all requests */
        size_t n_requests;
        const char *match_attribute;    /* exactly one of these two */
        const char *distinct_attribute;
} dp_alloc_constraint;

typedef struct dp_alloc_claim {
        const char *ns, *name, *uid;
        bool admin_access_allowed; /* namespace carries DP_ALLOC_ADMIN_LABEL=true */
        const dp_alloc_request *requests;
        size_t n_requests;
        const dp_alloc_constraint *constraints;
        size_t n_constraints;
} dp_alloc_claim;

typedef struct dp_alloc_consumed {
        const char *name; /* capacity name, owned by the snapshot */
        __int128 value;
} dp_alloc_consumed;

/* One allocated device. Strings are owned by the snapshot (they live as long
 * as it does); arrays are owned by the result. */
typedef struct dp_alloc_device_result {
        char *request; /* "req" or "req/sub", owned by the result */
        uint32_t request_index, sub_index;
        uint32_t device; /* snapshot device id */
        const char *driver, *pool, *device_name;
        bool admin_access;
        char share_id[40]; /* "" unless the device allows multiple allocations */
        dp_alloc_consumed *consumed;
        size_t n_consumed;
        const char *const *binding_conditions;
        size_t n_binding_conditions;
        const char *const *binding_failure_conditions;
        size_t n_binding_failure_conditions;
        const char *const *skip_node_operations;
        size_t n_skip_node_operations;
} dp_alloc_device_result;

typedef enum {
        DP_ALLOC_NODES_ALL = 0, /* nodeSelector nil: reachable from every node */
        DP_ALLOC_NODES_NAME,    /* metadata.name In [node] (matchFields) */
        DP_ALLOC_NODES_TERM,    /* one term merged from slice/device node selectors */
} dp_alloc_nodes_kind;

typedef struct dp_alloc_result {
        dp_alloc_device_result *devices;
        size_t n_devices;
        dp_alloc_nodes_kind nodes;
        const char *node_name; /* NODES_NAME */
        dp_alloc_ns_req *term_exprs, *term_fields; /* NODES_TERM; point into the snapshot */
        size_t n_term_exprs, n_term_fields;
} dp_alloc_result;

typedef struct dp_alloc_options {
        uint64_t max_effort; /* 0 = unlimited; else -ETIME after this many search steps */
        bool explain;        /* append per-request reasons to `why` on failure */
} dp_alloc_options;

typedef struct dp_alloc_stats {
        uint64_t effort;   /* search steps (devices tried), summed over calls */
        uint64_t pruned;   /* branches cut by counting */
        uint64_t selector_evals;
        size_t peak_bytes; /* snapshot + scratch */
} dp_alloc_stats;

dp_alloc_snapshot *dp_alloc_snapshot_new(void);
dp_alloc_snapshot *dp_alloc_snapshot_free(dp_alloc_snapshot *s);
DEFINE_FREEP(dp_alloc_snapshot, dp_alloc_snapshot_free)

void dp_alloc_set_selector_fn(dp_alloc_snapshot *s, dp_alloc_selector_fn fn, void *userdata);
/* Register a selector; `selector` is an opaque pointer handed back to fn. */
int dp_alloc_add_selector(dp_alloc_snapshot *s, void *selector, uint32_t *ret_id);
/* How many of each the caller is about to add: the snapshot sizes its arrays
 * to these up front instead of growing them by doubling (a hint: more still
 * works, fewer wastes nothing). -ENOMEM, or -EBUSY once frozen. */
typedef struct dp_alloc_sizes {
        size_t nodes, labels, slices, devices, attributes, capacities, taints;
} dp_alloc_sizes;
int dp_alloc_reserve(dp_alloc_snapshot *s, const dp_alloc_sizes *n);
/* Nodes named by slices are added implicitly (without labels). */
int dp_alloc_add_node(dp_alloc_snapshot *s, const char *name, const dp_alloc_label *labels, size_t n_labels);
int dp_alloc_add_slice(dp_alloc_snapshot *s, const dp_alloc_slice_spec *spec, uint32_t *ret_slice);
int dp_alloc_add_device(dp_alloc_snapshot *s, uint32_t slice, const dp_alloc_device_spec *spec, uint32_t *ret_device);

/* Feature gate DRADeviceCompatibilityGroups (1.37; on by default). Off: a
 * pool whose devices carry compatibilityGroups is incomplete and skipped, as
 * kube-scheduler does with the gate off. Before freezing only (-EBUSY after). */
int dp_alloc_set_compat_groups(dp_alloc_snapshot *s, bool enabled);

/* Freeze explicitly (otherwise the first use does it). */
int dp_alloc_freeze(dp_alloc_snapshot *s, dp_error *err);
size_t dp_alloc_node_count(dp_alloc_snapshot *s);
/* Nodes in name order (after freezing). */
const char *dp_alloc_node_name(dp_alloc_snapshot *s, size_t i);
size_t dp_alloc_device_count(const dp_alloc_snapshot *s);
/* Find a device of the current pool generation: -ENOENT if there is none. */
int dp_alloc_find_device(dp_alloc_snapshot *s, const char *driver, const char *pool, const char *device, uint32_t *ret);

/* Record a device held by an existing claim (`holder` names it in reasons).
 * share_id non-NULL marks one share of a multi-allocatable device; consumed
 * lists the capacity it holds (missing capacities hold nothing). Admin-access
 * results must not be passed here: they do not count as allocated. */
int dp_alloc_mark_allocated(dp_alloc_snapshot *s, uint32_t device, const char *holder, const char *share_id,
                            const dp_alloc_consumed *consumed, size_t n_consumed);

/* Allocate claims[0..n) together on `node`. On 1, *ret_results is an array of
 * n results (free with dp_alloc_results_free). */
int dp_alloc_allocate(dp_alloc_snapshot *s, const char *node, const dp_alloc_claim *const *claims, size_t n_claims,
                      const dp_alloc_options *opts, dp_alloc_result **ret_results, dp_strbuf *why, dp_error *err);
/* Allocate on the first node in name order where the claims fit (*ret_node
 * is its index, dp_alloc_node_name gives the name). 0 when no node fits;
 * with opts->explain (or opts NULL) `why` gets "node: reason" lines for
 * every node. Nodes where claims of the same shape failed before are not
 * tried again: without dp_alloc_release allocation only ever takes
 * resources away (firstfit.c). */
int dp_alloc_allocate_first_fit(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims,
                                const dp_alloc_options *opts, size_t *ret_node, dp_alloc_result **ret_results,
                                dp_strbuf *why, dp_error *err);
/* The reasons claims do not fit, node by node in name order, as
 * dp_alloc_allocate_first_fit puts them in `why` after a failure (without
 * the "node: " prefixes): fn gets each node's index, name and reason lines
 * ('\n'-terminated; len 0 when there are none), valid during the call only.
 * fn returns 0 to go on or a negative errno, which ends the walk and is
 * returned. Search errors (-ETIME, -EDOM, -EINVAL with err) end it too. */
typedef int (*dp_alloc_node_reason_fn)(void *userdata, size_t node_index, const char *name, const char *text, size_t len);
int dp_alloc_explain_nodes(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims,
                           const dp_alloc_options *opts, dp_alloc_node_reason_fn fn, void *userdata, dp_error *err);
/* Take the devices of a result (non-admin ones) for later allocations. */
int dp_alloc_commit(dp_alloc_snapshot *s, const dp_alloc_claim *claim, const dp_alloc_result *r);
dp_alloc_result *dp_alloc_results_free(dp_alloc_result *r, size_t n);
/* The inverse of dp_alloc_mark_allocated / dp_alloc_commit: give one share
 * (or the whole exclusive device) back, with the capacity it held. -EINVAL
 * if the device is not taken. Releasing makes allocation non-monotone, so
 * it also forgets the first-fit frontiers. */
int dp_alloc_release(dp_alloc_snapshot *s, uint32_t device, const dp_alloc_consumed *consumed, size_t n_consumed);
int dp_alloc_uncommit(dp_alloc_snapshot *s, const dp_alloc_result *r);
/* A number that changes whenever devices are taken or given back (mark,
 * commit, release): equal numbers mean the same allocation state, so the
 * same claims get the same answer and the same reasons. */
uint64_t dp_alloc_version(const dp_alloc_snapshot *s);

void dp_alloc_get_stats(const dp_alloc_snapshot *s, dp_alloc_stats *ret);
