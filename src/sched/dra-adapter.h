/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-adapter.h — the scheduler's one seam to the DRA allocator (alloc/).
 * Everything the scheduler asks of the allocator goes through here, so a
 * change of the allocator's API stays in dra-adapter.c.
 *
 * One dp_sched_dra lives for one scheduling cycle: it snapshots a borrowed
 * object list (slices, classes, nodes, namespaces, taint rules, claims; claims
 * already allocated hold their devices), prepares the claims of the pod being
 * scheduled, and tries them node by node. The list and the claims must
 * outlive it.
 */
#pragma once

#include "base/strbuf.h"
#include "model/model.h"

typedef struct dp_sched_dra dp_sched_dra;

int dp_sched_dra_new(const dp_object_list *view, dp_sched_dra **ret, dp_error *err);
dp_sched_dra *dp_sched_dra_free(dp_sched_dra *d);
DEFINE_FREEP(dp_sched_dra, dp_sched_dra_free)

/* Prepare a claim (CEL compiled); its handle goes to *ret_idx. */
int dp_sched_dra_prepare(dp_sched_dra *d, const dp_resource_claim *c, size_t *ret_idx, dp_error *err);

/* Allocate the prepared claims idx[0..n) together on `node`. 1: fit, with
 * *ret_sub the sum of the firstAvailable subrequest indexes chosen (0 when
 * every request got its first choice) and, when ret_allocs is not NULL, n new
 * status.allocation values; 0: no fit, reasons appended to why; <0: error
 * (a selector's run-time error, with err). */
int dp_sched_dra_try(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                     dp_allocation_result ***ret_allocs, dp_strbuf *why, dp_error *err);
