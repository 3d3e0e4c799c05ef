/* SPDX-License-Identifier: Apache-2.0
 *
 * preempt.c — Kueue's classical preemption (pkg/scheduler/preemption:
 * preemption.go, classical_strategy.go, classical/candidate_generator.go,
 * classical/hierarchical_preemption.go, preemption_oracle.go).
 *
 * Candidates are admitted workloads using a flavor-resource the preemptor
 * needs preemption for, in three kinds: hierarchy candidates (in a
 * ClusterQueue over its quota in a subtree that, with the preemptor's
 * request, fits its own quota: the preemptor is closer to that quota, so
 * their priority does not matter beyond reclaimWithinCohort), priority
 * candidates (elsewhere in the cohort tree; borrowWithinCohort and its
 * maxPriorityThreshold decide whether the preemptor may borrow while
 * taking them) and same-queue candidates (withinClusterQueue). Each kind is
 * sorted (other ClusterQueues first, lower priority first, most recently
 * admitted first), then they are removed in that order, as long as each is
 * still valid (its ClusterQueue and the cohorts up to the common ancestor
 * still over their quota), until the preemptor fits (with or without
 * borrowing, tried in the order the heuristics say), and given back in
 * reverse where the preemptor still fits without them.
 *
 * The quota tree is the cycle's snapshot: every removal is put back before
 * returning. The quota each admitted workload holds is kept here (qheld).
 */
#include <stdio.h>

#include "base/strv.h"
#include "queue/queue-internal.h"
#include "queue/tas.h"

/* ---- what each admitted workload holds ---- */

