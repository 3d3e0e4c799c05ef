/* SPDX-License-Identifier: Apache-2.0
 *
 * adapter.h — Kubernetes objects (model/) to the allocator snapshot, and
 * allocation results back to status.allocation.
 *
 *     dp_alloc_cluster *c = NULL;
 *     dp_alloc_cluster_new(objs, &c, &err);          // slices, classes, nodes,
 *                                                    // namespaces, taint rules,
 *                                                    // claims already allocated
 *     dp_alloc_claim_spec *cs = NULL;
 *     dp_alloc_claim_prepare(c, claim, &cs, &err);   // CEL compiled once per
 *                                                    // distinct expression
 *     ... dp_alloc_allocate(dp_alloc_cluster_snapshot(c), node, &cs->claim, ...)
 *     dp_alloc_result_to_model(c, cs, &res[0], &allocation, &err);
 *
 * The cluster borrows the object list: it must outlive the cluster, and so
 * must each claim passed to dp_alloc_claim_prepare outlive its spec.
 * DeviceTaintRules are merged into device taints here (their NoExecute
 * eviction is another component's job). CEL compile errors are -EINVAL with
 * "<Kind> <name>: <field path>: <CEL message>"; run-time errors surface from
 * dp_alloc_allocate() naming the expression and the device.
 */
#pragma once

#include "alloc/alloc.h"
#include "cel/cel.h"
#include "model/model.h"

typedef struct dp_alloc_cluster dp_alloc_cluster;

/* A claim in the allocator's form, with the arrays it points into. */
typedef struct dp_alloc_claim_spec {
        dp_alloc_claim claim;
        const dp_resource_claim *source;
        /* private */
        void *mem;
} dp_alloc_claim_spec;

int dp_alloc_cluster_new(const dp_object_list *objs, dp_alloc_cluster **ret, dp_error *err);
/* Feature gates, as kube-scheduler's --feature-gates (defaults: on). */
typedef struct dp_alloc_cluster_options {
        bool compat_groups_off; /* DRADeviceCompatibilityGroups=false: pools with groups are incomplete */
        /* DRAListTypeAttributes=true (alpha in 1.36, off by default): list-typed
         * attributes reach CEL as lists (includes(), dyn results) and take part
         * in constraints; off, a selector evaluated on a device that has one
         * fails, as the scheduler's does */
        bool list_type_attributes;
        /* dp_alloc_run_claims_opts only: keep each node's own reason lines of
         * a claim that does not fit (dp_alloc_outcome.why), for
         * dp_alloc_run_print_why with details; without, only the grouped line */
        bool details;
} dp_alloc_cluster_options;
/* One --feature-gates argument ("DRADeviceCompatibilityGroups=true|false", ...) into
 * opts; -EINVAL for anything else (DP_ALLOC_FEATURE_GATES names the known). */
#define DP_ALLOC_FEATURE_GATES "DRADeviceCompatibilityGroups=true|false, DRAListTypeAttributes=true|false"
int dp_alloc_parse_feature_gate(const char *arg, dp_alloc_cluster_options *opts);
/* The CEL options the allocator compiles selectors with under these gates
 * (opts may be NULL: the defaults); `devplane cel` uses them too, so both
 * accept and refuse the same expressions. */
void dp_alloc_cel_options(const dp_alloc_cluster_options *opts, dp_cel_options *ret);
int dp_alloc_cluster_new_opts(const dp_object_list *objs, const dp_alloc_cluster_options *opts, dp_alloc_cluster **ret,
                              dp_error *err);
dp_alloc_cluster *dp_alloc_cluster_free(dp_alloc_cluster *c);
DEFINE_FREEP(dp_alloc_cluster, dp_alloc_cluster_free)
dp_alloc_snapshot *dp_alloc_cluster_snapshot(dp_alloc_cluster *c);

int dp_alloc_claim_prepare(dp_alloc_cluster *c, const dp_resource_claim *claim, dp_alloc_claim_spec **ret, dp_error *err);
dp_alloc_claim_spec *dp_alloc_claim_spec_free(dp_alloc_claim_spec *cs);
DEFINE_FREEP(dp_alloc_claim_spec, dp_alloc_claim_spec_free)

