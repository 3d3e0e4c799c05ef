/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-adapter.h — the scheduler's one seam to the DRA allocator (alloc/).
 * Everything the scheduler asks of the allocator goes through here, so a
 * change of the allocator's API stays in dra-adapter.c.
 *
 * A dp_sched_dra snapshots a borrowed object list (slices, classes, nodes,
 * namespaces, taint rules, claims; claims already allocated hold their
 * devices), prepares the claims of the pod being scheduled, and tries them
 * node by node. The list and the claims must outlive it.
 *
 * The scheduler keeps one across cycles (dp_sched_dra_new_store): built from
 * the store's slices, classes, nodes, namespaces and taint rules, with the
 * devices of allocated claims marked; a changed claim is re-marked
 * (dp_sched_dra_claim_changed), anything else that changed means a new one.
 */
#pragma once

#include "alloc/adapter.h"
#include "base/strbuf.h"
#include "model/model.h"
#include "sched/store.h"

typedef struct dp_sched_dra dp_sched_dra;

/* `opts`: feature gates for the snapshot (NULL: defaults). */
int dp_sched_dra_new(const dp_object_list *view, const dp_alloc_cluster_options *opts, dp_sched_dra **ret,
                     dp_error *err);
/* From the store as it is now; the objects it reads must stay unchanged
 * while it lives (any write to those kinds calls for a new one). */
int dp_sched_dra_new_store(const dp_store *st, const dp_alloc_cluster_options *opts, dp_sched_dra **ret,
                           dp_error *err);
/* The claim in `slot` changed (allocated, deallocated, deleted, or only its
 * reservations): give back what it held and mark what it holds now. */
int dp_sched_dra_claim_changed(dp_sched_dra *d, const dp_store *st, size_t slot);
/* Free the claims prepared so far (their handles become invalid). */
void dp_sched_dra_forget_claims(dp_sched_dra *d);
dp_sched_dra *dp_sched_dra_free(dp_sched_dra *d);
DEFINE_FREEP(dp_sched_dra, dp_sched_dra_free)

/* Prepare a claim (CEL compiled); its handle goes to *ret_idx. */
int dp_sched_dra_prepare(dp_sched_dra *d, const dp_resource_claim *c, size_t *ret_idx, dp_error *err);

/* Allocate the prepared claims idx[0..n) together on `node`. 1: fit, with
 * *ret_sub the sum of the firstAvailable subrequest indexes chosen (0 when
 * every request got its first choice) and, when ret_allocs is not NULL, n new
 * status.allocation values; 0: no fit, reasons appended to why; <0: error
 * (a selector's run-time error, with err). */
/* The same without building status.allocation: *ret_units gets the number
 * of devices the claims would get (scoring many nodes, converting only the
 * chosen one's results with dp_sched_dra_try). */
int dp_sched_dra_try_count(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                           size_t *ret_units, dp_strbuf *why, dp_error *err);
int dp_sched_dra_try(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                     dp_allocation_result ***ret_allocs, dp_strbuf *why, dp_error *err);

/* ---- what the scheduler remembers per claim shape (dra-adapter.c) ----
 * For the claims idx[0..n) of one pod: whether every node where they fit
 * gets the same number of devices (*units: every request asks for an exact
 * count, no firstAvailable, no All) and no selector can fail at run time,
 * so the best node is the first that fits in score order; and a bitset over
 * the scheduler's node table (nodes_gen names it) of the nodes where claims
 * of this shape did not fit. The snapshot only takes devices away while no
 * claim gives any back, so such a node stays one where they do not fit; a
 * release (dp_sched_dra_claim_changed) forgets every bitset. NULL *ret: no
 * memo (not an error). */
typedef struct dp_sched_dra_memo {
        bool fixed;      /* the same units on every node and no selector error */
        size_t units;    /* devices the claims get where they fit (fixed) */
        uint64_t *failed; /* bit per node of the table */
        uint64_t epoch;   /* counts the times `failed` was cleared */
} dp_sched_dra_memo;
int dp_sched_dra_memo_get(dp_sched_dra *d, const size_t *idx, size_t n, uint64_t nodes_gen, size_t n_nodes,
                          dp_sched_dra_memo **ret);
