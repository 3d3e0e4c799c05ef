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
        struct dp_topo_hint *hint; /* compiled when first needed; NULL after each failure */
        bool in_heap, in_waiting; /* listed in dp_sched.heap / .waiting (maybe stale) */
        /* queue, ports, defaults (kube-scheduler parity) */
        char *created;    /* metadata.creationTimestamp (RFC 3339, UTC), NULL unset: first */
        int64_t added_ms; /* when it joined the queue: earlier first, then created */
        bool held; /* gated, or another scheduler's: never tried, info says why */
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
        qpod **hinted;           /* waiting pods with hint_spread/hint_interpod; room for cap_pods */
        size_t n_hinted, cap_hinted;
};

typedef struct sched_usage sched_usage;
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
