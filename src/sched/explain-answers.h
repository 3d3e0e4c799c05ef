/* SPDX-License-Identifier: Apache-2.0
 *
 * explain-answers.h — what would let a Pending pod in, said with the
 * input's own numbers and names (issue 23, "answers a user can act on"),
 * under each group of `devplane explain`'s "By reason" list:
 *   - Insufficient R on a Node object: capacity, allocatable and what the
 *     pods on the node request, as `kubectl describe node` gives them (Fleet
 *     nodes get theirs from the device model, report.c's v1_detail);
 *   - a nodeSelector or required node affinity no node matches: the values
 *     the nodes have for that label ("nvidia.com/gpu.product: A100 ×200, H100
 *     ×200; you asked for B200");
 *   - untolerated taints: which toleration would pass the taint check on
 *     how many nodes.
 */
#pragma once

#include "sched/sched.h"
#include "sched/sim-internal.h"

/* kube-scheduler's own word on the pod, from the input's status.conditions
 * (type PodScheduled, status False: its message and lastTransitionTime),
 * beside devplane's message `now` (NULL: none), so that drift is visible:
 * "kube-scheduler said at T: X; devplane says the same now" or "...; devplane
 * says now: Y". Nothing when the input records no such condition (a pod of
 * a manifest, or one an owner stood up). */
void sim_explain_recorded(sim_run *r, const sim_pod *sp, const char *now, dp_strbuf *out);

/* Two allocator reasons (a node's DRA detail) of the same kind: the same
 * words once what differs from node to node is set aside: words with a
 * digit (device, counter-set, node names; counts and quantities) and the
 * claims after "in use by claim(s)". explain groups nodes by it, so 300
 * nodes full for the same reason are one group, not 300. */
bool sim_same_reason_kind(const char *a, const char *b);

/* Lines for the group whose first verdict is `first` (indented as the
 * group's detail), from the pod's object and the store's Nodes and Pods;
 * all verdicts v[0..n) let the taint and selector answers count nodes.
 * Nothing for other codes. Out of memory shows as dp_strbuf_failed(out). */
void sim_explain_answer(sim_run *r, const sim_pod *sp, const dp_sched_node_verdict *v, size_t n,
                        const dp_sched_node_verdict *first, dp_strbuf *out);
