/* SPDX-License-Identifier: Apache-2.0
 *
 * html.h — `devplane simulate --report FILE.html`: the simulation's report as
 * one self-contained HTML page (inline CSS, inline SVG and a few lines of
 * inline script for the filter box; no external resource): the fleet as
 * nodes and devices coloured by the workload (owner) of the pods that hold
 * them, MIG instances and DRA partitions inside their GPU, time-sliced
 * replicas as shares of one GPU, unhealthy devices marked, the V1-vs-V2
 * comparison side by side, Pending pods grouped by kube-scheduler's reason
 * with the per-node reasons one click away, and the timeline's events.
 *
 * The page is drawn from the report document dp_sim_report() makes (-o json),
 * so it shows exactly what the tables and JSON show, plus what the document
 * does not hold (dp_sim_html_extra). Every string that came from input (pod,
 * node, device names, reasons) is escaped for HTML. Deterministic: the same
 * input gives the same bytes.
 *
 * Large fleets: at most DP_SIM_HTML_NODES_MAX nodes, DP_SIM_HTML_PODS_MAX pods,
 * DP_SIM_HTML_WORKLOADS_MAX legend entries and DP_SIM_HTML_EVENTS_MAX events
 * are listed; the page says how many were left out. docs/report.md.
 */
#pragma once

#include "base/strbuf.h"
#include "sched/sim.h"

#define DP_SIM_HTML_NODES_MAX 1000
#define DP_SIM_HTML_PODS_MAX 10000
#define DP_SIM_HTML_WORKLOADS_MAX 2000
#define DP_SIM_HTML_EVENTS_MAX 5000
/* ClusterQueues and Cohorts whose usage over time is drawn (Queues section) */
#define DP_SIM_HTML_QUEUES_MAX 100
#define DP_SIM_HTML_COHORTS_MAX 40
/* Pending groups that get the per-node reasons (a diagnosis each) */
#define DP_SIM_HTML_DIAG_MAX 32

/* What the page shows that the report document does not hold. */
typedef struct dp_sim_html_extra {
        bool cluster; /* the input is a cluster dump (Node objects, no Fleet): "Cluster NAME" */
        /* pod key -> its workload, "Kind/name" (unowned pods: absent or NULL) */
        const char *const *pod_keys;
        const char *const *workloads;
        size_t n_pods;
        /* pod key -> `devplane explain pod` 's reasons by node for that Pending pod */
        const char *const *diag_keys;
        const char *const *diag_texts;
        size_t n_diag;
} dp_sim_html_extra;

/* Run the simulation (dp_sim_report) and append the page to out.
 * 0, or <0 with err as dp_sim_report (-ENOMEM). */
int dp_sim_html(const dp_sim_input *in, dp_strbuf *out, dp_error *err);

/* The page from a report document already made (dp_sim_report's -o json
 * text). -EINVAL (err) when it is not one. */
/* The same, with the documents {"asWritten": run} of the runs with every
 * node on V1 and on V2 (forced: NULL to leave them out). */
int dp_sim_html_render(const char *json, size_t len, const char *const forced[2], const size_t forced_len[2],
                       dp_strbuf *out, dp_error *err);
/* The same from the documents in memory (the report's, and the all-V1 and
 * all-V2 runs' documents, NULL to leave one out): no JSON in between.
 * extra may be NULL (pods coloured one by one, no per-node reasons). */
int dp_sim_html_render_doc(const dp_doc_node *doc, const dp_doc_node *const forced_runs[2],
                           const dp_sim_html_extra *extra, dp_strbuf *out, dp_error *err);
int dp_sim_html_from_json(const char *json, size_t len, dp_strbuf *out, dp_error *err);
