/* SPDX-License-Identifier: Apache-2.0
 * sim-internal.h — one simulated run (sim.c), read by the report and
 * explain (report.c). */
#pragma once

#include <inttypes.h>

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "sched/devnode.h"
#include "sched/sim.h"
#include "queue/kai.h"
#include "queue/queue.h"

/* A V1 unit of a Node object: one of an extended resource's allocatable
 * count, named "<resource>-<k>" ("nvidia.com/gpu-0"; sim-input.c). */
typedef struct sim_obj_unit {
        char *id;
        char *resource; /* "nvidia.com/gpu" */
        char *holder;   /* "ns/pod", NULL when free */
        bool failed;    /* --fail-device NODE/<id> */
} sim_obj_unit;

/* At most this many units per extended resource of a Node object; beyond
 * it the resource is counted, not named ("nvidia.com/gpu=3"). */
#define SIM_OBJ_UNITS_MAX 1024

typedef struct sim_node {
        char *name;
        const dp_sim_group *group; /* NULL (and dev NULL) for a node read from a Node object */
        dp_sim_model model;
        dp_devnode *dev;
        int64_t slice_gen;
        char *shared_sig;                 /* "both" nodes: units held per model at the last sync */
        struct dp_device_set *compat_set; /* dra.compatGroups: the driver's own copy (sim-compat.c) */
        dp_dra_inventory *compat_inv;
        char **noexec; /* devices failed with effect NoExecute (Timeline fail.effect) */
        size_t n_noexec;
        sim_obj_unit *obj_units; /* a Node object's V1 units, by resource then k */
        size_t n_obj_units;
} sim_node;

typedef struct sim_pod {
        char *key, *ns, *name;
        char *workload; /* its controller (or first) owner as "Kind/name"; NULL when unowned */
        dp_object obj;  /* until created: then the store owns it */
        bool scheduled_create, created, deleted, admitted, bound_logged;
        int64_t arrived_ms, bound_ms, started_ms, deleted_ms;
        char *node;
        char *v1_devices; /* units, comma-separated */
        char *wait_msg;   /* bound but the node could not give it devices */
        char *v2_devices; /* kept when the pod is deleted */
        bool evicted;     /* deleted by the device taint eviction controller (sim-evict.c) */
        char *evict_msg;  /* why */
        int64_t evict_at; /* a tolerated NoExecute taint evicts it then; -1 none */
        char *preempted_by; /* deleted by kube-scheduler's preemption for this pod ("ns/name") */
        bool volcano_told;  /* sim_volcano_step has told Volcano it was deleted */
        bool volcano_later; /* Volcano was told it is not there yet: tell it once created */
} sim_pod;

typedef struct sim_taint_seen sim_taint_seen;

typedef struct sim_run {
        const dp_sim_input *in;
        dp_sim_model force; /* 0: as written */
        dp_store *store;
        dp_sched *sched;
        dp_sched *sched2; /* spec.schedulers: 2 */
        sim_node *nodes;
        size_t n_nodes, cap_nodes;
        sim_pod *pods;
        size_t n_pods;
        dp_object *deferred; /* objects a Timeline `create` adds later ("Kind/[ns/]name") */
        size_t n_deferred;
        int64_t now, end_ms;
        dp_strbuf log;
        size_t queue_deleted; /* sim-queue.c: pods deleted when Kueue last looked, */
        ssize_t *queue_wl;    /* and each pod's workload in the queue (-1 none) */
        sim_taint_seen *taints_seen; /* sim-evict.c */
        size_t n_taints_seen;
        /* sim_find_pod / sim_find_node: key or name -> index + 1, for the
         * first pod_indexed pods and node_indexed nodes */
        dp_hashmap *pod_index, *node_index;
        size_t pod_indexed, node_indexed;
        dp_hashmap *claims_by_pool; /* pool -> allocated claims with a result there */
        uint64_t claims_rev;        /* the store's revision it was built at */
        dp_hashmap *requested;      /* "node\x1fresource" -> sim_requested (sim_requested_on) */
        uint64_t requested_rev;
        bool input_slices;          /* the input itself holds ResourceSlices (publish_slice) */
        size_t *both;               /* positions of the fleet's "both" nodes, in order (sync_shared) */
        size_t n_both;
        /* progress (dp_sim_input.progress): calls since the last clock
         * check, when to print next, the width of what stderr shows */
        unsigned progress_ticks;
        int64_t progress_next_ms;
        size_t *progress_shown;
        dp_queue *queue; /* Kueue's admission of this run's input (src/queue), NULL before load */
        dp_volcano *volcano; /* Volcano's admission (sim-volcano.c), NULL without --queue-policy volcano */
        dp_kai *kai; /* KAI-Scheduler's admission (sim-kai.c), NULL when not used */
} sim_run;