int q_held_add(dp_queue *q, size_t w, size_t fr, int64_t v) {
        if (!q->held && !(q->held = calloc(q->n_wl + 1, sizeof(*q->held)))) return -ENOMEM;
        qheld *h = &q->held[w];
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].fr == fr) {
                        h->v[i].value += v;
                        return 0;
                }
        qusage *x = realloc(h->v, (h->n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        h->v = x;
        x[h->n++] = (qusage){fr, v, false};
        return 0;
}

void q_held_free(dp_queue *q) {
        for (size_t i = 0; q->held && i < q->n_wl; i++)
                free(q->held[i].v);
        free(q->held);
        q->held = NULL;
}

/* The fair-sharing walk's scratch, kept between searches: per cohort (by
 * node index) a slice of heap with its ClusterQueue children by share and
 * a slice with its Cohort children, made on the cohort's first visit in a
 * walk (epoch). */
typedef struct hent {
        const qnode *kid;
        qshare s;
        uint64_t stamp; /* kid->ustamp when s was read */
        size_t k;       /* its place among the cohort's children: the later wins a tie */
} hent;

typedef struct qwalk {
        hent *heap;       /* n_cqs entries in all */
        const qnode **co; /* n_nodes entries in all */
        size_t *hoff, *hlen, *coff, *clen;
        uint64_t *built; /* per node: the epoch its slices were made in */
        uint64_t epoch;
        size_t n_heap, n_co, n_nodes, n_cqs;
} qwalk;

static void walk_free(qwalk *wk) {
        if (!wk) return;
        free(wk->heap), free(wk->co), free(wk->hoff), free(wk->hlen), free(wk->coff), free(wk->clen), free(wk->built);
        free(wk);
}

void q_preempt_free(dp_queue *q) {
        free(q->pmark);
        free(q->share_memo);
        walk_free(q->walk);
        q->pmark = NULL;
        q->share_memo = NULL;
        q->walk = NULL;
}

static qheld held_of(const dp_queue *q, size_t w) { return q->held ? q->held[w] : (qheld){0}; }

static qnode *node_of(const dp_queue *q, size_t w) { return q->cqs[q->wl[w].cq].node; }

/* snapshot.RemoveWorkload / AddWorkload */
static void take_out(dp_queue *q, size_t w) {
        qheld h = held_of(q, w);
        for (size_t i = 0; i < h.n; i++)
                q_remove_usage(node_of(q, w), h.v[i].fr, h.v[i].value);
        q_tas_hold(q, w, -1);
}

static void put_back(dp_queue *q, size_t w) {
        qheld h = held_of(q, w);
        for (size_t i = 0; i < h.n; i++)
                q_add_usage(node_of(q, w), h.v[i].fr, h.v[i].value);
        q_tas_hold(q, w, 1);
}

/* ---- one preemptor ---- */

typedef enum { PV_NEVER = 0, PV_WITHIN_CQ, PV_HIERARCHICAL, PV_RECLAIM_NO_BORROW, PV_RECLAIM_WHILE_BORROW } pvariant;

/* What CandidatesOrdering compares, copied out of the workload when the
 * candidate is found (q_cand_order's fields), so the sort does not chase
 * each workload: the oracle sorts the cohort's candidates for every head. */
typedef struct ckey {
        bool in;    /* in the preemptor's ClusterQueue */
        uint8_t ka; /* 1 admitted in a cycle, 0 before the input with a time, 2 without */
        int32_t prio;
        size_t cq, cycle, order;
        double afs; /* q_afs_usage, -1 off */
        const char *reserved, *lq;
} ckey;

typedef struct cand {
        size_t w;
        const qnode *lca; /* the subtree root it was found under (NULL: same ClusterQueue) */
        pvariant v;
        ckey k;
} cand;

typedef struct cands {
        cand *v;
        size_t n, cap;
        bool oom;
} cands;

typedef struct pctx {
        dp_queue *q;
        const qcq *cq;
        size_t cq_index;
        const dp_queue_workload *w;
        const qusage *req; /* workloadUsage.Quota */
        size_t n_req;
        bool oom;
        int8_t within, reclaim; /* the ClusterQueue's policies (policy_code), pctx_init */
        bool borrow_never;      /* borrowWithinCohort is Never (or unset) */
        bool pooled;            /* the candidates are read off the root's pool (pool_read) */
        bool borrow_only;       /* classical: only the attempt with borrowing is made (classical_kinds) */
        struct cands *kinds;    /* pooled: the lists from_cq's out points into */
        bool tas;               /* the topology must fit too (q_tas_fits; not the oracle's) */
} pctx;

static bool never(const char *policy) { return !policy || streq(policy, "Never"); }

/* A policy as a code, so the candidates' test compares numbers. */
enum { POL_NEVER, POL_LOWER, POL_LOWER_OR_NEWER_EQUAL, POL_ANY };
static int8_t policy_code(const char *policy) {
        if (never(policy)) return POL_NEVER;
        if (streq(policy, "LowerPriority")) return POL_LOWER;
        if (streq(policy, "LowerOrNewerEqualPriority")) return POL_LOWER_OR_NEWER_EQUAL;
        return streq(policy, "Any") ? POL_ANY : POL_NEVER;
}

static void pctx_init(pctx *x) {
        const dp_kq_preemption *p = &x->cq->cq->preemption;
        x->within = policy_code(p->within_cluster_queue);
        x->reclaim = policy_code(p->reclaim_within_cohort);
        x->borrow_never = never(p->borrow_within_cohort);
}

static bool needs(const pctx *x, size_t fr) {
        for (size_t i = 0; i < x->n_req; i++)
                if (x->req[i].fr == fr && x->req[i].preempt) return true;
        return false;
}

/* IsWithinNominalInResources, over the flavor-resources needing preemption */
static bool within_nominal(const pctx *x, const qnode *n) {
        for (size_t i = 0; i < x->n_req; i++)
                if (x->req[i].preempt && n->q[x->req[i].fr].usage > n->q[x->req[i].fr].subtree) return false;
        return true;
}

/* The queue order timestamp: creation (input order when one is unset). */
static bool ts_before(const dp_queue_workload *a, const dp_queue_workload *b) {
        if (a->created && b->created) return strcmp(a->created, b->created) < 0;
        return a->order < b->order;
}

/* Whether the candidate holds a flavor-resource the preemptor needs
 * preemption for: its one held fr (fr >= 0: the pool's entry says), else
 * what it holds. */
static bool uses(const pctx *x, size_t w, int32_t fr) {
        if (fr >= 0) return needs(x, (size_t)fr);
        qheld h = held_of(x->q, w);
        for (size_t i = 0; i < h.n; i++)
                if (needs(x, h.v[i].fr)) return true;
        return false;
}

/* classifyPreemptionVariant of workload w of ClusterQueue cq at priority
 * prio (fr: uses). */
static pvariant variant(const pctx *x, size_t w, size_t cq, int32_t prio, int32_t fr, bool advantage) {
        int8_t policy = cq == x->cq_index ? x->within : x->reclaim;
        int32_t in = x->w->priority;
        bool ok = policy == POL_ANY || (policy != POL_NEVER && in > prio) ||
                  (policy == POL_LOWER_OR_NEWER_EQUAL && in == prio && ts_before(x->w, &x->q->wl[w]));
        if (!ok || !uses(x, w, fr)) return PV_NEVER;
        if (cq == x->cq_index) return PV_WITHIN_CQ;
        if (advantage) return PV_HIERARCHICAL;
        const dp_kq_preemption *p = &x->cq->cq->preemption;
        if (x->borrow_never || prio >= in) return PV_RECLAIM_NO_BORROW;
        if (p->has_max_priority_threshold && prio > p->max_priority_threshold) return PV_RECLAIM_NO_BORROW;
        return PV_RECLAIM_WHILE_BORROW;
}

static pvariant classify(const pctx *x, size_t w, bool advantage) {
        const dp_queue_workload *c = &x->q->wl[w];
        return variant(x, w, c->cq, c->priority, -1, advantage);
}

static const char *reason_of(pvariant v) {
        switch (v) {
        case PV_WITHIN_CQ: return "InClusterQueue";
        case PV_RECLAIM_WHILE_BORROW: return "InCohortReclaimWhileBorrowing";
        default: return "InCohortReclamation";
        }
}

static void cands_push(cands *c, cand x) {
        if (c->oom) return;
        if (c->n == c->cap) { /* doubling: a search pushes every admitted workload of the cohort */
                size_t cap = c->cap ? 2 * c->cap : 16;
                cand *v = realloc(c->v, cap * sizeof(*v));
                if (!v) {
                        c->oom = true;
                        return;
                }
                c->v = v;
                c->cap = cap;
        }
        c->v[c->n++] = x;
}

/* The ClusterQueue's admitted workloads, made again from its queue after
 * any state change of one of its workloads (q_state_changed): the search
 * reads them for every head of every cycle, and most of a busy queue's
 * workloads wait. Test builds check the list against a scan. */
static int adm_of(dp_queue *q, const qcq *cc, const size_t **ret, size_t *ret_n) {
        qcq *c = &q->cqs[cc - q->cqs];
        if (!c->adm_built) {
                c->n_adm = 0;
                for (size_t i = 0; i < c->n_wl; i++) {
                        if (q->wl[c->wl[i]].state != DP_QW_ADMITTED) continue;
                        if (DP_GROW(c->adm, c->cap_adm, c->n_adm + 1) < 0) return -ENOMEM;
                        c->adm[c->n_adm++] = c->wl[i];
                }
                c->adm_built = true;
        }
#if DP_TEST_HOOKS
        size_t n = 0;
        for (size_t i = 0; i < c->n_wl; i++)
                n += q->wl[c->wl[i]].state == DP_QW_ADMITTED;
        assert(n == c->n_adm);
        for (size_t i = 0; i < c->n_adm; i++)
                assert(q->wl[c->adm[i]].state == DP_QW_ADMITTED);
#endif
        *ret = c->adm;
        *ret_n = c->n_adm;
        return 0;
}

/* dp_queue.pmark: the kind (index in pctx.kinds + 1) and classify's
 * advantage */
enum { PM_KIND = 0x0f, PM_ADV = 0x10 };

/* A candidate's ordering keys (in: whether it is in the preemptor's
 * ClusterQueue). */
static ckey key_of(const dp_queue *q, size_t w, bool in) {
        const dp_queue_workload *a = &q->wl[w];
        return (ckey){in,
                      (uint8_t)(a->cycle         ? 1
                                : a->reserved_at ? 0
                                                 : 2),
                      a->priority,
                      a->cq,
                      a->cycle,
                      a->order,
                      q_afs_usage(q, w),
                      a->reserved_at,
                      a->local_queue};
}

/* getCandidatesFromCQ: its admitted workloads that may be preempted.
 * pooled (below): the ClusterQueue is only marked with the kind its
 * candidates go to, and the pool read once gives them in order. */
static void from_cq(const pctx *x, const qcq *c, const qnode *lca, bool advantage, cands *out) {
        if (x->pooled) {
                size_t i = (size_t)(c - x->q->cqs);
                if (!x->q->pmark && !(x->q->pmark = calloc(x->q->n_cqs + 1, 1))) {
                        out->oom = true;
                        return;
                }
                x->q->pmark[i] = (uint8_t)((out - x->kinds + 1) | (advantage ? PM_ADV : 0));
                x->q->n_pmarked++;
                x->q->cqs[i].plca = lca;
                return;
        }
        const size_t *adm = NULL;
        size_t n = 0;
        if (adm_of(x->q, c, &adm, &n) < 0) out->oom = true;
        for (size_t i = 0; i < n; i++) {
                size_t w = adm[i];
                pvariant v = classify(x, w, advantage);
                if (v != PV_NEVER) cands_push(out, (cand){w, lca, v, key_of(x->q, w, x->q->wl[w].cq == x->cq_index)});
        }
}

static const qcq *cq_of_node(const dp_queue *q, const qnode *n) { return n->cq >= 0 ? &q->cqs[n->cq] : NULL; }

/* collectCandidatesInSubtree: ClusterQueues over their quota, below
 * cohorts over theirs, skipping the subtree already visited. */
static void in_subtree(const pctx *x, const qnode *n, const qnode *root, const qnode *skip, bool advantage,
                       cands *out) {
        for (size_t k = 0; k < n->n_kids; k++) {
                const qnode *kid = n->kids[k];
                if (kid->is_cq || kid == skip || within_nominal(x, kid)) continue;
                in_subtree(x, kid, root, skip, advantage, out);
        }
        for (size_t k = 0; k < n->n_kids; k++) {
                const qnode *kid = n->kids[k];
                if (!kid->is_cq || kid == x->cq->node || within_nominal(x, kid)) continue;
                const qcq *c = cq_of_node(x->q, kid);
                if (c) from_cq(x, c, root, advantage, out);
        }
}

/* QuantitiesFitInQuota: does rem fit n's own quota; rem becomes what
 * exceeds n's local quota (for the parent). */
static bool fits_in_quota(const qnode *n, const qusage *req, int64_t *rem, size_t nr) {
        bool fits = true;
        for (size_t i = 0; i < nr; i++) {
                size_t fr = req[i].fr;
                if (n->q[fr].usage + rem[i] > n->q[fr].subtree) fits = false;
                rem[i] = DP_MAX(0, rem[i] - q_local_available(n, fr));
        }
        return fits;
}

/* collectCandidatesForHierarchicalReclaim */
static void hierarchical(pctx *x, cands *hier, cands *prio) {
        const char *reclaim = x->cq->cq->preemption.reclaim_within_cohort;
        if (!x->cq->node->parent || never(reclaim)) return;
        int64_t *rem = calloc(x->n_req + 1, sizeof(*rem));
        if (!rem) {
                x->oom = true;
                return;
        }
        for (size_t i = 0; i < x->n_req; i++)
                rem[i] = x->req[i].value;
        bool advantage = fits_in_quota(x->cq->node, x->req, rem, x->n_req);
        const qnode *prev = NULL;
        for (const qnode *cur = x->cq->node->parent; cur; cur = cur->parent) {
                if (advantage || !x->borrow_only) in_subtree(x, cur, cur, prev, advantage, advantage ? hier : prio);
                advantage = fits_in_quota(cur, x->req, rem, x->n_req) || advantage;
                prev = cur;
        }
        free(rem);
}

/* Most recently admitted first: admitted in a cycle after admitted before
 * the input was taken; a preadmitted one without its QuotaReserved time
 * counts as now, as Kueue's quotaReservationTime does. */
static int cmp_admitted(const dp_queue_workload *a, const dp_queue_workload *b) {
        int ka = a->cycle ? 1 : a->reserved_at ? 0 : 2, kb = b->cycle ? 1 : b->reserved_at ? 0 : 2;
        if (ka != kb) return ka > kb ? -1 : 1;
        if (ka == 1 && a->cycle != b->cycle) return a->cycle > b->cycle ? -1 : 1;
        if (ka == 0) {
                int c = strcmp(a->reserved_at, b->reserved_at);
                if (c) return -c;
        }
        return 0;
}

/* CandidatesOrdering (queue-internal.h): other ClusterQueues first,
 * (Admission Fair Sharing) the LocalQueue using more, lower priority, most
 * recently admitted; input order instead of Kueue's UID. */
int q_cand_order(const dp_queue *q, size_t cq, size_t x, size_t y) {
        const dp_queue_workload *a = &q->wl[x], *b = &q->wl[y];
        bool ain = a->cq == cq, bin = b->cq == cq;
        if (ain != bin) return ain ? 1 : -1;
        double ua = q_afs_usage(q, x), ub = q_afs_usage(q, y);
        if (a->cq == b->cq && ua >= 0 && ub >= 0 && !streq_ptr(a->local_queue, b->local_queue) && ua != ub)
                return ua > ub ? -1 : 1; /* Admission Fair Sharing: the LocalQueue using more first */
        if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
        int c = cmp_admitted(a, b);
        if (c) return c;
        return a->order < b->order ? -1 : a->order > b->order;
}

/* q_cand_order on the keys copied at find time (the same order). */
static int cmp_cand(const void *x, const void *y, void *userdata) {
        (void)userdata;
        const ckey *a = &((const cand *)x)->k, *b = &((const cand *)y)->k;
        if (a->in != b->in) return a->in ? 1 : -1;
        if (a->cq == b->cq && a->afs >= 0 && b->afs >= 0 && a->afs != b->afs && !streq_ptr(a->lq, b->lq))
                return a->afs > b->afs ? -1 : 1;
        if (a->prio != b->prio) return a->prio < b->prio ? -1 : 1;
        if (a->ka != b->ka) return a->ka > b->ka ? -1 : 1;
        if (a->ka == 1 && a->cycle != b->cycle) return a->cycle > b->cycle ? -1 : 1;
        if (a->ka == 0) {
                int c = strcmp(a->reserved, b->reserved);
                if (c) return -c;
        }
        return a->order < b->order ? -1 : a->order > b->order;
}

/* ---- the root's pool ----
 *
 * Without Admission Fair Sharing, CandidatesOrdering is one total order
 * once "in the preemptor's ClusterQueue" is set apart: priority, then
 * admission, then input order, none of which depends on the preemptor. So
 * each kind's sorted candidates are the admitted workloads of the root's
 * tree, in that order, filtered. The pool is sorted again only after the
 * tree's admitted set has changed, not for every head of every cycle (the
 * oracle asks for each head that does not fit). Test builds check the
 * lists against the search and sort of each ClusterQueue. */

/* A pool entry: what the read tests before it looks at the workload. */
typedef struct qpooled {
        uint32_t w, cq;
        int32_t prio;
        int32_t fr; /* the one flavor-resource it holds, -1: several (or none) */
} qpooled;

static int pool_collect(dp_queue *q, const qnode *n, cands *all) {
        if (!n->is_cq) {
                for (size_t k = 0; k < n->n_kids; k++)
                        if (pool_collect(q, n->kids[k], all) < 0) return -ENOMEM;
                return 0;
        }
        const size_t *adm = NULL;
        size_t k = 0;
        if (n->cq < 0 || adm_of(q, &q->cqs[n->cq], &adm, &k) < 0) return -ENOMEM;
        for (size_t i = 0; i < k; i++)
                cands_push(all, (cand){adm[i], NULL, PV_NEVER, key_of(q, adm[i], false)});
        return all->oom ? -ENOMEM : 0;
}

static int pool_of(dp_queue *q, qnode *root) {
        if (root->pool_built) return 0;
        if (q->n_wl > UINT32_MAX || q->n_cqs > UINT32_MAX) return -ENOMEM;
        cands all = {0};
        int r = pool_collect(q, root, &all);
        if (r >= 0 && all.n) qsort_r(all.v, all.n, sizeof(*all.v), cmp_cand, NULL);
        if (r >= 0 && DP_GROW(root->pool, root->cap_pool, all.n + 1) < 0) r = -ENOMEM;
        if (r >= 0) {
                for (size_t i = 0; i < all.n; i++) {
                        const dp_queue_workload *a = &q->wl[all.v[i].w];
                        qheld h = held_of(q, all.v[i].w);
                        int32_t fr = h.n == 1 && h.v[0].fr <= INT32_MAX ? (int32_t)h.v[0].fr : -1;
                        root->pool[i] = (qpooled){(uint32_t)all.v[i].w, (uint32_t)a->cq, a->priority, fr};
                }
                root->n_pool = all.n;
                root->pool_built = true;
        }
        free(all.v);
        return r;
}

static void unmark(dp_queue *q, const qnode *n) {
        if (n->is_cq) q->pmark[n->cq] = 0;
        for (size_t k = 0; k < n->n_kids; k++)
                unmark(q, n->kids[k]);
}

static qnode *root_of(const pctx *x) {
        qnode *r = x->cq->node;
        while (r->parent)
                r = r->parent;
        return r;
}

/* The marked ClusterQueues' candidates off the pool, each to its kind, in
 * order; the marks cleared. A workload of a priority the policies rule out
 * is passed over without reading it. When only the preemptor's own
 * ClusterQueue is marked, its own pool is read instead of the tree's. */
static void pool_read(pctx *x) {
        const uint8_t *mark = x->q->pmark;
        if (!x->q->n_pmarked) return;
        qnode *root = x->q->n_pmarked == 1 && mark[x->cq_index] ? x->cq->node : root_of(x);
        x->q->n_pmarked = 0;
        if (pool_of(x->q, root) < 0) {
                unmark(x->q, root_of(x));
                x->oom = true;
                return;
        }
        int32_t in = x->w->priority;
        for (size_t i = 0; i < root->n_pool; i++) {
                const qpooled *e = &root->pool[i];
                uint8_t m = mark[e->cq];
                if (!m) continue;
                int8_t policy = e->cq == x->cq_index ? x->within : x->reclaim;
                if ((policy == POL_LOWER && e->prio >= in) || (policy == POL_LOWER_OR_NEWER_EQUAL && e->prio > in))
                        continue;
                pvariant v = variant(x, e->w, e->cq, e->prio, e->fr, m & PM_ADV);
                if (v != PV_NEVER)
                        cands_push(&x->kinds[(m & PM_KIND) - 1], (cand){e->w, x->q->cqs[e->cq].plca, v, {.cq = e->cq}});
        }
        unmark(x->q, root);
}

static void sort_cands(cands *c) {
        if (c->n) qsort_r(c->v, c->n, sizeof(*c->v), cmp_cand, NULL);
}

#if DP_TEST_HOOKS
static void same_cands(const cands *a, const cands *b) {
        assert(a->oom || b->oom || a->n == b->n);
        for (size_t i = 0; !a->oom && !b->oom && i < a->n; i++)
                assert(a->v[i].w == b->v[i].w && a->v[i].lca == b->v[i].lca && a->v[i].v == b->v[i].v);
}
#endif

/* candidateIsValid: removals so far may have brought its queue (or a
 * cohort up to the common ancestor) back within quota. */
static bool valid(const pctx *x, const cand *c, bool borrow) {
        if (x->q->wl[c->w].cq == x->cq_index) return true;
        if (borrow && c->v == PV_RECLAIM_NO_BORROW) return false;
        const qnode *n = node_of(x->q, c->w);
        if (within_nominal(x, n)) return false;
        for (const qnode *p = n->parent; p && p != c->lca; p = p->parent)
                if (within_nominal(x, p)) return false;
        return true;
}

/* workloadFits */
static bool fits(const pctx *x, bool borrow) {
        const qnode *n = x->cq->node;
        for (size_t i = 0; i < x->n_req; i++) {
                size_t fr = x->req[i].fr;
                int64_t v = x->req[i].value;
                if (!borrow && n->q[fr].usage + v > n->q[fr].subtree) return false;
                if (v > q_available(n, fr)) return false;
        }
        return !x->tas || q_tas_fits(x->q, x->cq, x->w);
}

/* fillBackWorkloads: give back, last but one first, what is not needed. */
static size_t fill_back(const pctx *x, qtarget *t, size_t n, bool borrow) {
        for (size_t i = n - 1; i-- > 0;) {
                put_back(x->q, t[i].w);
                if (fits(x, borrow))
                        t[i] = t[--n];
                else
                        take_out(x->q, t[i].w);
        }
        return n;
}

/* One pass with or without borrowing; the targets (n > 0) or 0. */
static size_t attempt(const pctx *x, const cand *all, size_t n_all, bool borrow, qtarget *t) {
        size_t n = 0;
        for (size_t i = 0; i < n_all; i++) {
                if (!valid(x, &all[i], borrow)) continue;
                take_out(x->q, all[i].w);
                t[n++] = (qtarget){all[i].w, reason_of(all[i].v)};
                if (fits(x, borrow)) {
                        n = fill_back(x, t, n, borrow);
                        for (size_t k = 0; k < n; k++)
                                put_back(x->q, t[k].w);
                        return n;
                }
        }
        for (size_t k = 0; k < n; k++)
                put_back(x->q, t[k].w);
        return 0;
}

/* queueUnderNominalInResourcesNeedingPreemption */
static bool under_nominal(const pctx *x) {
        for (size_t i = 0; i < x->n_req; i++)
                if (x->req[i].preempt && x->cq->node->q[x->req[i].fr].usage >= x->cq->node->q[x->req[i].fr].nominal)
                        return false;
        return true;
}

static void append(cands *all, cands *part) {
        for (size_t i = 0; i < part->n; i++)
                cands_push(all, part->v[i]);
        all->oom |= part->oom;
        free(part->v);
        *part = (cands){0};
}

/* The three kinds, each in CandidatesOrdering: k[0] hierarchy, k[1]
 * priority, k[2] same ClusterQueue. */
static void classical_kinds(pctx *x, cands k[3]) {
        x->kinds = k;
        x->borrow_only = never(x->cq->cq->preemption.borrow_within_cohort) && !under_nominal(x);
        if (!never(x->cq->cq->preemption.within_cluster_queue)) from_cq(x, x->cq, NULL, false, &k[2]);
        hierarchical(x, &k[0], &k[1]);
        if (x->pooled)
                pool_read(x);
        else
                for (size_t i = 0; i < 3; i++)
                        sort_cands(&k[i]);
#if DP_TEST_HOOKS
        if (x->pooled) {
                pctx y = *x;
                cands s[3] = {{0}, {0}, {0}};
                y.pooled = false;
                classical_kinds(&y, s);
                for (size_t i = 0; i < 3; i++) {
                        same_cands(&k[i], &s[i]);
                        free(s[i].v);
                }
                x->kinds = k;
        }
#endif
}

/* classicalPreemptions: the candidate kinds, then the attempts in the
 * heuristics' order. */
static int classical_targets(pctx *x, qtarget **ret, size_t *ret_n) {
        cands k[3] = {{0}, {0}, {0}};
        classical_kinds(x, k);
        bool no_other = !k[0].n && !k[1].n, no_hier = !k[0].n;
        cands all = k[0];
        append(&all, &k[1]);
        append(&all, &k[2]);
        qtarget *t = calloc(all.n + 1, sizeof(*t));
        if (!t || all.oom || x->oom) {
                free(all.v);
                free(t);
                return -ENOMEM;
        }
        bool forbidden = never(x->cq->cq->preemption.borrow_within_cohort);
        bool opts[2] = {true, false};
        size_t n_opts = 2;
        if (no_other || (forbidden && !under_nominal(x)))
                n_opts = 1;
        else if (forbidden && no_hier)
                opts[0] = false, opts[1] = true;
        size_t n = 0;
        for (size_t o = 0; o < n_opts && !n && all.n; o++)
                n = attempt(x, all.v, all.n, opts[o], t);
        free(all.v);
        *ret = t;
        *ret_n = n;
        return 0;
}

/* ---- fair sharing's preemption (fair_strategy.go, fairsharing/) ----
 *
 * Candidates: the preemptor's ClusterQueue under withinClusterQueue, and
 * every ClusterQueue of its root cohort that borrows a flavor-resource the
 * preemptor needs, under reclaimWithinCohort. With the preemptor's usage
 * added, the ClusterQueue to take from next is found from the root down,
 * each cohort going to its child with the highest share (ties: the later
 * one; a cohort before a ClusterQueue), pruning those that no longer
 * borrow. From another ClusterQueue a candidate goes when the preemptor's
 * side of their lowest common ancestor would have a share no higher than
 * the target side's after the removal (LessThanOrEqualToFinalShare); the
 * others are retried under LessThanInitialShare (the preemptor's side
 * strictly below the target side's share before), one per ClusterQueue.
 * Kueue's default strategies, both, in that order; the Configuration's
 * fairSharing.preemptionStrategies may name one ([LessThanInitialShare]: the
 * first pass compares with the target's share before, and no second pass).
 * (Kueue's later gates,
 * FairSharingPreemptWithinNominal and re-evaluating candidates, are not
 * modelled.) */

typedef struct ford {
        pctx *x;
        const cand *v; /* candidates in order */
        size_t n;
        size_t *left;         /* per ClusterQueue: its candidates not taken yet */
        size_t *cursor;       /* per ClusterQueue: its first candidate not taken (SIZE_MAX: none) */
        size_t *next;         /* per candidate: the next one of its ClusterQueue (SIZE_MAX: none) */
        bool *pruned_cq;      /* per ClusterQueue */
        const qnode **pruned; /* Cohorts */
        size_t n_pruned;
        qwalk *wk;
} ford;

static bool is_pruned(const ford *o, const qnode *n) {
        if (n->is_cq) return o->pruned_cq[n->cq];
        for (size_t i = 0; i < o->n_pruned; i++)
                if (o->pruned[i] == n) return true;
        return false;
}

static void prune(ford *o, const qnode *n) {
        if (n->is_cq)
                o->pruned_cq[n->cq] = true;
        else if (!is_pruned(o, n))
                o->pruned[o->n_pruned++] = n;
}

/* A ClusterQueue's candidates are taken first to last (pop), so its first
 * one not taken is a cursor along its own chain. */
static ssize_t first_of(ford *o, const qnode *cq) { return o->left[cq->cq] ? (ssize_t)o->cursor[cq->cq] : -1; }

static size_t pop(ford *o, const qnode *cq) {
        size_t i = (size_t)first_of(o, cq);
        o->left[cq->cq]--;
        o->cursor[cq->cq] = o->next[i];
        return o->v[i].w;
}

/* A ford over v[0..n), nothing taken or pruned. */
static void ford_reset(ford *o, const cand *v, size_t n) {
        o->v = v;
        o->n = n;
        o->n_pruned = 0;
        o->wk->epoch++;
        o->wk->n_heap = o->wk->n_co = 0;
        memset(o->left, 0, (o->x->q->n_cqs + 1) * sizeof(*o->left));
        memset(o->cursor, 0xff, (o->x->q->n_cqs + 1) * sizeof(*o->cursor));
        memset(o->pruned_cq, 0, (o->x->q->n_cqs + 1) * sizeof(*o->pruned_cq));
        for (size_t i = n; i-- > 0;) {
                size_t c = v[i].k.cq; /* set by every maker of candidates */
                o->left[c]++;
                o->next[i] = o->cursor[c];
                o->cursor[c] = i;
        }
}

/* A node's share, computed once per change of its usage in this search. */
typedef struct qsharememo {
        uint64_t search, ustamp;
        qshare s;
} qsharememo;

static qshare ford_share(const ford *o, const qnode *n) {
        qsharememo *m = &o->x->q->share_memo[n->idx];
        if (m->search != o->x->q->search || m->ustamp != n->ustamp)
                *m = (qsharememo){o->x->q->search, n->ustamp, q_share(o->x->q, n)};
        return m->s;
}

static bool on_path(const pctx *x, const qnode *cohort) {
        for (const qnode *p = x->cq->node->parent; p; p = p->parent)
                if (p == cohort) return true;
        return false;
}

/* ---- the cohort walk's heaps ----
 *
 * nextTarget compares every child of a cohort at every step; a child's
 * share changes only when its usage does, and within a search usage only
 * goes down (the preemptor's request is added first; take_out is undone at
 * once or kept), so shares only go down and a child once prunable (no
 * share, or no candidate left) stays so. A heap per cohort of its
 * ClusterQueue children, highest share first (ties: the later child), with
 * each entry's share read again when it reaches the top after its usage
 * changed and the prunable ones dropped there, gives the child the scan
 * gives, in O(log children) a step. */

static bool hent_above(const hent *a, const hent *b) {
        int c = q_share_cmp(a->s, b->s);
        return c > 0 || (c == 0 && a->k > b->k);
}

static void sift_down(hent *h, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < n && hent_above(&h[l], &h[m])) m = l;
                if (r < n && hent_above(&h[r], &h[m])) m = r;
                if (m == i) return;
                hent t = h[i];
                h[i] = h[m];
                h[m] = t;
                i = m;
        }
}

