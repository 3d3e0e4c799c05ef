/* SPDX-License-Identifier: Apache-2.0
 *
 * topology.h — kube-scheduler's PodTopologySpread and InterPodAffinity
 * filters (plugin-spread.c, plugin-interpod.c) and what they share
 * (topology.c): an index of the pods bound to nodes, kept across cycles
 * from the store's change log, and per topology key the node table's
 * domains.
 *
 * The index groups bound pods by (namespace, labels, required anti-affinity
 * terms), with per group the number of its pods on each node. Pods of one
 * workload share a group, so a selector is matched once per group, not once
 * per pod; groups are found through an inverted index of their labels (a
 * selector's `k In [v...]` picks the candidates) and the groups' anti-affinity
 * terms through the same kind of index on the terms' own In requirements.
 *
 * A cycle's state (dp_topo_state) is kube-scheduler's PreFilter result:
 * per DoNotSchedule spread constraint the matching pods per domain of the
 * nodes the constraint counts, with its minimum; per topology key of the
 * pod's required affinity, its required anti-affinity and the existing pods'
 * anti-affinity terms that match the pod, the counts per domain. Filter
 * answers per node table index from that state in O(constraints + terms).
 * AddPod/RemovePod change the state for one pod on one node (gang members
 * assumed in this cycle use AddPod; preemption will use both).
 *
 * Differences from kube-scheduler: namespaces that pods use count as
 * existing Namespace objects (labels: kubernetes.io/metadata.name only) when
 * the input has none; matchLabelKeys and mismatchLabelKeys are merged into
 * the selector by the scheduler (the API server does it when the pod is
 * created; merging twice changes nothing); terminating pods are not known.
 *
 * Errors: -ENOMEM only.
 */
#pragma once

#include "sched/sched-internal.h"

typedef struct dp_topo_index dp_topo_index;
typedef struct dp_topo_state dp_topo_state;

/* The index kept in the scheduler (dp_sched.topo); NULL is an empty one. */
dp_topo_index *dp_topo_index_free(dp_topo_index *idx);

/* PreFilter of both plugins for pod `p` (namespace `ns`) over the node table
 * `tab` (n_tab nodes in name order; `gen` changes whenever the table does),
 * with the pods of s->assumed added. *ret NULL when neither plugin has
 * anything to check (kube-scheduler's Skip). */
int dp_topo_prefilter(dp_sched *s, const dp_pod *p, const char *ns, const dp_node *const *tab, size_t n_tab,
                      uint64_t gen, dp_topo_state **ret);
dp_topo_state *dp_topo_state_free(dp_topo_state *st);
/* Filter for table node ni: DP_VERDICT_FIT, or the first failing plugin's
 * verdict (PodTopologySpread before InterPodAffinity). */
dp_verdict_code dp_topo_filter(const dp_topo_state *st, size_t ni);
/* The reasons of a pod no node takes, from `base`: each table node's verdict
 * without these plugins (code << 32 | argument, DP_VERDICT_FIT where the other
 * filters pass), as a shape's cache keeps them. These plugins' verdict goes
 * first except where an earlier filter failed (the claims' filters,
 * CLAIM_UNREACHABLE and DRA, come after them). base_hist: base counted.
 * 1 with *ret filled, 0 when a
 * node fits after all, -ENOMEM. unres (NULL: not wanted): per node, whether
 * its verdict is one preemption cannot help, as the caller filled it for the
 * base verdicts; a node these plugins refuse gets theirs. */
int dp_topo_reasons(const dp_topo_state *st, const uint64_t *base, const dp_diag_hist *base_hist, size_t nn,
                    dp_diag_hist *ret, uint8_t *unres);
/* AddPod (delta +1) / RemovePod (-1): pod `p` of namespace `ns` on table
 * node ni, as if it were bound there (or gone from there). */
int dp_topo_update_pod(dp_topo_state *st, const dp_pod *p, const char *ns, size_t ni, int delta);

