/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-internal.h — what the Volcano policy's files share: the inputs
 * (borrowed), the resource dimensions, tasks, jobs and queues
 * (queue/volcano.c builds them), the session (queue/volcano-session.c:
 * proportion or capacity, enqueue, allocate) and the report
 * (queue/volcano-report.c).
 *
 * Resources are vectors of doubles over the input's dimensions, in Volcano's
 * units (api.Resource: MilliCPU, Memory in bytes, scalar resources as milli
 * values): dimension 0 is cpu, 1 memory, the others extended resources and
 * hugepages-* by name.
 */
#pragma once

#include "queue/volcano.h"

/* Volcano's minResource: values closer than this are equal (api.Resource). */
#define VC_EPS 0.1

typedef struct vtask {
        dp_pod *pod; /* borrowed, until dp_volcano_apply */
        char *key;   /* "ns/name" */
        ssize_t job; /* its job, -1 while being set up */
        bool bound;  /* spec.nodeName in the input: allocated from the start */
        bool allocated;
        ssize_t evicted_for; /* reclaim evicted it for this job, -1 never */
        double *req;         /* per dimension */
        int32_t priority;
        size_t order;
} vtask;

struct dp_volcano {
        dp_volcano_options opts;
        const dp_node **nodes;
        size_t n_nodes;
        dp_pod **pods;
        size_t n_pods;
        const dp_pod_group **groups;
        size_t n_groups;
        const dp_vc_queue **queues;
        size_t n_queues;
        const dp_priority_class **pcs;
        size_t n_pcs;
        const dp_pod **others; /* bound pods of other schedulers: they use the nodes too */
        size_t n_others;
        double *other_used;
        char **dims; /* names, "cpu" and "memory" first */
        size_t n_dims;
        double *total; /* the nodes' allocatable summed (ssn.TotalResource) */
        vtask *tasks;
        size_t n_tasks;
        dp_vc_job *jobs;
        size_t n_jobs;
        dp_vc_queue_info *qs; /* sorted by name */
        size_t n_qs;
        double *qblock; /* the queues' vectors, one block */
        size_t sessions;
};

/* volcano.c */
double *vc_vec_new(const dp_volcano *v); /* zeroed, NULL on OOM */
ssize_t vc_queue_index(const dp_volcano *v, const char *name);
/* The quantities as a vector (names not counted are left out). */
void vc_vec_from(const dp_volcano *v, const dp_named_quantity *q, size_t n, double *out);

/* volcano-session.c: one session; *ret_changed says whether a job moved. */
int vc_session(dp_volcano *v, bool *ret_changed, dp_error *err);
