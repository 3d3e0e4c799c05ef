/* SPDX-License-Identifier: Apache-2.0
 *
 * diagnosis.h — why a pod fits no node, kept as kube-scheduler keeps it.
 *
 * The filter (filter.c) gives each node a verdict: a code and, for some
 * codes, an argument (the taint, the resource, the claim), as a number in a
 * table of strings the scheduler interns once. A scheduling attempt counts
 * the verdicts in a histogram (code, argument) -> nodes; the pod keeps that
 * histogram and the one-line message made from it ("0/500 nodes are
 * available: 320 Insufficient nvidia.com/gpu, 180 cannot allocate all
 * claims."), never a list per node. Per-node verdicts, with the allocator's
 * detail for DRA, are computed only on request for one pod
 * (dp_sched_diagnose, sched.h), by running the same filter again.
 *
 * Errors: -ENOMEM only. Nothing here reads input beyond the strings given.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

typedef enum dp_verdict_code {
        DP_VERDICT_FIT = 0,
        DP_VERDICT_NODE_UNSCHEDULABLE, /* node.spec.unschedulable */
        DP_VERDICT_TAINT,              /* arg: "{key: value}" of the first untolerated taint */
        DP_VERDICT_AFFINITY,           /* nodeSelector / required node affinity */
        DP_VERDICT_INSUFFICIENT_CPU,
        DP_VERDICT_INSUFFICIENT_MEMORY,
        DP_VERDICT_INSUFFICIENT, /* arg: the extended resource name */
        DP_VERDICT_CLAIM_UNREACHABLE, /* arg: the allocated claim's name */
        DP_VERDICT_DRA,               /* the allocator found no fit for the pod's claims */
        /* inter-pod affinity and topology spread (topology.h) */
        DP_VERDICT_SPREAD,                  /* PodTopologySpread: skew over maxSkew */
        DP_VERDICT_SPREAD_LABEL,            /* PodTopologySpread: the node lacks a topology key */
        DP_VERDICT_POD_AFFINITY,            /* InterPodAffinity: required affinity */
        DP_VERDICT_POD_ANTI_AFFINITY,       /* InterPodAffinity: the pod's required anti-affinity */
        DP_VERDICT_EXISTING_ANTI_AFFINITY,  /* InterPodAffinity: bound pods' anti-affinity */
        /* queue, ports, defaults (kube-scheduler parity) */
        DP_VERDICT_TOO_MANY_PODS, /* allocatable pods reached (NodeResourcesFit) */
        DP_VERDICT_NODE_PORTS,    /* a host port taken (NodePorts) */
        /* preemption (preempt.c): why DefaultPreemption found no node */
        DP_VERDICT_NO_VICTIMS,   /* no pod of lower priority on the node */
        DP_VERDICT_NOT_HELPFUL,  /* the node's reason is one removing pods cannot change */
        DP_VERDICT_CODES_
} dp_verdict_code;

/* The interned arguments: id 0 is "" (no argument). */
typedef struct dp_diag_strings {
        dp_hashmap *ids; /* string -> id + 1 */
        char **strs;
        size_t n, cap;
} dp_diag_strings;

void dp_diag_strings_done(dp_diag_strings *t);
/* The id of `s` (added when new); -ENOMEM. */
int64_t dp_diag_intern(dp_diag_strings *t, const char *s);
const char *dp_diag_string(const dp_diag_strings *t, uint32_t id);

/* One line of a histogram: so many nodes gave this verdict. */
typedef struct dp_diag_count {
        uint16_t code;
        uint32_t arg;
        uint32_t nodes;
} dp_diag_count;

typedef struct dp_diag_hist {
        dp_diag_count *v;
        size_t n, cap;
} dp_diag_hist;

void dp_diag_hist_clear(dp_diag_hist *h);
/* Count one more node with (code, arg); -ENOMEM. */
int dp_diag_hist_add(dp_diag_hist *h, dp_verdict_code code, uint32_t arg);

/* Whether kube-scheduler's filter says UnschedulableAndUnresolvable for
 * this verdict (preemption leaves such nodes alone): node unschedulable,
 * taints, node affinity, pod affinity, a spread key the node lacks, a claim
 * on another node, and DRA (unless dra_preemption, the KEP-5690 what-if).
 * NodeResourcesFit asking more than the node has at all is unresolvable too;
 * the filter, which knows the amounts, says so itself. */
bool dp_verdict_unresolvable(dp_verdict_code code, bool dra_preemption);

/* A verdict as text, the words kube-scheduler uses ("Insufficient
 * nvidia.com/gpu", "node(s) had untolerated taint {k: v}"...). */
void dp_verdict_text(dp_verdict_code code, const char *arg, char *buf, size_t size);
/* kube-scheduler's FitError text: "0/N nodes are available: 1 B, 2 A." with
 * each reason's words as kube-scheduler 1.35 writes them (a taint is
 * "node(s) had untolerated taint(s)", without the taint), one "count words"
 * per distinct text, sorted as strings (so "10 X" before "2 Y"), as
 * FitError.Error() does; a node that failed for several resources counts
 * once for each. A new string, NULL on -ENOMEM. */
char *dp_diag_message(const dp_diag_hist *h, const dp_diag_strings *t, size_t n_nodes);
