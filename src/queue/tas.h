/* SPDX-License-Identifier: Apache-2.0
 *
 * tas.h — Kueue's Topology-Aware Scheduling inside the queue room
 * (queue/tas.c, queue/tas-place.c; docs/queues-tas.md says rule by rule what
 * is the same as Kueue v0.19 and what differs).
 *
 * Per ResourceFlavor with a topologyName whose Topology is in the input, a
 * snapshot: the input's schedulable nodes (devplane keeps no node
 * conditions, so each counts as Ready) that carry the flavor's nodeLabels
 * and every level's label, grouped level by level into a domain tree. A leaf's free capacity is its nodes' allocatable
 * less the pods already bound there (non-TAS pods); TAS usage is what admitted workloads' topology assignments take,
 * counted again at each placement from the workloads admitted at that moment plus the placements made earlier in the
 * same cycle (so a later head of one cycle sees an earlier one's).
 *
 * Hooks (one call each): queue.c builds (q_tas_new), frees (q_tas_free)
 * and resets (q_tas_reset) it; assign.c asks q_tas_flavor_check per flavor
 * tried and q_tas_assign once per assignment; preempt.c checks a candidate
 * set with q_tas_fits, moves usage with q_tas_hold and hands the targets it
 * found to q_tas_reserve; apply.c pins each pod
 * (q_tas_pin); report.c shows the assignment (q_tas_encode, q_tas_print).
 * A Workload admitted in the input holds the domains its
 * status.admission's topologyAssignment names.
 */
#pragma once

#include "queue/queue-internal.h"

/* The pod template annotations Kueue's job integrations read
 * (apis/kueue/v1beta2 constants). */
#define DP_KUEUE_TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define DP_KUEUE_TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define DP_KUEUE_TAS_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define DP_KUEUE_TAS_GROUP "kueue.x-k8s.io/podset-group-name"
#define DP_KUEUE_TAS_SLICE_REQUIRED "kueue.x-k8s.io/podset-slice-required-topology"
#define DP_KUEUE_TAS_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"
#define DP_TAS_HOSTNAME_LABEL "kubernetes.io/hostname"

struct qtas;

/* One domain of a flavor's tree; a leaf holds capacity. */
typedef struct tdom {
        char **values; /* level values from the highest level down to this one (level + 1) */
        size_t level;
        struct tdom *parent;
        struct tdom **kids;
        size_t n_kids;
        int32_t state, slice_state; /* the placement's working numbers (pods, slices that fit) */
        /* leaves */
        int64_t *free; /* per resource of the snapshot: allocatable less non-TAS pods (Kueue's units) */
        int64_t *used; /* per resource: TAS usage now */
        dp_kv *labels; /* the node's, when the lowest level is the hostname (nodeSelector and affinity checks) */
        size_t n_labels;
        char *node;       /* the node's name, same (node affinity's matchFields) */
        dp_taint *taints; /* the node's NoSchedule/NoExecute taints, same */
        size_t n_taints;
} tdom;

/* The snapshot of one TAS flavor. */
typedef struct tflavor {
        const dp_resource_flavor *rf;
        const dp_kq_topology *topo;
        bool hostname; /* the lowest level is kubernetes.io/hostname */
        tdom ***level; /* per level, its domains sorted by values */
        size_t *n_level;
        char **res; /* the resources leaves' free/used index (shared by every flavor) */
        size_t n_res;
} tflavor;

/* What a pod set asks of the topology (its template's annotations). */
typedef struct tas_request {
        const char *required, *preferred, *slice_level;
        bool unconstrained;
        bool has_slice_size;
        int32_t slice_size;
        bool implied; /* no annotation, in a ClusterQueue of TAS flavors only */
} tas_request;

/* One resource of a pod: its index in tflavor.res, -1 when no leaf has it. */
typedef struct tas_need {
        const char *name;
        int64_t value;
        ssize_t res;
} tas_need;

/* A placement: leaves and how many pods each takes, sorted by values. */
typedef struct tas_placement {
        tdom **dom;
        int32_t *count;
        size_t n;
} tas_placement;

void tas_placement_done(tas_placement *p);

/* Kueue's findTopologyAssignment for count pods of `need` (the pods
 * resource included) on f with the TAS usage in the leaves: 0 and *ret, or
 * 1 with Kueue's reason in why ("topology \"t\" doesn't allow to fit any of
 * 3 pod(s)..."); -ENOMEM. With `empty`, TAS usage is not counted (Kueue's
 * simulateEmpty). tas-place.c. */
int tas_place(tflavor *f, const tas_request *rq, int32_t count, const tas_need *need, size_t n_need, const dp_pod *tmpl,
              bool empty, tas_placement *ret, char *why, size_t why_size);
/* The level index of a label in f's topology, -1 when not one of them. */
ssize_t tas_level_of(const tflavor *f, const char *label);

/* ---- queue/tas.c: the hooks ---- */
int q_tas_new(dp_queue *q, const dp_object_list *l);
void q_tas_free(dp_queue *q);
void q_tas_reset(dp_queue *q);
/* checkPodSetAndFlavorMatchForTAS: NULL when pod set ps may take flavor
 * `name` of group g, else Kueue's message (in buf). */
const char *q_tas_flavor_check(const dp_queue *q, const qcq *cq, const dp_queue_podset *ps,
                               const dp_kq_resource_group *g, const char *name, char *buf, size_t size);
/* After the flavors: the topology of every pod set that asks for TAS; a
 * pod set that does not fit gets Kueue's reason in a->message and the
 * assignment's mode becomes QM_PREEMPT (its TAS flavor-resources needing
 * preemption), or QM_NOFIT when it fits no more on the flavor's nodes
 * without TAS workloads. 0 or -ENOMEM. */
int q_tas_assign(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *a);
/* preempt.c's hooks. q_tas_fits: after q_tas_assign left w preempting for
 * its topology, whether every such pod set now fits the leaves' TAS usage
 * (the workloads preempt.c took out no longer count); true for any other
 * workload, false also when memory runs out. q_tas_hold: admitted
 * workload w's TAS usage out of (sign -1) or back into (1) the leaves, as
 * preempt.c takes its quota out or puts it back. */
bool q_tas_fits(dp_queue *q, const qcq *cq, const dp_queue_workload *w);
/* Targets found for w: the placement it holds for the rest of the cycle
 * becomes the one on the nodes they free (Kueue's updateAssignmentForTAS);
 * without memory the one on empty nodes stays. */
void q_tas_reserve(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const qtarget *t, size_t n);
void q_tas_hold(dp_queue *q, size_t w, int sign);
/* The next pod of admitted workload w: a nodeSelector for its domain. */
int q_tas_pin(const dp_queue *q, const dp_queue_workload *w, dp_pod *p);
/* topologyAssignment of an admitted workload into its document d. */
int q_tas_encode(dp_doc_set *s, const dp_queue *q, const dp_queue_workload *w, dp_doc_node *d);
/* The text line(s) for a workload document with a topologyAssignment. */
void q_tas_print(const dp_doc_node *w, dp_strbuf *out);
