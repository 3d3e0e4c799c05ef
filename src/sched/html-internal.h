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