/* status.allocation for one claim's result: results (tolerations, share IDs,
 * consumed capacity under the device's own capacity names, binding
 * conditions, skipNodeOperations), config (class configs of the requests
 * used, then the claim's configs that apply), nodeSelector. No timestamp,
 * so the same inputs give the same bytes. */
int dp_alloc_result_to_model(dp_alloc_cluster *c, const dp_alloc_claim_spec *cs, const dp_alloc_result *r,
                             dp_allocation_result **ret, dp_error *err);

/* ---- `devplane allocate` as a library call ---- */

typedef struct dp_alloc_outcome {
        const dp_resource_claim *claim; /* the input claim */
        dp_allocation_result *allocation; /* its status.allocation; NULL when it did not fit */
        char *node;                     /* where it was allocated */
        /* when it did not fit: the reasons grouped by node, what follows
         * "ResourceClaim ns/name: not allocated" (": 0/500 nodes are available:
         * 500 nodes: ..."); and, when the run kept details, each node's own
         * "node: request ...: reason" lines (else NULL) */
        char *reason;
        char *why;
} dp_alloc_outcome;

typedef struct dp_alloc_run {
        dp_alloc_outcome *items; /* unallocated input claims, in input order */
        size_t n;
        size_t n_failed;
        uint64_t effort;
        char **nodes; /* every node's name, in name order */
        size_t n_nodes;
        bool one_node; /* --node: only that node was tried */
} dp_alloc_run;

/* Allocate every claim of `objs` without status.allocation, in input order,
 * each on the first node (by name) where it fits, or on `node` if given;
 * devices taken by earlier claims (and by claims already allocated in the
 * input) stay taken. Errors: -EINVAL/-E2BIG for bad input (CEL, unknown
 * node) with err naming object and field, a selector's run-time error. */
int dp_alloc_run_claims(const dp_object_list *objs, const char *node, dp_alloc_run **ret, dp_error *err);
/* The same with a step budget per claim and node (0: DP_ALLOC_RUN_MAX_EFFORT);
 * past it the run fails with -ETIME. */
#define DP_ALLOC_RUN_MAX_EFFORT 50000000ULL
int dp_alloc_run_claims_budget(const dp_object_list *objs, const char *node, uint64_t max_effort, dp_alloc_run **ret,
                               dp_error *err);
/* The same with feature gates (`opts` may be NULL). */
int dp_alloc_run_claims_opts(const dp_object_list *objs, const char *node, uint64_t max_effort,
                             const dp_alloc_cluster_options *opts, dp_alloc_run **ret, dp_error *err);
dp_alloc_run *dp_alloc_run_free(dp_alloc_run *r);
DEFINE_FREEP(dp_alloc_run, dp_alloc_run_free)

typedef enum {
        DP_ALLOC_OUTPUT_YAML,
        DP_ALLOC_OUTPUT_JSON,
        DP_ALLOC_OUTPUT_TABLE,
} dp_alloc_output;

/* The claims (one object, or a List when several) with status.allocation,
 * or a table; `out` gets the report, `why` (may be NULL) the reasons of
 * claims that did not fit, as dp_alloc_run_print_why() without details. */
int dp_alloc_run_print(const dp_alloc_run *r, dp_alloc_output fmt, dp_strbuf *out, dp_strbuf *why);
/* The same bytes as dp_alloc_run_print() (without `why`), written to f as
 * they are made through a buffer of 64 KiB; 0, -ENOMEM (part of the report
 * may be written) or -EIO. */
int dp_alloc_run_write(const dp_alloc_run *r, dp_alloc_output fmt, FILE *f);
/* One line per claim that did not fit, reasons grouped with node counts as
 * kube-scheduler does: "ResourceClaim ns/name: not allocated: 0/500 nodes
 * are available: 320 nodes: REASON; 180 nodes: REASON" (the names of the
 * claims holding devices left out of REASON, so that nodes full for the same
 * reason count together; lines about no node appended). With `details`,
 * each node's own lines follow, indented ("  node: request r: ..."), when
 * the run kept them (dp_alloc_cluster_options.details). */
int dp_alloc_run_print_why(const dp_alloc_run *r, bool details, dp_strbuf *why);
