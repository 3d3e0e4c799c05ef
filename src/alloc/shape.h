/* SPDX-License-Identifier: Apache-2.0
 *
 * shape.h — for callers that remember allocation outcomes per claim shape
 * across calls (the scheduler, sched/dra-adapter.c).
 */
#pragma once

#include "alloc/alloc.h"

/* Append the exact serialisation of everything in claims[0..n) that decides
 * feasibility (selector ids, counts, modes, tolerations, capacity requests,
 * names constraints refer to; the same fields as the key of
 * dp_alloc_allocate_first_fit; claim names are not part of it). */
void dp_alloc_claims_shape(const dp_alloc_claim *const *claims, size_t n_claims, dp_strbuf *out);

/* The shape and whatever else the reasons of a failure name (device class
 * names; claim names where a reason names the claim): claims with equal
 * keys get the same reasons from the same allocation state. */
void dp_alloc_claims_reason_key(const dp_alloc_claim *const *claims, size_t n_claims, dp_strbuf *out);

/* 1 when no selector of the claims (the class and request selectors of every
 * subrequest) fails at run time on any device of the snapshot, so that
 * dp_alloc_allocate cannot fail with a selector's error on any node; 0 when
 * one does, or the snapshot does not freeze; -ENOMEM. The results are
 * cached as dp_alloc_allocate caches them. */
int dp_alloc_selectors_infallible(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims);
