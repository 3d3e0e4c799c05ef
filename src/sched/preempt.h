/* SPDX-License-Identifier: Apache-2.0
 *
 * preempt.h — kube-scheduler 1.35's DefaultPreemption PostFilter, the parts
 * that are pure rules (the dry run over nodes is in preempt.c, on the
 * filter's own cycle: sched-internal.h).
 *
 * A pod that fits no node, and whose preemptionPolicy is not Never, looks
 * at every node whose reason preemption can help (not
 * UnschedulableAndUnresolvable: dp_verdict_unresolvable). On each: take
 * away every pod of lower priority; if the pod then fits, give them back one
 * by one, PDB-violating pods first, each group most important first
 * (dp_preempt_more_important), keeping away only those without which it no
 * longer fits: they are the node's victims. Among the nodes with victims,
 * dp_preempt_pick chooses; the victims are deleted and the pod is
 * nominated to that node, tried again when they are gone.
 *
 * Errors: -ENOMEM only.
 */
#pragma once

#include "model/model.h"

/* 2100-01-01T00:00:00Z: the N-th binding's pod starts N seconds after it
 * (the kube-scheduler oracle's kubelet; preemption compares start times). */
#define DP_PREEMPT_BIND_EPOCH INT64_C(4102444800)

/* A pod's start time in seconds since 1970: status.startTime, else
 * creationTimestamp, else 2000-01-01 (as the oracle fills them in). Fractions
 * of a second are dropped; an unreadable time counts as unset. */
int64_t dp_preempt_start_time(const dp_pod *p);
/* "2100-01-01T00:00:07Z" for seconds since 1970 (buf >= 32). */
void dp_preempt_format_time(int64_t t, char *buf, size_t size);

/* MoreImportantPod: the higher priority, then the earlier start. */
typedef struct dp_preempt_victim {
        const char *key; /* "ns/name" */
        int32_t priority;
        int64_t start;
} dp_preempt_victim;
bool dp_preempt_more_important(const dp_preempt_victim *a, const dp_preempt_victim *b);

/* filterPodsWithPDBViolation: for pods in the order given (most important
 * first), each matching budget (same namespace, a non-empty selector that
 * matches the pod's labels; pods without labels match none; a pod the
 * budget lists in disruptedPods is not counted) spends one of its
 * disruptionsAllowed; a pod that takes any budget below zero violates.
 * ret_violating[i] for pods[i]. 0 or -ENOMEM. */
int dp_preempt_pdb_violations(const dp_pod *const *pods, size_t n, const dp_pod_disruption_budget *const *pdbs,
                              size_t n_pdbs, bool *ret_violating);

/* One node that preemption can use, with its victims (most important
 * first) and how many of them violate a PDB. */
typedef struct dp_preempt_candidate {
        const char *node;
        dp_preempt_victim *victims;
        size_t n_victims;
        size_t pdb_violations;
} dp_preempt_candidate;

/* pickOneNodeForPreemption: a node without victims at once; else the
 * fewest PDB violations, the lowest highest-victim priority, the smallest
 * sum of (priority + 2^31) over victims, the fewest victims, the latest
 * earliest start among the victims of the highest priority, and then the
 * lowest node name (the oracle's patch; upstream: map order). The index. */
size_t dp_preempt_pick(const dp_preempt_candidate *v, size_t n);