/* The cohort's slices, made on its first visit in this walk. */
static void walk_build(ford *o, const qnode *cohort) {
        qwalk *wk = o->wk;
        size_t c = cohort->idx;
        if (wk->built[c] == wk->epoch) return;
        wk->built[c] = wk->epoch;
        wk->hoff[c] = wk->n_heap;
        wk->coff[c] = wk->n_co;
        for (size_t k = 0; k < cohort->n_kids; k++) {
                const qnode *kid = cohort->kids[k];
                if (kid->is_cq)
                        wk->heap[wk->n_heap++] = (hent){kid, ford_share(o, kid), kid->ustamp, k};
                else
                        wk->co[wk->n_co++] = kid;
        }
        wk->hlen[c] = wk->n_heap - wk->hoff[c];
        wk->clen[c] = wk->n_co - wk->coff[c];
        hent *h = wk->heap + wk->hoff[c];
        for (size_t i = wk->hlen[c] / 2; i-- > 0;)
                sift_down(h, wk->hlen[c], i);
}

/* The ClusterQueue child with the highest share that is not prunable. */
static const qnode *best_cq_child(ford *o, const qnode *cohort, qshare *ret) {
        hent *h = o->wk->heap + o->wk->hoff[cohort->idx];
        size_t *n = &o->wk->hlen[cohort->idx];
        while (*n) {
                const qnode *kid = h[0].kid;
                bool drop = is_pruned(o, kid);
                if (!drop && h[0].stamp != kid->ustamp) {
                        h[0].s = ford_share(o, kid);
                        h[0].stamp = kid->ustamp;
                        sift_down(h, *n, 0);
                        continue;
                }
                if (!drop && ((h[0].s.ratio == 0 && kid != o->x->cq->node) || first_of(o, kid) < 0)) {
                        prune(o, kid);
                        drop = true;
                }
                if (!drop) {
                        *ret = h[0].s;
                        return kid;
                }
                h[0] = h[--*n];
                sift_down(h, *n, 0);
        }
        return NULL;
}

