/* SPDX-License-Identifier: Apache-2.0
 *
 * html.h — `devplane simulate --report FILE.html`: the simulation's report as
 * one self-contained HTML page (inline CSS and inline SVG; no script, no
 * external resource): the fleet as nodes and devices coloured by the pods
 * that hold them, MIG instances and DRA partitions inside their GPU,
 * time-sliced replicas as shares of one GPU, unhealthy devices marked, the
 * V1-vs-V2 comparison side by side, Pending pods with their reasons, and the
 * timeline's events.
 *
 * The page is drawn from the report document dp_sim_report() makes (-o json),
 * so it shows exactly what the tables and JSON show. Every string that came
 * from input (pod, node, device names, reasons) is escaped for HTML.
 * Deterministic: the same input gives the same bytes.
 *
 * Large fleets: at most DP_SIM_HTML_NODES_MAX nodes, DP_SIM_HTML_PODS_MAX pods
 * and DP_SIM_HTML_EVENTS_MAX events are listed; the page says how many were
 * left out.
 */
#pragma once

#include "base/strbuf.h"
#include "sched/sim.h"

#define DP_SIM_HTML_NODES_MAX 256
#define DP_SIM_HTML_PODS_MAX 4096
#define DP_SIM_HTML_EVENTS_MAX 5000

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
 * all-V2 runs' documents, NULL to leave one out): no JSON in between. */
int dp_sim_html_render_doc(const dp_doc_node *doc, const dp_doc_node *const forced_runs[2], dp_strbuf *out,
                           dp_error *err);
int dp_sim_html_from_json(const char *json, size_t len, dp_strbuf *out, dp_error *err);
