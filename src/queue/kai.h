/* SPDX-License-Identifier: Apache-2.0
 *
 * kai.h — KAI-Scheduler's hierarchical fair share (v0.17) as an admission
 * policy: which PodGroups KAI's Allocate, Reclaim and Preempt actions would
 * start, against a cluster capacity, and why the others wait, in KAI's
 * reason words (docs/queues-kai.md says rule by rule what is the same and
 * what differs).
 *
 *     l->ext = &dp_kai_model_ext;   // or chained behind another module's table
 *     ... dp_model_decode...(l) ...; dp_model_generate_names(l)
 *     dp_kai *k = NULL;
 *     dp_kai_new(l, &k, &err);      // takes the Queues out of l, reads groups and pods
 *     dp_kai_admit(k);              // fair share, Allocate, Reclaim, Preempt
 *     dp_kai_apply(k, l);           // admitted pods go to the kube-scheduler engine
 *
 * Capacity is the allocatable cpu, memory and nvidia.com/gpu of the Node
 * objects in the input: a job starts when its pods can be placed on them,
 * a gang all together (queue/kai-nodes.c), on nodes that pass the filter
 * the caller gives (dp_kai_set_node_filter); devplane's kube-scheduler
 * engine then places what KAI admits.
 *
 * Pure: no files, clocks or globals. Errors: -ENOMEM, -EINVAL with a message.
 */
#pragma once

#include "base/strbuf.h"
#include "doc/doc.h"
#include "model/model.h"

/* KAI's three fair-share resources: cpu in millicores, memory in MB (10^6
 * bytes), gpu in devices (KAI:docs/queues/README.md). */
typedef enum { DP_KAI_CPU, DP_KAI_MEMORY, DP_KAI_GPU, DP_KAI_NRES } dp_kai_res;

#define DP_KAI_UNLIMITED (-1.0)
#define DP_KAI_QUEUE_LABEL "kai.scheduler/queue"
#define DP_KAI_BATCH_MIN_MEMBER "kai.scheduler/batch-min-member" /* a Job's annotation (KAI:docs/batch) */
#define DP_KAI_SKIP_PODGROUPER "kai.scheduler/skip-podgrouper"   /* a Job's annotation: no PodGroup made */
#define DP_KAI_SCHEDULER_NAME "kai-scheduler"
#define DP_KAI_MAX_QUEUES 4096 /* devplane's cap (KAI sets none) */

/* One resource of a Queue's spec.resources: quota (-1 unlimited), limit (-1
 * none; 0 or unset: nothing beyond... see docs), overQuotaWeight. */
typedef struct dp_kai_queue_resource {
        double quota, limit, over_quota_weight;
} dp_kai_queue_resource;

/* scheduling.run.ai/v2 Queue as decoded (kai-decode.c). */
typedef struct dp_kai_queue_obj {
        dp_ext_object ext;
        char *parent_queue;
        char *display_name;
        int32_t priority;
        dp_kai_queue_resource res[DP_KAI_NRES];
} dp_kai_queue_obj;

extern const dp_model_ext dp_kai_model_ext;
/* The KAI Queue behind o, NULL when o is not one. */
const dp_kai_queue_obj *dp_kai_queue_of(dp_object o);

typedef enum {
        DP_KAI_PENDING = 0,
        DP_KAI_RUNNING,  /* running in the input, kept */
        DP_KAI_ADMITTED, /* pending in the input, started by Allocate/Reclaim/Preempt */
        DP_KAI_EVICTED,  /* running in the input, evicted by Reclaim or Preempt */
} dp_kai_state;

typedef struct dp_kai_group {
        char *ns, *name;
        char *queue;      /* spec.queue or the label */
        size_t qi;        /* its queue's index; (size_t)-1 when the queue does not exist */
        int32_t priority; /* from priorityClassName (KAI's defaults: train 50 ...) */
        bool preemptible;
        int32_t min_member;
        size_t n_pods, n_running;
        double req[DP_KAI_NRES];     /* one pending pod's request (pods of a group alike: the sum / n) */
        double pending[DP_KAI_NRES]; /* all pending pods */
        double running[DP_KAI_NRES]; /* all running pods */
        size_t started;              /* pending pods started */
        dp_kai_state state;
        char *reason;           /* NonPreemptibleOverQuota, OverLimit, QueueDoesNotExist, Unschedulable */
        char *message;          /* KAI's message (devplane's words for Unschedulable) */
        char *by;               /* evicted: "reclaim by NS/NAME" or "preempt by NS/NAME" */
        size_t order;           /* input order */
        size_t first_pod;       /* its first pod in dp_kai.pods, its pods chained by next; (size_t)-1 none */
        bool bare_pod;          /* a pod with the queue label and no PodGroup */
        bool from_job;          /* the PodGroup KAI's podgrouper makes for a batch/v1 Job (named as the Job) */
        const dp_pod_group *pg; /* while dp_kai_new runs only */
} dp_kai_group;