#if DP_TEST_HOOKS
/* The scan over every child that the heap replaces (no pruning here). */
static const qnode *best_cq_scan(ford *o, const qnode *cohort) {
        const qnode *best = NULL;
        qshare bq = {0};
        for (size_t k = 0; k < cohort->n_kids; k++) {
                const qnode *kid = cohort->kids[k];
                if (!kid->is_cq || is_pruned(o, kid)) continue;
                qshare s = ford_share(o, kid);
                if ((s.ratio == 0 && kid != o->x->cq->node) || first_of(o, kid) < 0) continue;
                if (!best || q_share_cmp(s, bq) >= 0) best = kid, bq = s;
        }
        return best;
}
#endif

/* nextTarget: the ClusterQueue to take from next under cohort, or NULL
 * (only pruned this time). */
static const qnode *next_target(ford *o, const qnode *cohort) {
        walk_build(o, cohort);
        qshare bq = {0}, bc = {0};
        const qnode *best_cq = best_cq_child(o, cohort, &bq), *best_co = NULL;
#if DP_TEST_HOOKS
        assert(best_cq == best_cq_scan(o, cohort));
#endif
        const qnode **co = o->wk->co + o->wk->coff[cohort->idx];
        for (size_t k = 0; k < o->wk->clen[cohort->idx]; k++) {
                const qnode *kid = co[k];
                if (is_pruned(o, kid)) continue;
                qshare s = ford_share(o, kid);
                if (s.ratio == 0 && !on_path(o->x, kid))
                        prune(o, kid);
                else if (!best_co || q_share_cmp(s, bc) >= 0)
                        best_co = kid, bc = s;
        }
        if (!best_cq && !best_co) {
                prune(o, cohort);
                return NULL;
        }
        if (best_co && (!best_cq || q_share_cmp(bc, bq) >= 0)) return next_target(o, best_co);
        return best_cq;
}