/* kube-scheduler's queueing hints for a pod bound to a node, for a pod `p`
 * (namespace ns) waiting after a rejection by PodTopologySpread (spread)
 * and/or InterPodAffinity (interpod), compiled once. Matches (the hint says
 * Queue) when the added pod, in p's namespace, matches a DoNotSchedule
 * constraint's selector, or matches all of p's required affinity terms (a
 * namespaceSelector matched against no labels, as kube-scheduler does). */
typedef struct dp_topo_hint dp_topo_hint;
int dp_topo_hint_compile(const dp_pod *p, const char *ns, bool spread, bool interpod, dp_topo_hint **ret);
bool dp_topo_hint_matches(const dp_topo_hint *h, const dp_pod *added, const char *added_ns);
bool dp_topo_hint_any(const dp_topo_hint *h); /* false: no pod bound can match */
dp_topo_hint *dp_topo_hint_free(dp_topo_hint *h);

/* The waiting pods' hints by the labels a pod bound must carry for a hint
 * to match (for each DoNotSchedule selector, and for the affinity terms
 * together, the values of the smallest In requirement; a selector without
 * one is filed under every pod), so that a pod bound looks at the pods it can
 * help, not at every waiting pod. Entries carry the caller's item and a
 * generation; the index never looks into the item. NULL is an empty index. */
typedef struct dp_topo_hint_index dp_topo_hint_index;
/* File `item` (generation gen) for hint h; *x made when NULL. -ENOMEM
 * may leave some of the item's entries filed (visits must tolerate them). */
int dp_topo_hint_index_add(dp_topo_hint_index **x, const dp_topo_hint *h, void *item, uint64_t gen);
/* Call visit for every entry filed under a label of `added` or under every
 * pod: a superset of the hints that match it, an item possibly more than
 * once. An entry for which visit returns false is dropped (stale). */
void dp_topo_hint_index_visit(dp_topo_hint_index *x, const dp_pod *added,
                              bool (*visit)(void *item, uint64_t gen, void *ud), void *ud);
dp_topo_hint_index *dp_topo_hint_index_free(dp_topo_hint_index *x);
/* ---- scores (score.h): PreScore and Score of both plugins ---- */
struct dp_score_profile;
/* After dp_topo_prefilter in the same cycle: for pod p over the feasible
 * table nodes feas[0..n) (ascending), each node's raw InterPodAffinity
 * score into ip[i] and PodTopologySpread score into sp[i] (ignored[i]: the
 * node lacks a constraint's key). *ret_ip / *ret_sp false when the plugin
 * skips (kube-scheduler's Skip: every node 0). -ENOMEM. */
int dp_topo_score(dp_sched *s, const dp_pod *p, const char *ns, const struct dp_score_profile *prof,
                  const uint32_t *feas, size_t n, int64_t *ip, bool *ret_ip, int64_t *sp, bool *ignored,
                  bool *ret_sp);
/* Whether either plugin may score nodes differently for p (false: both skip). */
bool dp_topo_score_needed(const dp_sched *s, const dp_pod *p, const struct dp_score_profile *prof);

/* filter.c's NodeAffinity and TaintToleration answers, for the inclusion
 * policies of PodTopologySpread. */
bool dp_sched_pod_node_affinity(const dp_pod *p, const dp_node *n);
bool dp_sched_pod_tolerates(const dp_pod *p, const dp_node *n);
/* NodeUnschedulable, TaintToleration and NodeAffinity together, as the
 * filter runs them: the node predicates that are not resources (KAI's
 * admission places pods with them, sim-kai.c). */
bool dp_sched_pod_node_allowed(const dp_pod *p, const dp_node *n);

/* ---- shared by the two plugins (topology.c) ---- */

/* A label selector with its matchLabels, matchExpressions and the merged
 * matchLabelKeys/mismatchLabelKeys as one ANDed list; strings owned. */
