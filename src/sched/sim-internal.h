/* SPDX-License-Identifier: Apache-2.0
 * sim-internal.h — one simulated run (sim.c), read by the report and
 * explain (report.c). */
#pragma once

#include <inttypes.h>

#include "base/strbuf.h"
#include "sched/devnode.h"
#include "sched/sim.h"

typedef struct sim_node {
        char *name;
        const dp_sim_group *group;
        dp_sim_model model;
        dp_devnode *dev;
        int64_t slice_gen;
        char *shared_sig; /* "both" nodes: units held per model at the last sync */
} sim_node;

typedef struct sim_pod {
        char *key, *ns, *name;
        dp_object obj; /* until created: then the store owns it */
        bool scheduled_create, created, deleted, admitted, bound_logged;
        int64_t arrived_ms, bound_ms, started_ms, deleted_ms;
        char *node;
        char *v1_devices; /* units, comma-separated */
        char *wait_msg;   /* bound but the node could not give it devices */
        char *v2_devices; /* kept when the pod is deleted */
} sim_pod;

typedef struct sim_run {
        const dp_sim_input *in;
        dp_sim_model force; /* 0: as written */
        dp_store *store;
        dp_sched *sched;
        dp_sched *sched2; /* spec.schedulers: 2 */
        sim_node *nodes;
        size_t n_nodes;
        sim_pod *pods;
        size_t n_pods;
        dp_object *deferred; /* objects a Timeline `create` adds later ("Kind/[ns/]name") */
        size_t n_deferred;
        int64_t now, end_ms;
        dp_strbuf log;
} sim_run;

int sim_run_new(const dp_sim_input *in, dp_sim_model force, sim_run **ret, dp_error *err);
sim_run *sim_run_free(sim_run *r);
DEFINE_FREEP(sim_run, sim_run_free)
sim_pod *sim_find_pod(sim_run *r, const char *ref);
sim_node *sim_find_node(sim_run *r, const char *name);
/* The devices the pod's claims hold ("gpu-3,gpu-4"); a new string, "" when none. */
char *sim_pod_v2_devices(sim_run *r, const sim_pod *sp);
/* What the schedulers know of the pod: the record of the instance that tried
 * it more often (the first on ties). */
const dp_sched_pod_info *sim_pod_info(sim_run *r, const sim_pod *sp);