static const qnode *iter_next(ford *o) {
        const qnode *cq = o->x->cq->node, *root = cq;
        if (!cq->parent) return first_of(o, cq) >= 0 ? cq : NULL;
        while (root->parent)
                root = root->parent;
        while (!is_pruned(o, root)) {
                const qnode *t = next_target(o, root);
                if (t) return t;
        }
        return NULL;
}

/* getAlmostLCAs: the children of the lowest common ancestor on the
 * preemptor's side and on the target's. */
static void almost_lcas(const pctx *x, const qnode *target, const qnode **ret_p, const qnode **ret_t) {
        const qnode *t = target;
        while (t->parent && !on_path(x, t->parent))
                t = t->parent;
        const qnode *p = x->cq->node;
        while (p->parent && p->parent != t->parent)
                p = p->parent;
        *ret_p = p;
        *ret_t = t;
}

/* workloadFitsForFairSharing: the preemptor's own usage set aside. */
static bool fits_fair(const pctx *x) {
        for (size_t i = 0; i < x->n_req; i++)
                q_remove_usage(x->cq->node, x->req[i].fr, x->req[i].value);
        bool ok = fits(x, true);
        for (size_t i = 0; i < x->n_req; i++)
                q_add_usage(x->cq->node, x->req[i].fr, x->req[i].value);
        return ok;
}