typedef struct topo_req {
        char *key;
        dp_node_selector_op op; /* In, NotIn, Exists, DoesNotExist */
        char **values;
        size_t n_values;
} topo_req;

typedef struct topo_sel {
        bool nothing; /* a null selector: matches no label set */
        topo_req *reqs;
        size_t n;
} topo_sel;

/* A required pod (anti-)affinity term of some pod, compiled. */
typedef struct topo_term {
        topo_sel sel;
        char **namespaces; /* the pod's own namespace when neither namespaces nor namespaceSelector is set */
        size_t n_namespaces;
        topo_sel ns_sel; /* nothing when unset */
        char *key;       /* topologyKey */
} topo_term;

/* Per topology key, each table node's domain (a number per distinct label
 * value, -1 where the node lacks the key), for the table of `gen`. */
typedef struct topo_keydom {
        char *key;
        int32_t *dom;
        size_t n_dom;
        /* the table nodes by domain: by_dom[start[d] .. start[d + 1]) are
         * domain d's, by_dom[start[n_dom] .. start[n_dom + 1]) lack the key */
        int32_t *by_dom, *start;
} topo_keydom;

/* One group of bound pods and where they run. */
typedef struct topo_group {
        char *key;
        char *ns;
        dp_kv *labels;
        size_t n_labels;
        topo_term *anti; /* required anti-affinity terms */
        size_t n_anti;
        uint32_t *node; /* node ids (topo_node_name) with count[i] pods */
        int32_t *count;
        size_t n_nodes, cap_nodes;
        uint32_t *hash; /* node id -> index + 1, open addressing, cap_hash a power of two */
        size_t cap_hash;
        int64_t pods;
        bool terminating; /* its pods have a deletionTimestamp: PodTopologySpread does not count them */
        /* InterPodAffinity's score: the pods' required affinity terms
         * (sweight 0: hardPodAffinityWeight), preferred affinity (+weight)
         * and preferred anti-affinity (-weight) terms */
        topo_term *sterm;
        int32_t *sweight;
        size_t n_sterm;
} topo_group;

int topo_sel_compile(topo_sel *ret, const dp_label_selector *ls, const dp_kv *labels, size_t n_labels,
                     char *const *match_keys, size_t n_match, char *const *mismatch_keys, size_t n_mismatch);
void topo_sel_done(topo_sel *s);
/* The selector matches the labels (extra_key=extra_value counts as one more
 * label when the labels lack that key; NULL: none). */
bool topo_sel_matches(const topo_sel *s, const dp_kv *labels, size_t n, const char *extra_key, const char *extra_value);
static inline bool topo_sel_empty(const topo_sel *s) { return !s->nothing && s->n == 0; }

int topo_term_compile(topo_term *t, const dp_pod_affinity_term *src, const char *pod_ns, const dp_kv *labels,
                      size_t n_labels);
void topo_term_done(topo_term *t);
/* The term selects a pod of namespace ns with these labels; the namespace's
 * labels looked up in the store. */
bool topo_term_matches(const topo_term *t, const dp_store *st, const char *ns, const dp_kv *labels, size_t n);

/* The table's domains for `key` (built on first use for this table). */
const topo_keydom *topo_keydom_get(dp_topo_index *idx, const char *key);
/* Zeroed memory that lives until the next PreFilter: the cycle state's
 * arrays per node and per domain. Kept by the index and reused, so a cycle
 * does not grow and trim the heap (at 5,000 nodes that was a third of the
 * run's time). NULL on -ENOMEM. */
void *topo_scratch(dp_topo_index *idx, size_t size);
/* Table index of a group's node entry, -1 when that node is not in the table. */
int64_t topo_node_tab(const dp_topo_index *idx, uint32_t node_id);
/* Candidate groups for a selector in namespace-independent form: those
 * holding a label the selector requires (its smallest In requirement), or
 * every group. Calls fn for each until it returns <0. */
