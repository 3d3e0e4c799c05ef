/* SPDX-License-Identifier: Apache-2.0
 *
 * reasons.h — why a claim of `devplane allocate` did not fit, grouped at the
 * time of the claim (claims.c; not installed).
 *
 * A failed claim keeps one line, "0/500 nodes are available: 320 nodes:
 * REASON; 180 nodes: REASON" (dp_alloc_outcome.reason), and each node's own
 * lines (dp_alloc_outcome.why) only when details were asked for: 500 nodes
 * times 500 failed claims of text are not kept to be grouped at the end.
 */
#pragma once

#include "alloc/adapter.h"

typedef struct alloc_reasons alloc_reasons;

/* For one run over snapshot s: `one_node` (--node: "0/1 nodes"), `details`
 * (keep each node's lines). NULL on OOM. */
alloc_reasons *alloc_reasons_new(dp_alloc_snapshot *s, bool one_node, bool details);
alloc_reasons *alloc_reasons_free(alloc_reasons *rs);
DEFINE_FREEP(alloc_reasons, alloc_reasons_free)

/* The claim fits on no node (dp_alloc_allocate_first_fit answered 0): the
 * reasons of every node into o->reason (and o->why with details). Claims of
 * the same shape, names and classes get the same reasons while nothing is
 * allocated in between, so those are kept and reused. 0, -ENOMEM, or the
 * error of a search (-ETIME, -EDOM, -EINVAL with err) that ends the walk. */
int alloc_reasons_first_fit(alloc_reasons *rs, const dp_alloc_claim *cl, const dp_alloc_options *opts,
                            dp_alloc_outcome *o, dp_error *err);
/* o->reason from reason lines, "node: ..." for a node's own (--node, a
 * claim's error); `text` is taken, kept as o->why with details, else freed.
 * 0 or -ENOMEM. */
int alloc_reasons_from_text(alloc_reasons *rs, char *text, dp_alloc_outcome *o);