typedef struct dp_kai_queue {
        char *name;
        size_t parent; /* index, (size_t)-1 for a top queue */
        int32_t priority;
        size_t order; /* input order (creation time) */
        bool leaf;
        double deserved[DP_KAI_NRES], limit[DP_KAI_NRES], weight[DP_KAI_NRES];
        double request[DP_KAI_NRES], fair[DP_KAI_NRES];
        double allocated[DP_KAI_NRES], allocated_np[DP_KAI_NRES];
        size_t *running; /* the groups of this leaf running in the input (victim candidates) */
        size_t n_running;
} dp_kai_queue;

/* A pod of the input and its group (what dp_kai_apply changes). */
typedef struct dp_kai_pod {
        dp_pod *pod; /* borrowed from the list given to dp_kai_new */
        size_t group;
        char *key; /* "ns/name" */
        double req[DP_KAI_NRES];
        bool running; /* bound in the input */
        bool trial;   /* placed by the attempt in progress (kai-nodes.c) */
        size_t node;  /* its node in dp_kai.nodes (bound there, or placed by admission); (size_t)-1 none */
        size_t next;  /* the next pod of its group; (size_t)-1 none */
} dp_kai_pod;

/* A Node object and what is free on it (allocatable less the requests of
 * the pods bound or placed there). */
typedef struct dp_kai_node {
        const dp_node *node; /* borrowed from the list given to dp_kai_new */
        double free[DP_KAI_NRES];
} dp_kai_node;

/* Whether pod p may run on node n by the predicates that are not
 * resources (taints, node selector and affinity, cordon). */
typedef bool (*dp_kai_node_filter)(const dp_pod *p, const dp_node *n);

typedef struct dp_kai {
        dp_kai_queue *q;
        size_t n_q;
        dp_kai_group *g;
        size_t n_g, cap_g;
        double capacity[DP_KAI_NRES];
        size_t evictions; /* groups evicted so far (queue/kai-admit.c) */
        double used[DP_KAI_NRES];
        dp_kai_pod *pods; /* the groups' pods, in input order */
        size_t n_pods, cap_pods;
        struct dp_hashmap *pod_index; /* key → index + 1 in pods */
        dp_object *queue_objs;        /* the Queues taken out of the list (owned) */
        size_t n_queue_objs;
        dp_kai_node *nodes; /* the Node objects, in input order */
        size_t n_nodes;
        double *fit_tree; /* per resource, the most free on one node of each range (kai-nodes.c) */
        size_t fit_size;  /* leaves in fit_tree: a power of two, at least n_nodes */
        dp_kai_node_filter node_filter;
} dp_kai;

/* Whether l holds a KAI Queue (before dp_kai_new takes them out). */
bool dp_kai_input_has_queues(const dp_object_list *l);
/* The tools' warning (once, on the input) saying which policy admits the
 * pods of kai-scheduler when the input has KAI Queues; 0 or -ENOMEM. */
int dp_kai_warn_input(dp_object_list *l, dp_error *err);
int dp_kai_new(dp_object_list *l, dp_kai **ret, dp_error *err);
dp_kai *dp_kai_free(dp_kai *k);
DEFINE_FREEP(dp_kai, dp_kai_free)
/* The predicates a pod's node must pass besides resources, before
 * dp_kai_admit (simulate gives the kube-scheduler engine's); none set:
 * every node passes. */
void dp_kai_set_node_filter(dp_kai *k, dp_kai_node_filter f);

/* The fair share of every queue per resource, level by level down the tree
 * (resource_division.go; kValue 0). Exposed for the tests. */
int dp_kai_fair_share(dp_kai *k);
/* Fair share, then Allocate, Reclaim, Preempt once. 0 or -ENOMEM. */
int dp_kai_admit(dp_kai *k);
/* Pods of started groups are handed to the simulating scheduler
 * (schedulerName cleared); pods of evicted groups lose their node. l is
 * the list given to dp_kai_new (its pods are changed in place). */
int dp_kai_apply(const dp_kai *k, dp_object_list *l, dp_error *err);
const dp_kai_group *dp_kai_find(const dp_kai *k, const char *ns, const char *name);
/* The group of the pod ns/name (NULL when it has none). */
const dp_kai_group *dp_kai_group_of_pod(const dp_kai *k, const char *ns, const char *name);
const dp_kai_queue *dp_kai_find_queue(const dp_kai *k, const char *name);

/* simulate -o json|yaml "kaiQueues", and as text. */
dp_doc_node *dp_kai_encode(dp_doc_set *s, const dp_kai *k);
void dp_kai_print(const dp_doc_node *doc, dp_strbuf *out);