static bool take(ford *o, size_t w, const char *reason, qtarget *t, size_t *n) {
        take_out(o->x->q, w);
        t[(*n)++] = (qtarget){w, reason};
        return fits_fair(o->x);
}

/* The Configuration's fairSharing.preemptionStrategies: the first one
 * (*ret_n: how many); none given: Kueue's default, both. */
static uint8_t strategy(const dp_queue *q, size_t *ret_n) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        if (!cfg || !cfg->n_fs_strategies) {
                *ret_n = 2;
                return DP_KUEUE_FS_LTEFS;
        }
        *ret_n = cfg->n_fs_strategies;
        return cfg->fs_strategies[0];
}

/* The first strategy (LessThanOrEqualToFinalShare: the preemptor's side no
 * higher than the target's after the removal; LessThanInitialShare:
 * strictly lower than the target's before); the candidates it leaves go to
 * retry. */
static bool first_strategy(ford *o, qtarget *t, size_t *n, size_t *retry, size_t *n_retry) {
        size_t n_strategies;
        bool ltis = strategy(o->x->q, &n_strategies) == DP_KUEUE_FS_LTIS;
        for (const qnode *c; (c = iter_next(o));) {
                if (c == o->x->cq->node) {
                        if (take(o, pop(o, c), "InClusterQueue", t, n)) return true;
                        continue;
                }
                const qnode *pa, *ta;
                almost_lcas(o->x, c, &pa, &ta);
                qshare pnew = ford_share(o, pa), told = ford_share(o, ta);
                while (first_of(o, c) >= 0) {
                        size_t w = pop(o, c);
                        take_out(o->x->q, w);
                        qshare tnew = ford_share(o, ta);
                        put_back(o->x->q, w);
                        if (ltis ? q_share_cmp(pnew, told) < 0 : q_share_cmp(pnew, tnew) <= 0) {
                                if (take(o, w, "InCohortFairSharing", t, n)) return true;
                                break;
                        }
                        retry[(*n_retry)++] = w;
                }
        }
        return false;
}

