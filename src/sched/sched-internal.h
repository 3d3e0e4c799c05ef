/* SPDX-License-Identifier: Apache-2.0
 * sched-internal.h — what sched.c (queue, bind) and filter.c (filter,
 * score) share. */
#pragma once

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "sched/sched.h"
#include "sched/score.h"

typedef struct qpod {
        char *key; /* "ns/name" */
        char *ns, *name;
        uint64_t seq; /* arrival */
        int32_t priority;
        bool present; /* still pending in the store */
        dp_sched_pod_info info;
        int64_t failed_at, retry_at;
        uint64_t failed_rev;
        /* rejected by PodTopologySpread / InterPodAffinity: a pod bound may
         * let it in (add_moved: one did, sched.c pod_bound_hints) */
        bool hint_spread, hint_interpod, add_moved;
        bool in_hinted; /* listed in dp_sched.hinted (maybe stale) */
        /* compiled at the first pod bound after a failure, for the flags it
         * was compiled with (hint_for: 1 spread, 2 interpod), and filed in
         * dp_sched.hint_idx (hint_filed) under hint_gen; kept while a failure
         * names the same plugins; a pod written drops it (gen bumped) */
        struct dp_topo_hint *hint;
        unsigned hint_for;
        bool hint_filed;
        uint64_t hint_gen;
        bool in_heap, in_waiting; /* listed in dp_sched.heap / .waiting (maybe stale) */
        /* queue, ports, defaults (kube-scheduler parity) */
        char *created;    /* metadata.creationTimestamp (RFC 3339, UTC), NULL unset: first */
        int64_t added_ms; /* when it joined the queue: earlier first, then created */
        bool held; /* gated, or another scheduler's: never tried, info says why */
        /* preemption (preempt.c): the victims its last PostFilter chose on
         * info.nominated, deleted once the cycle is over */
        char **victims;
        size_t n_victims;
        bool pre_moved; /* its victims' deletion moves it once it is marked failed */
} qpod;

/* An extended resource held through a device plugin on the plan's node. */
typedef struct ext_use {
        char *name;
        int64_t count;
} ext_use;

typedef struct plan_claim {
        char *ns, *name;
        uint64_t rv;
        dp_allocation_result *alloc; /* to write; NULL: already allocated, reserve only */
        dp_resource_claim *create;   /* a claim the scheduler creates (extended resources by DRA) */
        dp_resource_claim *assumed;  /* the claim as it will be, for later plans of a gang */
        bool written;
} plan_claim;

struct dp_sched_plan {
        qpod *q;
        uint64_t pod_rv;
        char *pod_uid;
        char *node;
        ext_use *ext;
        size_t n_ext;
        int64_t native[3]; /* cpu (millicores), memory, ephemeral-storage (bytes), for gangs' later members */
        int64_t nonzero[2]; /* cpu, memory with the scores' defaults for containers naming none (score.h) */
        plan_claim *claims;
        size_t n_claims;
        char *ext_claim_name; /* the created claim's name, recorded in pod status */
        bool bound;
        char start_time[32]; /* status.startTime the binding writes (preempt.h) */
};

struct dp_sched {
        dp_store *store;
        char *name;
        dp_score_policy policy;
        dp_score_profile profile; /* DP_SCORE_DEFAULT's plugins and weights (score.h) */
        int64_t backoff_initial, backoff_max;
        int (*on_bind)(void *userdata, const char *ns, const char *name, dp_error *err);
        void (*on_attempt)(void *userdata);
        void *userdata;
        dp_alloc_cluster_options alloc_opts;
        qpod **pods; /* in arrival order */
        size_t n_pods, cap_pods;
        /* the queue: pods QUEUED in a heap by priority then arrival, pods
         * UNSCHEDULABLE in a list (their eligibility depends on the time and
         * the store). Entries go stale when a pod changes state; they are
         * dropped or moved when met. Every present pod not bound is in one. */
        qpod **heap;
        size_t n_heap, cap_heap;
        qpod **waiting;
        size_t n_waiting, cap_waiting;
        bool queue_lost; /* a pod could not be listed: walk every pod instead */
        /* pick's candidates among the waiting pods for the time cand_now
         * (sched.c); cand_ok false: walk the waiting list */
        qpod **cand, **cand_rev;
        size_t n_cand, cap_cand, n_cand_rev, cap_cand_rev;
        int64_t cand_now;
        uint64_t cand_rev_seen, cand_add_seen;
        bool cand_ok;
        dp_hashmap *by_key;
        uint64_t next_seq;
        /* sync reads the store's change log from sync_pos; by_slot: the
         * record of the pod in each store slot */
        size_t sync_pos;
        qpod **by_slot;
        size_t n_by_slot;
        size_t *sync_slots, cap_sync_slots;
        /* gang members planned but not yet written */
        dp_sched_plan **assumed;
        size_t n_assumed, cap_assumed;
        /* the allocator snapshot kept across cycles (filter.c), and how far
         * into the store's change log it has read */
        struct dp_sched_dra *dra;
        size_t dra_pos;
        /* per node: slice devices, claim results, extended resources held,
         * and the nodes in name order (filter.c) */
        struct sched_usage *usage;
        uint64_t nodes_gen; /* numbers each node table built */
        uint64_t dra_gen;   /* numbers each allocator snapshot kept in dra */
        dp_diag_strings strings; /* verdict arguments (taints, resources, claims) */
        /* inter-pod affinity and topology spread: the bound pods' index (topology.h) */
        struct dp_topo_index *topo;
        /* queue, ports, defaults (kube-scheduler parity) */
        bool all_schedulers; /* dp_sched_config.all_schedulers */
        uint64_t hint_rev;   /* counts store changes that may help a waiting pod (sched.c may_help) */
        uint64_t hint_store_rev; /* the store's revision at the last sync */
        uint64_t add_rev;        /* counts waiting pods a pod bound moved (sched.c pod_bound_hints) */
        qpod **hinted; /* waiting pods with hint_spread/hint_interpod, hint not filed yet; room for cap_pods */
        struct dp_topo_hint_index *hint_idx; /* the filed ones, by label */
        uint64_t hint_checks;                /* hints matched against pods bound (the tests read it) */
        size_t n_hinted, cap_hinted;
        /* preemption (preempt.c) */
        bool preemption, dra_preemption; /* dp_sched_config's */
        int (*on_preempt)(void *userdata, const char *ns, const char *name, const char *by, const char *node,
                          dp_error *err);
        qpod **nominated; /* pods with info.nominated: the filter adds them to their node where due */
        size_t n_nominated, cap_nominated;
        const qpod *in_flight;  /* the pod in its cycle (dp_sched_plan_one), or NULL */
        size_t next_start;      /* percentageOfNodesToScore: where the next search starts (filter.c) */
        int32_t min_bound_prio; /* no pod bound (ever seen) has a lower priority: none lower, no victim */
        uint64_t n_binds;       /* bindings made: the N-th gets status.startTime 2100-01-01 + N s */
        /* the store's change log between these positions is the victims'
         * deletion: their own queueing hints moved the waiting pods already
         * (preempt.c), so sync does not count it as a change that may help */
        size_t quiet_from, quiet_to;
};

