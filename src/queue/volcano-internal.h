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

#include <math.h>

#include "queue/volcano.h"

/* Volcano's minResource: values closer than this are equal (api.Resource). */
#define VC_EPS 0.1
/* the pod annotation (or label) saying whether preempt and reclaim may evict it */
#define VC_PREEMPTABLE_KEY "volcano.sh/preemptable"

typedef struct vtask {
        dp_pod *pod; /* borrowed, until dp_volcano_apply */
        char *key;   /* "ns/name" */
        ssize_t job; /* its job, -1 while being set up */
        bool bound;  /* spec.nodeName in the input: allocated from the start */
        bool allocated;
        ssize_t evicted_for; /* reclaim or preempt evicted it for this job, -1 never */
        bool by_preempt;     /* ... and it was preempt (within the queue), not reclaim */
        bool preemptable;    /* volcano.sh/preemptable (annotation, else label), default true */
        bool critical;       /* conformance: kube-system, or class system-cluster/node-critical */
        bool never;          /* spec.preemptionPolicy Never: it preempts nothing */
        bool gone;           /* its pod was deleted after the first sessions (dp_volcano_pod_deleted) */
        int64_t *dra_req;    /* volcano-dra.c: devices per DRA class its claim templates ask for */
        size_t *dra_claims;  /* ... and the ResourceClaims it names (indexes into rclaims) */
        size_t n_dra_claims;
        double *req; /* per dimension */
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
        char **other_keys;  /* "ns/name" of each, and its requests (n_dims each): kept */
        double *other_reqs; /* for dp_volcano_pod_deleted, when the pod itself is gone */
        bool *other_gone;
        double *other_used;
        char **dims; /* names, "cpu" and "memory" first */
        size_t n_dims;
        double *total; /* the nodes' allocatable summed (ssn.TotalResource) */
        vtask *tasks;
        size_t n_tasks;
        struct dp_hashmap *task_index; /* "ns/name" -> index + 1 of its task */
        dp_vc_job *jobs;
        size_t n_jobs;
        dp_vc_queue_info *qs; /* sorted by name */
        size_t n_qs;
        double *qblock; /* the queues' vectors, one block */
        size_t sessions;
        char **qnotes; /* per queue, the note dp_vc_queue_info.note points at (NULL none) */
        /* volcano-dra.c: the capacity plugin's DRA quota */
        const dp_resource_claim_template **templates;
        size_t n_templates;
        const dp_resource_claim **rclaims;
        size_t n_rclaims;
        char **dra_classes; /* the classes queues' capabilities name (deviceclass/<class>) */
        size_t n_dra;
        int64_t *dra_cap, *dra_alloc, *dra_inq; /* per queue × class; dra_cap 0: no limit */
        int64_t *dra_ask;                       /* scratch, per class */
        size_t *dra_order;                      /* scratch, per task */
        int64_t *claim_counts;                  /* per ResourceClaim × class */
        uint32_t *claim_refs;                   /* per queue × ResourceClaim: its allocated pods naming it */
};

/* volcano.c */
double *vc_vec_new(const dp_volcano *v); /* zeroed, NULL on OOM */
ssize_t vc_queue_index(const dp_volcano *v, const char *name);
/* The quantities as a vector (names not counted are left out). */
void vc_vec_from(const dp_volcano *v, const dp_named_quantity *q, size_t n, double *out);

/* volcano-session.c: one session; *ret_changed says whether a job moved. */
int vc_session(dp_volcano *v, bool *ret_changed, dp_error *err);

/* ---- what a session's actions share (volcano-session.c, volcano-preempt.c) ---- */
typedef struct vsess {
        dp_volcano *v;
        double *elastic;    /* per queue, n_dims each */
        double *used;       /* every bound or allocated pod's request (node.Used summed) */
        double *oc_inqueue; /* overcommit's own inqueue count */
        bool *tried;        /* per job: the action looked at it this session */
        bool *closed;       /* per queue: fifo head failed, or overused: no more this session */
        ssize_t *fifo_head; /* per queue: the fifo head that failed, -2 overused, -1 none */
        size_t *qjobs;      /* the jobs by queue: those of queue q at qjobs[qstart[q]..qstart[q + 1]) */
        size_t *qstart;
        bool changed;
} vsess;

