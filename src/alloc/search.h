/* SPDX-License-Identifier: Apache-2.0
 * search.h — state of one dp_alloc_allocate() call, shared by search.c
 * (the depth-first search) and explain.c (reasons when it fails). */
#pragma once

#include "alloc/internal.h"

#define ERR_BIT 0x80000000u   /* candidate whose selector failed at run time */
#define TAINT_BIT 0x40000000u /* All lists only: a matching device with a taint not tolerated */

typedef struct cand_list {
        uint32_t *devs;
        size_t n;
        bool built;
        uint32_t cmask; /* claim constraints that apply to this (request, sub) */
        /* why devices of the node are not candidates */
        uint32_t n_total, n_class, n_sel, n_taint, n_policy, n_in_use, n_errors;
        uint32_t n_taint_kept; /* All lists: tainted entries kept (TAINT_BIT), they refuse the request */
        uint32_t holders[3], n_holders;
        uint32_t taint_dev; /* first device blocked by a taint */
} cand_list;

typedef enum {
        WHY_NONE = 0,
        WHY_IN_USE,     /* dev already taken in this allocation */
        WHY_HELD,       /* allocationMode All: dev is held by an earlier claim */
        WHY_COUNTER,    /* fit detail */
        WHY_GROUPS,
        WHY_CAPACITY,   /* dev, a = capacity entry */
        WHY_MATCH,      /* constraint c, dev */
        WHY_MISSING,    /* constraint c, dev lacks the attribute */
        WHY_DISTINCT,   /* constraint c, dev */
        WHY_LIMIT,      /* 32 devices per claim */
        WHY_SHORT,      /* counting: a eligible < b needed */
        WHY_CLASS,      /* matchAttribute: largest value class a < b needed (constraint c) */
        WHY_VALUES,     /* distinctAttribute: a distinct values < b needed (constraint c) */
        WHY_UNION,      /* requests together need b, a devices between them */
        WHY_ALL_EMPTY,  /* allocationMode All found no device */
        WHY_COUNTER_BOUND, /* counter c leaves room for at most a of the b devices needed */
        WHY_LATER,      /* request c (a later one) cannot be met on this node at all */
        WHY_TAINT,      /* allocationMode All: dev matches but has a taint not tolerated */
        WHY_MATCHING,   /* c requests still to come need b devices, only a can serve them (hall.c) */
} why_kind;

typedef struct why_rec {
        why_kind kind;
        uint32_t dev, a, b, c;
        fit_detail fit;
} why_rec;

typedef struct rq {
        uint32_t claim;
        const dp_alloc_claim *cl;
        const dp_alloc_request *r;
        uint32_t ridx;
        uint32_t sub;
        cand_list subs[DP_ALLOC_FIRST_AVAILABLE_MAX];
        why_rec why;
} rq;

typedef struct cstate {
        uint32_t attr; /* qualified name id, NONE_ID if no device has it */
        bool match;
        uint32_t n; /* devices under the constraint so far */
        uint32_t value; /* match: the common value once n > 0 */
        uint32_t lists; /* how many of vals are list values */
        uint32_t vals[DP_ALLOC_RESULTS_MAX * 2];
} cstate;

typedef struct placement {
        uint32_t rq, dev;
        bool admin, first_share;
        uint32_t n_amounts;
        __int128 *amounts; /* per device capacity, multi-allocatable devices only */
} placement;

typedef struct search {
        dp_alloc_snapshot *s;
        uint32_t node;
        const dp_alloc_claim *const *claims;
        size_t n_claims;
        rq *rqs;
        size_t n_rqs;
        cstate *cs;
        uint32_t *cs_off; /* per claim */
        uint32_t *claim_devs;
        placement *pl;
        size_t n_pl, cap_pl;
        __int128 *amount_pool;
        uint64_t effort, max_effort;
        uint32_t deepest;
        dp_error *err;
        char *claim_why; /* a reason that fails the whole call before searching */
        uint32_t *cand;  /* the candidate lists' room (build_list) */
        uint32_t *hall_mem; /* the matching bound's room (hall.c), made on first use */
        uint64_t hall_next; /* effort before which next_request skips the bound */
} search;

/* search.c: devices a (request, entry) needs (count, capped past the claim
 * limit); its candidate list, built once per call (0 or -ENOMEM with err). */
uint32_t sub_need(const dp_alloc_subrequest *sr);
int search_build_list(search *st, rq *q, uint32_t sub);
/* hall.c: the matching bound over requests from..n_rqs, the earlier ones
 * placed. 0 = go on searching, 1 = no solution (from 0: st->claim_why says
 * why; deeper: the request's why), <0 error. */
int search_hall_bound(search *st, uint32_t from);

void explain_failure(search *st, dp_strbuf *why);
/* The reason recorded for q (q->why), as one phrase. */
void explain_why(search *st, const rq *q, dp_strbuf *out);
bool sub_blocked(const rq *q, const dp_alloc_subrequest *sr);
const char *rq_label(const search *st, const rq *q, char *buf, size_t size);