/* An allocated claim and its namespace, as the store holds them. */
typedef struct sim_claim_ref {
        const dp_resource_claim *claim;
        const char *ns;
} sim_claim_ref;
/* The allocated claims with a result in `pool` (each once, in store order),
 * valid until the store changes; -ENOMEM. */
int sim_claims_in_pool(sim_run *r, const char *pool, const sim_claim_ref **ret, size_t *ret_n);
void sim_claim_index_free(sim_run *r);
/* What the pods bound to `node` ask of extended resource `res` in their
 * containers' limits, from an index built in one walk over the pods per store
 * revision (explain asks it for each of thousands of nodes); -ENOMEM. */
int sim_requested_on(sim_run *r, const char *node, const char *res, int64_t *ret);
void sim_requested_free(sim_run *r);

int sim_run_new(const dp_sim_input *in, dp_sim_model force, sim_run **ret, dp_error *err);
sim_run *sim_run_free(sim_run *r);
DEFINE_FREEP(sim_run, sim_run_free)
sim_pod *sim_find_pod(sim_run *r, const char *ref);
sim_node *sim_find_node(sim_run *r, const char *name);
/* The devices the pod's claims hold ("gpu-3,gpu-4"); a new string, "" when none. */
char *sim_pod_v2_devices(sim_run *r, const sim_pod *sp);
/* The allocated claims of a pod, as the store holds them, its
 * extended-resource claim last:
 *     sim_claim_iter it = sim_pod_claims(r, sp);
 *     for (const dp_resource_claim *c; (c = sim_claim_next(&it, &name));) ...
 * it.pod is the pod's object (NULL: not in the store, and no claims). Valid
 * until the store changes. */
typedef struct sim_claim_iter {
        sim_run *r;
        const char *ns;
        const dp_pod *pod;
        size_t k; /* the next of pod's resource claims; n_resource_claims: the extended one */
} sim_claim_iter;
sim_claim_iter sim_pod_claims(sim_run *r, const sim_pod *sp);
/* The next claim with an allocation and its name, NULL after the last. */
const dp_resource_claim *sim_claim_next(sim_claim_iter *it, const char **ret_name);
/* Node i of group g as the simulator makes it: the name "<group>-<i>" and
 * the group's labels, then kubernetes.io/hostname, devplane.io/node-group
 * and devplane.io/model (the model m it runs). -ENOMEM (meta holds what was
 * made, for its owner to free). */
int sim_fleet_node_meta(dp_object_meta *meta, const dp_sim_group *g, int64_t i, dp_sim_model m);
/* Delete a created pod: its V1 devices and claims are released (claims it
 * owns deleted); the report keeps where it ran. log: write "deleted". */
int sim_delete_pod(sim_run *r, sim_pod *sp, bool log);
/* Create a pod held back until now (in the store from now on). */
int sim_create_pod(sim_run *r, sim_pod *sp);

/* sim-queue.c: Kueue's quota over time, when the Timeline deletes pods
 * (sim_queue_over_time): pods of Jobs Kueue has not admitted are held
 * (sim_queue_hold, before the first pods are created); after each batch of
 * events, workloads whose pods all ended release their quota and Kueue's
 * cycles run again, creating the pods of what they admit (sim_queue_step).
 * 0 or -ENOMEM. */
