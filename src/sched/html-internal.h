/* SPDX-License-Identifier: Apache-2.0
 *
 * html-internal.h — what the report page's files share (html.c draws the
 * page, html-overview.c its first screen): reading the report document and
 * escaping for HTML.
 */
#pragma once

#include "base/strbuf.h"
#include "doc/doc.h"

/* The scalar at key of a map node, "" when absent or not a scalar. */
const char *dp_html_str(const dp_doc_node *n, const char *key);
/* Text and attribute values alike: & < > " ' escaped, control characters
 * other than newline and tab dropped. */
void dp_html_esc(dp_strbuf *o, const char *s);
/* A node model's badge ("v1", "v2", "both", "cpu"): its class, and its words in *ret_text. */
const char *dp_html_model_badge(const char *model, const char **ret_text);

/* The overview (docs/report.md): per pool (the node document's "pool", else
 * its model), its nodes, their accelerators in use, and one square per node
 * shaded by the share of its accelerators held, each a link to the node's
 * card ("#n-<index>", for the first `linked` nodes). -ENOMEM. */
int dp_html_overview(dp_strbuf *o, const dp_doc_node *nodes, size_t linked);

/* ---- folding the node cards of a large fleet (html-fold.c) ---- */

/* Folding starts at this many nodes drawn: a small page shows every card. */
#define DP_HTML_FOLD_MIN_NODES 64

/* keys[i]: what node i must share with another to be folded into its card
 * ("" or NULL: always drawn). *ret_fold[i] is the node whose card stands
 * for node i, the first of those with its key, i itself when drawn (every
 * node its own below DP_HTML_FOLD_MIN_NODES). The caller frees it. -ENOMEM. */
int dp_html_fold(char *const *keys, size_t n, size_t **ret_fold);
/* In the card of node rep, the nodes folded into it: "+N more nodes like
 * this one", their names (each "#n-<index>", class "f" for the filter) one
 * click away. Nothing when none is. */
void dp_html_fold_list(dp_strbuf *o, const dp_doc_node *nodes, const size_t *fold, size_t n, size_t rep);

/* The Timeline section (html-timeline.c): the run's events on a time axis,
 * one row per kind, and the event list (at most DP_SIM_HTML_EVENTS_MAX). */
void dp_html_timeline(dp_strbuf *o, const dp_doc_node *run);

/* The Queues section (html-queue.c): per Kueue ClusterQueue (at most
 * DP_SIM_HTML_QUEUES_MAX) and Cohort (DP_SIM_HTML_COHORTS_MAX) its quota
 * used over time as step charts, from asWritten.queues.usageOverTime.
 * Nothing when the run has none (dp_html_has_queues false). */
bool dp_html_has_queues(const dp_doc_node *run);
void dp_html_queues(dp_strbuf *o, const dp_doc_node *run);