/* LessThanInitialShare, once per ClusterQueue, over the retried ones. */
static bool second_strategy(ford *o, qtarget *t, size_t *n) {
        for (const qnode *c; (c = iter_next(o));) {
                const qnode *pa, *ta;
                almost_lcas(o->x, c, &pa, &ta);
                bool pass = q_share_cmp(ford_share(o, pa), ford_share(o, ta)) < 0;
                size_t w = pop(o, c);
                if (pass && take(o, w, "InCohortFairSharing", t, n)) return true;
                prune(o, c);
        }
        return false;
}

/* The candidates in CandidatesOrdering: other ClusterQueues' (k[0]) before
 * the preemptor's own (k[1]); pooled, read off the pool into k[0] and k[1]
 * and joined, else found into k[0] and sorted as one list. */
static void fair_candidates(pctx *x, cands k[2]) {
        const dp_kq_preemption *p = &x->cq->cq->preemption;
        x->kinds = k;
        cands *own = x->pooled ? &k[1] : &k[0];
        if (!never(p->within_cluster_queue)) from_cq(x, x->cq, NULL, true, own);
        const qnode *root = root_of(x);
        for (size_t c = 0; x->cq->node->parent && !never(p->reclaim_within_cohort) && c < x->q->n_cqs; c++) {
                const qcq *o = &x->q->cqs[c];
                const qnode *r = o->node;
                while (r->parent)
                        r = r->parent;
                if (o == x->cq || r != root || !o->node->parent || within_nominal(x, o->node)) continue;
                from_cq(x, o, NULL, true, &k[0]);
        }
        if (!x->pooled) {
                sort_cands(&k[0]);
                return;
        }
        pool_read(x);
        append(&k[0], &k[1]);
#if DP_TEST_HOOKS
        pctx y = *x;
        cands s[2] = {{0}, {0}};
        y.pooled = false;
        fair_candidates(&y, s);
        same_cands(&k[0], &s[0]);
        free(s[0].v);
        x->kinds = k;
#endif
}

static int walk_new(dp_queue *q) {
        qwalk *wk = q->walk;
        if (wk && wk->n_nodes >= q->n_nodes && wk->n_cqs >= q->n_cqs) return 0;
        walk_free(wk);
        size_t nn = q->n_nodes + 1;
        q->walk = wk = calloc(1, sizeof(*wk));
        if (!wk) return -ENOMEM;
        wk->heap = calloc(q->n_cqs + 1, sizeof(*wk->heap));
        wk->co = calloc(nn, sizeof(*wk->co));
        wk->hoff = calloc(nn, sizeof(size_t)), wk->hlen = calloc(nn, sizeof(size_t));
        wk->coff = calloc(nn, sizeof(size_t)), wk->clen = calloc(nn, sizeof(size_t));
        wk->built = calloc(nn, sizeof(uint64_t));
        wk->n_nodes = q->n_nodes, wk->n_cqs = q->n_cqs;
        if (wk->heap && wk->co && wk->hoff && wk->hlen && wk->coff && wk->clen && wk->built) return 0;
        walk_free(wk);
        q->walk = NULL;
        return -ENOMEM;
}

/* A new search: the memo of shares sized to the tree, every entry stale. */
static int share_memo_new(dp_queue *q) {
        if (walk_new(q) < 0) return -ENOMEM;
        if (q->n_share_memo < q->n_nodes) {
                free(q->share_memo);
                q->n_share_memo = 0;
                if (!(q->share_memo = calloc(q->n_nodes + 1, sizeof(*q->share_memo)))) return -ENOMEM;
                q->n_share_memo = q->n_nodes;
        }
        q->search++;
        return 0;
}

static int fair_targets(pctx *x, qtarget **ret, size_t *ret_n) {
        if (share_memo_new(x->q) < 0) return -ENOMEM;
        cands kinds[2] = {{0}, {0}};
        fair_candidates(x, kinds);
        cands all = kinds[0];
        qtarget *t = calloc(all.n + 1, sizeof(*t));
        size_t *retry = calloc(all.n + 1, sizeof(*retry));
        cand *again = calloc(all.n + 1, sizeof(*again));
        ford o = {.x = x,
                  .wk = x->q->walk,
                  .left = calloc(x->q->n_cqs + 1, sizeof(size_t)),
                  .cursor = calloc(x->q->n_cqs + 1, sizeof(size_t)),
                  .next = calloc(all.n + 1, sizeof(size_t)),
                  .pruned_cq = calloc(x->q->n_cqs + 1, sizeof(bool)),
                  .pruned = calloc(x->q->n_nodes + 1, sizeof(qnode *))};
        int r = !t || !retry || !again || !o.left || !o.cursor || !o.next || !o.pruned_cq || !o.pruned || all.oom ||
                                x->oom
                        ? -ENOMEM
                        : 0;
        size_t n = 0, n_retry = 0;
        if (r >= 0 && all.n) {
                for (size_t i = 0; i < x->n_req; i++)
                        q_add_usage(x->cq->node, x->req[i].fr, x->req[i].value);
                ford_reset(&o, all.v, all.n);
                size_t n_strategies;
                (void)strategy(x->q, &n_strategies);
                bool ok = first_strategy(&o, t, &n, retry, &n_retry);
                if (!ok && n_strategies > 1) {
                        for (size_t i = 0; i < n_retry; i++)
                                again[i] = (cand){retry[i], NULL, PV_NEVER, {.cq = x->q->wl[retry[i]].cq}};
                        ford_reset(&o, again, n_retry);
                        ok = second_strategy(&o, t, &n);
                }
                for (size_t i = 0; i < x->n_req; i++)
                        q_remove_usage(x->cq->node, x->req[i].fr, x->req[i].value);
                if (ok) n = fill_back(x, t, n, true);
                for (size_t k = 0; k < n; k++)
                        put_back(x->q, t[k].w);
                if (!ok) n = 0;
        }
        free(all.v), free(retry), free(again), free(o.left), free(o.cursor), free(o.next), free(o.pruned_cq),
                free(o.pruned);
        if (r < 0) {
                free(t);
                return r;
        }
        *ret = t;
        *ret_n = n;
        return 0;
}