bool sim_queue_over_time(const dp_sim_input *in);
/* sim-volcano.c: Volcano's sessions before the first pods are created (when
 * in->volcano): allocated pods are handed to kube-scheduler. */
int sim_volcano(sim_run *r, dp_error *err);
/* After the input's pods are created: the pods Volcano's reclaim or preempt
 * evicted are deleted (Evicted). -ENOMEM. */
int sim_volcano_evict(sim_run *r);
/* Over time: once pods have been created or deleted, Volcano's sessions run again; the
 * pods of tasks allocated then lose schedulerName volcano (kube-scheduler
 * places them), those evicted then are deleted. 0, -ENOMEM. */
int sim_volcano_step(sim_run *r, dp_error *err);
int sim_queue_hold(sim_run *r);
int sim_queue_step(sim_run *r, dp_error *err);

/* sim-evict.c: evict the pods a NoExecute device taint they do not tolerate
 * (or no longer tolerate: tolerationSeconds) reaches now; the number evicted
 * or -ENOMEM. sim_evict_next: the next time a toleration runs out, -1. */
int sim_evict(sim_run *r);
/* sp evicted now with why (its message, the log line, deleted): -ENOMEM or 0. */
int sim_evict_now(sim_run *r, sim_pod *sp, const char *why);
int64_t sim_evict_next(const sim_run *r);
void sim_taints_seen_free(sim_run *r);

/* sim-compat.c: the compatibility-group inventory of a node whose group
 * sets dra.compatGroups (no-ops otherwise), and the node's V2 view either
 * way: its inventory, and the unit a V2 device lives on (-ENOENT). */
int sim_compat_init(sim_node *sn, dp_error *err);
int sim_compat_rebuild(sim_node *sn, dp_error *err);
int sim_compat_set_health(sim_node *sn, const char *id, bool healthy, dp_error *err);
void sim_compat_done(sim_node *sn);
const dp_dra_inventory *sim_node_inventory(const sim_node *sn);
int sim_node_unit_of_v2(const sim_node *sn, const char *device_name);

/* What the schedulers know of the pod: the record of the instance that tried
 * it more often (the first on ties). */
const dp_sched_pod_info *sim_pod_info(sim_run *r, const sim_pod *sp);

/* sim-input.c: pod owners stood up against the run's nodes (fleet and Node
 * objects); a sim_node for every Node object in the store that is not the
 * fleet's; the input's what-if changes applied to the store. */
int sim_expand_workloads(sim_run *r, dp_object_list *l, dp_error *err);
/* sim-kai.c: KAI-Scheduler's admission of the kai-scheduler pods, after
 * the owners' pods are stood up (--queue-policy kai, or KAI Queues and no
 * Kueue object). */
int sim_kai_admit(sim_run *r, dp_object_list *l, dp_error *err);
/* A pod of a group KAI did not start: "KAI-Scheduler REASON: message" in
 * buf, else NULL. */
const char *sim_kai_reason(const sim_run *r, const char *ns, const char *name, char *buf, size_t size);
size_t sim_object_node_count(const dp_sim_input *in);
int sim_add_object_nodes(sim_run *r, dp_error *err);
int sim_whatif_apply(sim_run *r, dp_error *err);
/* A pod admitted on a Node object's node: for each extended resource of the
 * node it asks, that many free healthy units, held by pod `key` ("ns/pod")
 * and appended to ids ("nvidia.com/gpu-0,nvidia.com/gpu-1"); what is left
 * (a resource with too many units to name, or a pod the input bound past
 * the free units) as "RESOURCE=COUNT": such a pod still runs, as before. */
int sim_object_node_v1(sim_run *r, sim_node *sn, const char *key, const dp_pod *p, dp_strbuf *ids);
/* Free what pod `key` holds on a Node object's node. */
void sim_object_node_release(sim_node *sn, const char *key);
void sim_object_units_free(sim_node *sn);
/* The instance whose record sim_pod_info gives (NULL when none has one). */
dp_sched *sim_pod_sched(sim_run *r, const sim_pod *sp);