/* A task waiting for a place: not allocated, not evicted, its pod not deleted. */
static inline bool vc_pending(const vtask *t) { return !t->allocated && t->evicted_for < 0 && !t->gone; }

/* a <= b within Volcano's minResource */
static inline bool vc_le(double a, double b) { return a < b || fabs(a - b) < VC_EPS; }
/* What job j holds (its allocated pods' requests) into out[n_dims], their
 * number into *ret_n (may be NULL); DRF's dominant share of a vector. */
void vc_job_alloc(const dp_volcano *v, const dp_vc_job *j, double *out, size_t *ret_n);
double vc_drf_share(const dp_volcano *v, const double *alloc);
/* Job order (priority, gang, DRF share, creation, input) and task order
 * (priority, input; qsort_r with v as userdata): < 0 when x goes first. */
int vc_cmp_job(const dp_volcano *v, const dp_vc_job *x, const dp_vc_job *y);
int vc_cmp_task(const void *a, const void *b, void *v);
/* The first job of queue q in job order that want accepts, -1 none. */
ssize_t vc_best_job(vsess *s, size_t q, bool (*want)(vsess *, const dp_vc_job *));
/* Room for task t in queue q (the plugin's Allocatable, DRA quota
 * included) and in the cluster; room in the cluster only. */
bool vc_task_fits(vsess *s, ssize_t q, const vtask *t);
bool vc_fits_free(vsess *s, const double *need);
/* Allocate (sign 1) or give back (-1) task t of queue q; evict t for job
 * for_job (sign 1) or undo it (-1). */
void vc_take_task(vsess *s, vtask *t, ssize_t q, double sign);
void vc_evict(vsess *s, vtask *t, ssize_t for_job, double sign);
/* A job's reason and message (copied), its note (taken; NULL: -ENOMEM). */
int vc_set_words(dp_vc_job *j, const char *reason, const char *message);
int vc_set_note(dp_vc_job *j, char *note);

/* volcano-preempt.c: the opt-in preempt action (within a queue). */
int vc_preempt(vsess *s);

/* The capacity plugin's parent of queue i (-1 none; proportion is flat). */
ssize_t vc_parent_of(const dp_volcano *v, size_t i);

/* volcano-dra.c: the capacity plugin's DRA quota. A key's DeviceClass when
 * it is `deviceclass/<class>` (else NULL); whether a key is one of the DRA
 * quota keys (that or `<dim>.deviceclass/<class>`), no resource dimension. */
const char *vc_dra_class_of(const char *key);
bool vc_dra_key(const char *key);
/* After the queues and tasks are made: the queues' notes, the classes,
 * limits and the tasks' requests. 0, -ENOMEM. */
int vc_dra_setup(dp_volcano *v);
/* Session start: nothing allocated or inqueue. */
void vc_dra_reset(dp_volcano *v);
/* Task t allocated (sign 1) or given back (-1) in queue q and its ancestors. */
void vc_dra_take(dp_volcano *v, const vtask *t, size_t q, int sign);
/* Allocatable: t's new devices within q's capabilities (and its ancestors'). */
bool vc_dra_fits(dp_volcano *v, const vtask *t, size_t q);
/* Enqueue: the job's minimum within them, inqueue counted (and added when
 * it fits); an Inqueue job's minimum counted at session start. */
bool vc_dra_enqueue(dp_volcano *v, const dp_vc_job *j);
void vc_dra_inqueue(dp_volcano *v, const dp_vc_job *j);
void vc_dra_done(dp_volcano *v);