static int get_targets(pctx *x, qtarget **ret, size_t *ret_n) {
        return x->q->fair_sharing ? fair_targets(x, ret, ret_n) : classical_targets(x, ret, ret_n);
}

int q_preempt_oracle(dp_queue *q, const qcq *cq, const dp_queue_workload *w, size_t fr, int64_t val, qmode *ret_mode,
                     int *ret_borrow) {
        qusage req = {fr, val, true};
        pctx x = {.q = q,
                  .cq = cq,
                  .cq_index = (size_t)(cq - q->cqs),
                  .w = w,
                  .req = &req,
                  .n_req = 1,
                  .pooled = !q->afs};
        pctx_init(&x);
        qtarget *t = NULL;
        size_t n = 0;
        int r = get_targets(&x, &t, &n);
        if (r < 0) return r;
        bool below_root;
        if (!n) {
                *ret_mode = QM_NO_CANDIDATES;
                *ret_borrow = q_borrow_height(cq->node, fr, val, &below_root);
                free(t);
                return 0;
        }
        bool in_cq = false;
        for (size_t i = 0; i < n; i++) {
                take_out(q, t[i].w);
                in_cq |= q->wl[t[i].w].cq == x.cq_index;
        }
        *ret_borrow = q_borrow_height(cq->node, fr, val, &below_root);
        for (size_t i = n; i-- > 0;)
                put_back(q, t[i].w);
        *ret_mode = in_cq ? QM_PREEMPT : QM_RECLAIM;
        free(t);
        return 0;
}

int q_preempt_targets(dp_queue *q, const qcq *cq, size_t w, const qassign *a, qtarget **ret, size_t *ret_n) {
        _cleanup_free_ qusage *req = calloc(a->n_usage + 1, sizeof(*req));
        if (!req) return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < a->n_usage; i++)
                if (a->usage[i].value) req[n++] = a->usage[i];
        pctx x = {.q = q,
                  .cq = cq,
                  .cq_index = (size_t)(cq - q->cqs),
                  .w = &q->wl[w],
                  .req = req,
                  .n_req = n,
                  .pooled = !q->afs,
                  .tas = true};
        pctx_init(&x);
        int r = get_targets(&x, ret, ret_n);
        if (r >= 0 && *ret_n) q_tas_reserve(q, cq, &q->wl[w], *ret, *ret_n);
        return r;
}

bool q_fits_without(dp_queue *q, const qcq *cq, const qassign *a, const size_t *gone, size_t n_gone) {
        for (size_t i = 0; i < n_gone; i++)
                take_out(q, gone[i]);
        bool ok = true;
        for (size_t i = 0; i < a->n_usage && ok; i++)
                ok = q_available(cq->node, a->usage[i].fr) >= a->usage[i].value;
        for (size_t i = n_gone; i-- > 0;)
                put_back(q, gone[i]);
        return ok;
}

/* ---- eviction ---- */

/* buildCQPath: "/root/.../cq" */
static void cq_path(const qnode *n, char *buf, size_t size) {
        if (n->parent) cq_path(n->parent, buf, size);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "/%s", n->name);
}

static const char *human_reason(const char *reason) {
        if (streq(reason, "InClusterQueue")) return "prioritization in the ClusterQueue";
        if (streq(reason, "InCohortReclaimWhileBorrowing")) return "reclamation within the cohort while borrowing";
        if (streq(reason, "InCohortFairSharing")) return "Fair Sharing within the cohort";
        return "reclamation within the cohort";
}

/* A change in the cohort (quota given back): Kueue moves the inadmissible
 * workloads of every ClusterQueue under the same root back to their
 * queues. */
static void wake_cohort(dp_queue *q, const qnode *n) {
        const qnode *root = n;
        while (root->parent)
                root = root->parent;
        for (size_t c = 0; c < q->n_cqs; c++) {
                const qnode *r = q->cqs[c].node;
                while (r->parent)
                        r = r->parent;
                if (r != root) continue;
                q->cqs[c].blocked = false;
                q->cqs[c].next = 0;
                for (size_t k = 0; k < q->cqs[c].n_wl; k++)
                        q->set_aside[q->cqs[c].wl[k]] = false;
        }
}

static int set_str(char **field, const char *value) {
        char *s = strdup(value);
        if (!s) return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* The Preempted condition on v (and its QuotaReserved=False Pending), and
 * v in the preemptor's list. */
static int record(dp_queue_workload *v, dp_queue_workload *by, const char *reason, const char *message, size_t cycle) {
        char **victims = realloc(by->victims, (by->n_victims + 1) * sizeof(char *));
        if (!victims) return -ENOMEM;
        by->victims = victims;
        if (!(victims[by->n_victims] = dp_asprintf("%s/%s (%s, cycle %zu)", v->ns, v->name, reason, cycle)))
                return -ENOMEM;
        by->n_victims++;
        char *who = dp_asprintf("%s/%s", by->ns, by->name);
        if (!who) return -ENOMEM;
        free(v->preempted_by);
        v->preempted_by = who;
        if (set_str(&v->preempted_reason, reason) < 0 || set_str(&v->preempted_message, message) < 0 ||
            set_str(&v->reason, "Pending") < 0 || set_str(&v->message, message) < 0)
                return -ENOMEM;
        v->preempted_cycle = cycle;
        v->times_preempted++;
        return 0;
}

int q_evict(dp_queue *q, size_t w, size_t p, const char *reason) {
        dp_queue_workload *v = &q->wl[w];
        qcq *c = &q->cqs[v->cq];
        char from[512] = "", to[512] = "";
        cq_path(q->cqs[q->wl[p].cq].node, from, sizeof(from));
        cq_path(c->node, to, sizeof(to));
        _cleanup_free_ char *message = dp_asprintf(
                "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to %s; preemptor path: %s; "
                "preemptee path: %s",
                human_reason(reason), from, to);
        int r = message ? record(v, &q->wl[p], reason, message, q->cycles) : -ENOMEM;
        if (r < 0) return r;
        take_out(q, w);
        if (q->held) q->held[w].n = 0;
        q_afs_evicted(q, w);
        for (size_t ps = 0; ps < v->n_podsets; ps++)
                for (size_t i = 0; i < v->podsets[ps].n_requests; i++) {
                        free(v->podsets[ps].flavors[i]);
                        v->podsets[ps].flavors[i] = NULL;
                }
        v->state = DP_QW_PENDING;
        q_state_changed(q, v);
        v->preadmitted = false;
        v->borrowing = 0;
        v->cycle = 0;
        wake_cohort(q, c->node);
        return q_history_preempted(q, w, p, reason);
}