typedef struct sched_usage sched_usage;

/* ---- preemption (preempt.c) ---- */
/* One node seen with some bound pods gone (preemption's victims) and some
 * pods added (nominated pods of at least the pod's priority), as
 * kube-scheduler's RemovePod/AddPod change a node in a dry run. */
typedef struct sched_whatif {
        const char *node;
        size_t ni; /* its place in the node table */
        const dp_pod *const *gone;
        size_t n_gone;
        const dp_pod *const *extra;
        size_t n_extra;
        /* pods taken away, then given back (the reprieve): kube-scheduler
         * removes every lower pod from the node and adds these again, so
         * their host ports are in use even where a pod still taken away held
         * the same one (the node keeps used ports as a set) */
        const dp_pod *const *back;
        size_t n_back;
} sched_whatif;

struct cycle;
/* filter.c for preempt.c: the failed cycle's pod on table node ni, with wi
 * applied (NULL: as the node is, nominated pods added); its verdicts
 * counted in *why (NULL: none kept). 1 fits, 0 not, <0 error. */
int dp_sched_cycle_node(struct cycle *c, size_t ni, const sched_whatif *wi, dp_diag_hist *why, dp_error *err);
/* The node table of the last cycle (name order) and the cycle's pod. */
const dp_node *const *dp_sched_node_table(const dp_sched *s, size_t *ret_n);
const dp_pod *dp_sched_cycle_pod(const struct cycle *c);
/* The pods nominated to `node` that pod q must leave room for (priority
 * at least q's, not q, not bound); *ret NULL when none. -ENOMEM. */
int dp_sched_nominated_on(dp_sched *s, const qpod *q, const char *node, const dp_pod ***ret, size_t *ret_n);
/* PostFilter after a cycle found no node (preempt.c): decides the
 * preemption (q->victims, q->info.nominated) or why not (q->info.postfilter).
 * node_unres: per table node, whether its reason is one preemption cannot
 * help. 0 or <0. */
int dp_sched_postfilter(dp_sched *s, qpod *q, struct cycle *c, const uint8_t *node_unres, dp_error *err);
/* After the cycle: delete the victims the PostFilter chose, clear the
 * nominations of lower-priority pods on that node. 0 or <0. */
int dp_sched_preempt_apply(dp_sched *s, qpod *q, int64_t now_ms, dp_error *err);
void dp_sched_nominate(dp_sched *s, qpod *q, const char *node); /* NULL clears */
/* q was bound: it leaves the nominated pods (info.nominated stays, for reports). */
void dp_sched_nomination_done(dp_sched *s, qpod *q);
void dp_sched_usage_free(dp_sched *s);

void dp_sched_info_clear_reasons(dp_sched_pod_info *info);
const char *dp_pod_uid(const dp_pod *p, char *buf, size_t size);
int dp_sched_plan_one(dp_sched *s, qpod *q, int64_t now_ms, dp_sched_plan **ret, dp_error *err);
/* dp_sched_plan_one for dp_sched_diagnose: q a scratch copy of the pod's
 * record; every node's verdict goes to *v (grown), no plan is made. */
typedef struct sched_verdicts {
        dp_sched_node_verdict *v;
        size_t n, cap;
} sched_verdicts;
int dp_sched_diagnose_one(dp_sched *s, qpod *q, sched_verdicts *v, dp_error *err);

/* ---- queue, ports, defaults (kube-scheduler parity): NodePorts (ports.c) ---- */
typedef struct dp_host_port {
        char proto[8]; /* TCP (unset), UDP, SCTP */
        char ip[48];   /* 0.0.0.0 when unset */
        int32_t port;
} dp_host_port;
/* The ports with a hostPort of the pod's containers and sidecars,
 * normalised; *ret NULL when none. 0 or -ENOMEM. */
int dp_pod_host_ports(const dp_pod *p, dp_host_port **ret, size_t *ret_n);
/* "TCP/0.0.0.0/8080": one key per (protocol, address, port). */
void dp_host_port_key(const dp_host_port *hp, char *buf, size_t size);
/* Whether a port in use takes the wanted one. */
bool dp_host_ports_conflict(const dp_host_port *want, const dp_host_port *used);
