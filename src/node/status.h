/* SPDX-License-Identifier: Apache-2.0
 *
 * status.h — reading the node's status file (<plugin-dir>/
 * devplane_node_status.json) and printing it: a table for people, `-o
 * json|yaml`, or "flat" lines for scripts, one fact per line:
 *   node <name> <running|stopped> pid=<pid> generation=<n>
 *   checkpoint-error <message>          (the checkpoint at start was damaged or missing)
 *   checkpoint-write-error <message>    (the last checkpoint write failed; retried)
 *   resource <name> capacity=<c> allocatable=<a> inuse=<u> plugin=<connected|disconnected|none>
 *            [withheld=<id>,...]        (devices nobody gets while pods are unproven)
 *   unproven <ns>/<pod> uid=<uid> <resource>  (holdings the node cannot prove)
 *   device <resource> <id> <Healthy|Unhealthy> [holder=<ns>/<pod>/<container>]
 *   pod <ns>/<name> phase=<Pending|Admitting|Waiting|Running> attempts=<n> allocate-calls=<n>
 *   pod-message <ns>/<name> <message>
 *   container <ns>/<pod>/<container> <resource>=<id>[,<id>...]
 *   env <ns>/<pod>/<container> <KEY>=<value>
 *   manifest-error <file> <message>
 * dp_node_status_wait() blocks (inotify on the plugin directory, no polling)
 * until every condition holds: a condition is a substring that some flat line
 * must contain, or "!substring" that no line may contain.
 */
#pragma once

#include "doc/doc.h"

typedef enum {
        DP_NODE_STATUS_TABLE,
        DP_NODE_STATUS_JSON,
        DP_NODE_STATUS_YAML,
        DP_NODE_STATUS_FLAT
} dp_node_status_format;

/* Parse the status file of plugin_dir into s; *ret is its root. -ENOENT when
 * the node has not written one yet. */
int dp_node_status_read(const char *plugin_dir, dp_doc_set *s, dp_doc_node **ret, dp_error *err);
void dp_node_status_print(dp_strbuf *out, const dp_doc_node *root, dp_node_status_format fmt);
/* -ETIMEDOUT when timeout_ms passes first (the last flat status is left in
 * `last`, if not NULL, for a diagnostic). */
int dp_node_status_wait(const char *plugin_dir, const char *const *conds, size_t n_conds, int timeout_ms,
                        dp_strbuf *last, dp_error *err);
