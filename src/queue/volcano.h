/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano.h — Volcano's queue admission as an alternative policy of the queue
 * room (`devplane simulate --queue-policy volcano`): which PodGroups Volcano's
 * enqueue and allocate actions would take, under the proportion plugin
 * (Volcano's default: deserved share by weight, water-filling) or the
 * capacity plugin (per-resource deserved), with Volcano's job order
 * (priority, gang, DRF share, creation) and gang's all-or-nothing; the pods of
 * the groups it allocates then go on to devplane's kube-scheduler engine,
 * the rest stay Pending with Volcano's words. docs/queues-volcano.md says
 * rule by rule what is the same as Volcano and what differs.
 *
 *     dp_volcano *v = NULL;
 *     dp_volcano_new(&opts, &v);
 *     for each object o: dp_volcano_add(v, o, &err);  // Nodes, Pods, PodGroups, Queues, PriorityClasses
 *     dp_volcano_run(v, &err);                        // sessions until nothing changes
 *     dp_volcano_apply(v);                            // allocated pods go to kube-scheduler
 *
 * Objects are borrowed: they must outlive v, and dp_volcano_apply changes the
 * pods it was given (their spec.schedulerName). Pure: no files, clocks or
 * globals. Errors: -ENOMEM, or -EINVAL with one message.
 */
#pragma once

#include "base/strbuf.h"
#include "doc/doc.h"
#include "model/model.h"

#define DP_VOLCANO_SCHEDULER_NAME "volcano" /* vc-scheduler's --scheduler-name default */
#define DP_VOLCANO_DEFAULT_QUEUE "default"  /* created by Volcano's installation, weight 1 */
/* the pod annotation Volcano's PodGroup controller reads the queue of a
 * pod without a group from */
#define DP_VOLCANO_QUEUE_ANNOTATION "scheduling.volcano.sh/queue-name"

/* ---- the Queue kind (scheduling.volcano.sh/v1beta1, queue/volcano-decode.c) ---- */
typedef struct dp_vc_queue {
        dp_ext_object x;
        int32_t weight; /* spec.weight, defaulted to 1 (Volcano's mutating webhook) */
        dp_named_quantity *capability, *deserved, *guarantee; /* guarantee: spec.guarantee.resource */
        size_t n_capability, n_deserved, n_guarantee;
        bool reclaimable; /* spec.reclaimable, default true */
        char *parent;     /* spec.parent (capacity plugin's hierarchy) */
        int32_t priority; /* spec.priority */
        bool fifo;        /* spec.dequeueStrategy fifo (default traverse) */
        char *state;      /* status.state: Open (NULL: Open), Closed, Closing, Unknown */
} dp_vc_queue;

/* The extension table (chained after Kueue's: dp_queue_model_ext.next). */
extern const dp_model_ext dp_volcano_model_ext;
/* Whether o is a Volcano Queue. */
bool dp_volcano_is_queue(dp_object o);
/* A warning naming how many Volcano Queues the input has and that only
 * --queue-policy volcano runs Volcano's admission. 0 or -ENOMEM. */
int dp_volcano_warn_input(dp_object_list *l, dp_error *err);

/* ---- options (--volcano-plugin) ---- */
typedef enum { DP_VC_PROPORTION = 0, DP_VC_CAPACITY } dp_vc_plugin;

typedef struct dp_volcano_options {
        dp_vc_plugin plugin;
        bool reclaim; /* the opt-in reclaim action (--volcano-actions ...,reclaim) */
        bool preempt; /* the opt-in preempt action (--volcano-actions ...,preempt) */
} dp_volcano_options;

/* "enqueue,allocate,backfill[,preempt][,reclaim]" (Volcano's actions
 * string; spaces allowed) into o->preempt and o->reclaim; -EINVAL with a
 * message for another action or a list without allocate. The actions run
 * in the order enqueue, allocate, preempt, reclaim, backfill whatever the
 * list's order. */
int dp_volcano_options_actions(dp_volcano_options *o, const char *list, dp_error *err);

/* ---- the result ---- */
typedef enum { DP_VC_PENDING = 0, DP_VC_INQUEUE, DP_VC_RUNNING } dp_vc_phase;

/* A job: a Volcano PodGroup and its pods (tasks), or the one-pod group
 * Volcano's controller makes for a pod of schedulerName volcano without one. */
typedef struct dp_vc_job {
        char *ns, *name;
        char *queue;   /* spec.queue, "default" when unset */
        ssize_t q;     /* index of its queue, -1 when the Queue is not in the input */
        bool implicit; /* the one-pod group of a pod without a group */
        int32_t min_member;
        int32_t priority;
        char *created; /* metadata.creationTimestamp, NULL unset */
        size_t order;  /* input order */
        size_t *tasks; /* indexes of its pods */
        size_t n_tasks;
        bool has_min_resources;
        double *min_res; /* per dimension; minResources (NULL dims 0) */
        dp_vc_phase phase;
        size_t session;     /* the session that made it Running (1...), 0 never */
        char *reason;       /* Volcano's condition reason or event reason, NULL when none */
        char *message;      /* Volcano's words: "queue resource quota insufficient", the gang message... */
        char *note;         /* devplane's own remark, NULL when none */
        double drf_share;   /* DRF's dominant share of what it holds (allocated / cluster total) */
        size_t n_allocated; /* its pods allocated (bound in the input or by a session) */
} dp_vc_job;

/* A queue as the plugins see it at the end (values per dimension, in
 * Volcano's units: cpu in millicores, memory in bytes, other resources in
 * milli-units). */
typedef struct dp_vc_queue_info {
        const dp_vc_queue *queue; /* NULL: "default", not in the input (Volcano installs it) */
        const char *name;
        bool active; /* it has jobs: the plugins' attributes exist only then */
        double *deserved, *allocated, *request, *real_capability, *guarantee, *inqueue;
        double share;
        bool overused;
        size_t pending, inqueued, running; /* its jobs' phases */
        const char *note;                  /* devplane's remark (DRA keys not counted), NULL none */
} dp_vc_queue_info;

typedef struct dp_volcano dp_volcano;

int dp_volcano_new(const dp_volcano_options *o, dp_volcano **ret);
dp_volcano *dp_volcano_free(dp_volcano *v);
DEFINE_FREEP(dp_volcano, dp_volcano_free)
/* Take part: a Node (its allocatable), a Pod (schedulerName volcano: a task;
 * others are not Volcano's), a Volcano PodGroup, a Volcano Queue, a
 * PriorityClass, a ResourceClaim or ResourceClaimTemplate (the capacity
 * plugin's DRA quota); any other object is ignored. 0 or -ENOMEM. */
int dp_volcano_add(dp_volcano *v, dp_object o, dp_error *err);
/* Volcano's sessions (enqueue, allocate, backfill) until one changes
 * nothing. 0, -ENOMEM, -EINVAL (two PodGroups or Queues of one name). */
int dp_volcano_run(dp_volcano *v, dp_error *err);
/* dp_volcano_run in two steps: the jobs and queues made (errors as run's),
 * then dp_volcano_resume runs the sessions; between them
 * dp_volcano_pod_deleted marks the pods not there yet. */
int dp_volcano_prepare(dp_volcano *v, dp_error *err);
/* The pods Volcano allocated lose spec.schedulerName (kube-scheduler places
 * them); the others keep it (held, Pending). 0. */
int dp_volcano_apply(dp_volcano *v);
/* Over time (after dp_volcano_run; the pods v borrowed may be gone): pod
 * ns/name was deleted. A task's pod leaves its job and what it held is free
 * (Volcano's job controller would make a new pod; devplane does not); a
 * bound pod of another scheduler frees its share of the cluster. 1 when it
 * changed something, 0 when the pod is not known or already gone. */
int dp_volcano_pod_deleted(dp_volcano *v, const char *ns, const char *name);
/* Over time: the bound pods as the cluster stands (borrowed for the call);
 * those not Volcano's tasks are what other schedulers use, in place of what
 * the input's bound pods used. 0. */
int dp_volcano_set_bound(dp_volcano *v, const dp_pod *const *pods, size_t n);
/* A pod marked deleted (not there yet) is there now: a task again. 1 when
 * it changed something, else 0. */
int dp_volcano_pod_created(dp_volcano *v, const char *ns, const char *name);
/* Sessions again over the jobs as they stand, until one moves no job. 0,
 * -ENOMEM. The pods of tasks allocated then are for the caller to hand on
 * (dp_volcano_pod_allocated): dp_volcano_apply's pointers may be stale. */
int dp_volcano_resume(dp_volcano *v, dp_error *err);
/* Whether pod ns/name is a task Volcano has allocated. */
bool dp_volcano_pod_allocated(const dp_volcano *v, const char *ns, const char *name);

size_t dp_volcano_n_jobs(const dp_volcano *v);
const dp_vc_job *dp_volcano_job_at(const dp_volcano *v, size_t i);
const dp_vc_job *dp_volcano_find_job(const dp_volcano *v, const char *ns, const char *name);
size_t dp_volcano_n_queues(const dp_volcano *v);
const dp_vc_queue_info *dp_volcano_queue_at(const dp_volcano *v, size_t i);
const dp_vc_queue_info *dp_volcano_find_queue(const dp_volcano *v, const char *name);
/* The dimension a resource name is counted in, -1 when none; and its value
 * in the resource's own units ("2", "4Gi"). */
ssize_t dp_volcano_dim(const dp_volcano *v, const char *resource);
void dp_volcano_format(const dp_volcano *v, size_t dim, double value, char *buf, size_t size);
const char *dp_volcano_plugin_name(const dp_volcano *v);
/* Why Volcano holds pod ns/name back ("Volcano: PodGroup ns/g Inqueue: <its
 * words>") into buf; NULL when the pod is not Volcano's or was allocated. */
const char *dp_volcano_pod_reason(const dp_volcano *v, const char *ns, const char *name, char *buf, size_t size);
/* Whether reclaim or preempt evicted pod ns/name: why ("Volcano reclaim:
 * ...", "Volcano preempt: ...") into buf, else NULL. */
const char *dp_volcano_pod_evicted(const dp_volcano *v, const char *ns, const char *name, char *buf, size_t size);

/* simulate's "volcano" document (-o json|yaml) and its text. */
dp_doc_node *dp_volcano_encode(dp_doc_set *s, const dp_volcano *v);
void dp_volcano_print(const dp_doc_node *doc, dp_strbuf *out);