int topo_groups_each(const dp_topo_index *idx, const topo_sel *sel, int (*fn)(topo_group *g, void *ud), void *ud);
/* Every group's anti-affinity term that may match a pod with these labels
 * (terms indexed by one In requirement, and terms without one). */
int topo_anti_each(const dp_topo_index *idx, const dp_kv *labels, size_t n,
                   int (*fn)(topo_group *g, const topo_term *t, void *ud), void *ud);

/* Calls fn for every group with InterPodAffinity score terms and pods. */
int topo_scored_each(const dp_topo_index *idx, int (*fn)(topo_group *g, void *ud), void *ud);

/* Filter as a list of checks, each a function of one key's domain d =
 * dom[ni]: the node fails with `missing` when d < 0 (0: passes), else with
 * `verdict` when the count n (cnt[d]; 0 when cnt is NULL or present[d] is
 * 0) is above `limit` (above false: at or below it). Built from the state
 * for the many nodes of a Pending pod's reasons, in O(checks); the same
 * answers as the plugins' Filter. */
typedef struct topo_check {
        const topo_keydom *kd;
        const int64_t *cnt;
        const uint8_t *present;
        const int32_t *touched; /* the domains whose count was ever raised (NULL: any) */
        size_t n_touched;
        int64_t limit;
        bool above, never; /* never: only a missing key fails */
        uint8_t verdict, missing;
} topo_check;

static inline dp_verdict_code topo_check_node(const topo_check *c, size_t ni) {
        int32_t d = c->kd->dom[ni];
        if (d < 0) return (dp_verdict_code)c->missing;
        if (c->never) return DP_VERDICT_FIT;
        int64_t n = c->cnt && (!c->present || c->present[d]) ? c->cnt[d] : 0;
        return (c->above ? n > c->limit : n <= c->limit) ? (dp_verdict_code)c->verdict : DP_VERDICT_FIT;
}

typedef struct topo_checks {
        topo_check *v;
        size_t n, cap;
} topo_checks;

/* ---- the plugins (each its own file) ---- */
typedef struct topo_spread topo_spread;
typedef struct topo_interpod topo_interpod;

int topo_spread_prefilter(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns, const dp_node *const *tab,
                          size_t n_tab, topo_spread **ret);
dp_verdict_code topo_spread_filter(const topo_spread *sp, size_t ni);
int topo_spread_update(topo_spread *sp, const dp_pod *p, const char *ns, size_t ni, int delta);
void topo_spread_finish(topo_spread *sp); /* the minimum per constraint, after the pods are added */
topo_spread *topo_spread_free(topo_spread *sp);
int topo_spread_checks(const topo_spread *sp, topo_checks *ret);

int topo_interpod_prefilter(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns, topo_interpod **ret);
dp_verdict_code topo_interpod_filter(const topo_interpod *ip, size_t ni);
int topo_interpod_update(topo_interpod *ip, const dp_pod *p, const char *ns, size_t ni, int delta);
topo_interpod *topo_interpod_free(topo_interpod *ip);
int topo_interpod_checks(const topo_interpod *ip, topo_checks *ret);
int topo_interpod_score(dp_sched *s, dp_topo_index *idx, const dp_pod *p, const char *ns,
                        const struct dp_score_profile *prof, const uint32_t *feas, size_t n, int64_t *out,
                        bool *ret_any);
int topo_spread_score(dp_topo_index *idx, const dp_store *st, bool defaults, const dp_pod *p, const char *ns,
                      const dp_node *const *tab, size_t n_tab, const uint32_t *feas, size_t n, int64_t *out,
                      bool *ignored, bool *ret_any);
/* The cluster's default constraints apply to p (its controller a
 * ReplicaSet, StatefulSet or Deployment of the store with a selector). */
bool topo_spread_defaults_apply(const dp_store *st, const dp_pod *p, const char *ns);
