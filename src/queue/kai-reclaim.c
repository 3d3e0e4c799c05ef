/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-reclaim.c — KAI's Reclaim action for one waiting job (reclaimable.go,
 * strategies.go): across queues only.
 *   - The reclaimer's queue with the job stays within its fair share in
 *     every resource (and, for a non-preemptible job, its non-preemptible
 *     work within deserved).
 *   - A victim is a running preemptible group of another queue. Compared at
 *     the level where the two queues' paths part (siblings), the victim's
 *     side must, before this victim is taken, be above its allocatable share
 *     in some resource (MaintainFairShare), or the reclaimer's side with the
 *     job within deserved and the victim's side above deserved
 *     (GuaranteeDeservedQuota: in-quota resources are never reclaimed).
 *   - Once the job fits, at every level of the reclaimer's path the queue's
 *     allocated (+ the job) over its fair share must not be above 1 while at
 *     least a touched sibling's ratio (reclaimerUtilizationMultiplier 1).
 * Victims are taken in victim order (lower priority, then the newest) until
 * the job can be placed on the nodes they leave, a victim the strategies
 * refuse passed over; then the fewest of them (each but the last given back
 * while the job still fits).
 */
#include <math.h>

#include "queue/kai-internal.h"

typedef struct reclaim {
        dp_kai *k;
        dp_kai_group *g;
        double v[DP_KAI_NRES];
        double *rem;   /* n_q × NRES: each queue's allocated less the victims taken */
        bool *touched; /* a victim's queue or one of its ancestors */
} reclaim;

static bool le_deserved(const dp_kai_queue *q, const double *a) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (q->deserved[r] != DP_KAI_UNLIMITED && !kai_le(a[r], q->deserved[r])) return false;
        return true;
}

static bool can_reclaim(const reclaim *x) {
        const dp_kai_queue *q = &x->k->q[x->g->qi];
        for (int r = 0; r < DP_KAI_NRES; r++) {
                if (!kai_le(q->allocated[r] + x->v[r], q->fair[r])) return false;
                if (!x->g->preemptible && q->deserved[r] != DP_KAI_UNLIMITED &&
                    !kai_le(q->allocated_np[r] + x->v[r], q->deserved[r]))
                        return false;
        }
        return true;
}

static size_t depth(const dp_kai *k, size_t q) {
        size_t d = 0;
        for (size_t a = k->q[q].parent; a != KAI_NONE; a = k->q[a].parent)
                d++;
        return d;
}

/* The ancestors of a and b (or themselves) that are siblings. */
static void leveled(const dp_kai *k, size_t a, size_t b, size_t *ra, size_t *rb) {
        size_t da = depth(k, a), db = depth(k, b);
        while (da > db)
                a = k->q[a].parent, da--;
        while (db > da)
                b = k->q[b].parent, db--;
        size_t pa = a, pb = b; /* climb until the parents are one */
        while (k->q[pa].parent != k->q[pb].parent)
                pa = k->q[pa].parent, pb = k->q[pb].parent;
        *ra = pa;
        *rb = pb;
}

static bool strategies_allow(const reclaim *x, size_t victim_queue) {
        size_t rq, vq;
        leveled(x->k, x->g->qi, victim_queue, &rq, &vq);
        const dp_kai_queue *reclaimer = &x->k->q[rq], *reclaimee = &x->k->q[vq];
        const double *rem = &x->rem[vq * DP_KAI_NRES];
        for (int r = 0; r < DP_KAI_NRES; r++) { /* MaintainFairShare */
                double a = kai_allocatable(reclaimee, r);
                if (a != DP_KAI_UNLIMITED && !kai_le(rem[r], a)) return true;
        }
        double with[DP_KAI_NRES];
        for (int r = 0; r < DP_KAI_NRES; r++)
                with[r] = reclaimer->allocated[r] + x->v[r];
        return le_deserved(reclaimer, with) && !le_deserved(reclaimee, rem); /* GuaranteeDeservedQuota */
}

static void take(reclaim *x, const dp_kai_group *victim) {
        double v[DP_KAI_NRES];
        kai_held(victim, v);
        for (size_t a = victim->qi; a != KAI_NONE; a = x->k->q[a].parent) {
                x->touched[a] = true;
                for (int r = 0; r < DP_KAI_NRES; r++)
                        x->rem[a * DP_KAI_NRES + r] -= v[r];
        }
}

static double saturation(double allocated, double fair) {
        if (fair == 0) return allocated > 0 ? INFINITY : 0;
        return allocated / fair;
}

static bool within_boundaries(const reclaim *x) {
        const dp_kai *k = x->k;
        for (size_t l = x->g->qi; l != KAI_NONE; l = k->q[l].parent) {
                for (size_t s = 0; s < k->n_q; s++) {
                        if (s == l || !x->touched[s] || k->q[s].parent != k->q[l].parent) continue;
                        for (int r = 0; r < DP_KAI_NRES; r++) {
                                double mine = saturation(x->rem[l * DP_KAI_NRES + r] + x->v[r], k->q[l].fair[r]);
                                double theirs = saturation(x->rem[s * DP_KAI_NRES + r], k->q[s].fair[r]);
                                if (mine > 1 && k->q[s].fair[r] > 0 && mine >= theirs) return false;
                        }
                }
                if (x->g->preemptible) continue;
                double np[DP_KAI_NRES];
                for (int r = 0; r < DP_KAI_NRES; r++)
                        np[r] = k->q[l].allocated_np[r] + x->v[r];
                if (!le_deserved(&k->q[l], np)) return false;
        }
        return true;
}

static bool other_queue(const dp_kai *k, const dp_kai_group *by, const dp_kai_group *g) {
        (void)k;
        return g->qi != by->qi;
}

/* A victim given back: its queues keep what it holds. */
static void untake(reclaim *x, const dp_kai_group *victim) {
        double v[DP_KAI_NRES];
        kai_held(victim, v);
        for (size_t a = victim->qi; a != KAI_NONE; a = x->k->q[a].parent)
                for (int r = 0; r < DP_KAI_NRES; r++)
                        x->rem[a * DP_KAI_NRES + r] += v[r];
}

/* Of the victims taken, the fewest: each but the last is given back while
 * the job still fits on the nodes the others leave (all of them are off
 * their nodes on entry, and back on them on return); the touched queues
 * are those of the victims kept. The number kept. */
static size_t fewest(reclaim *x, size_t *cand, size_t taken) {
        size_t kept = 0;
        for (size_t i = 0; i < taken; i++) {
                const dp_kai_group *c = &x->k->g[cand[i]];
                kai_nodes_hold(x->k, c, +1);
                if (i + 1 < taken && kai_fits(x->k, x->g, kai_first_count(x->g))) {
                        untake(x, c);
                        continue;
                }
                cand[kept++] = cand[i];
                kai_nodes_hold(x->k, c, -1);
        }
        memset(x->touched, 0, x->k->n_q * sizeof(bool));
        for (size_t i = 0; i < kept; i++) {
                kai_nodes_hold(x->k, &x->k->g[cand[i]], +1);
                for (size_t a = x->k->g[cand[i]].qi; a != KAI_NONE; a = x->k->q[a].parent)
                        x->touched[a] = true;
        }
        return kept;
}

/* The victims taken until the job fits on the nodes they leave, the fewest
 * of them (the first *n_taken of cand), or false. */
static bool choose(reclaim *x, size_t *cand, size_t n, size_t *n_taken) {
        size_t taken = 0;
        bool fit = false;
        for (size_t i = 0; i < n && !fit; i++) {
                const dp_kai_group *c = &x->k->g[cand[i]];
                if (!strategies_allow(x, c->qi)) continue;
                take(x, c);
                cand[taken++] = cand[i];
                kai_nodes_hold(x->k, c, -1); /* tentatively, given back below */
                fit = kai_fits(x->k, x->g, kai_first_count(x->g));
        }
        if (!fit) {
                for (size_t i = 0; i < taken; i++)
                        kai_nodes_hold(x->k, &x->k->g[cand[i]], +1);
                return false;
        }
        *n_taken = fewest(x, cand, taken);
        return within_boundaries(x);
}

int kai_try_reclaim(dp_kai *k, dp_kai_group *g) {
        if (g->started || g->state != DP_KAI_PENDING) return 0;
        reclaim x = {k, g, {0}, NULL, NULL};
        kai_need(g, kai_first_count(g), x.v);
        if (!kai_capacity_ok(k, g, x.v, false) || !can_reclaim(&x) || kai_fits(k, g, kai_first_count(g))) return 0;
        _cleanup_free_ size_t *cand = calloc(k->n_g, sizeof(size_t));
        _cleanup_free_ double *rem = calloc(k->n_q * DP_KAI_NRES, sizeof(double));
        _cleanup_free_ bool *touched = calloc(k->n_q, sizeof(bool));
        if (!cand || !rem || !touched) return -ENOMEM;
        x.rem = rem;
        x.touched = touched;
        for (size_t q = 0; q < k->n_q; q++)
                memcpy(&rem[q * DP_KAI_NRES], k->q[q].allocated, sizeof(k->q[q].allocated));
        size_t n = kai_victims(k, g, false, other_queue, cand), taken = 0;
        if (!choose(&x, cand, n, &taken)) return 0;
        for (size_t i = 0; i < taken; i++) {
                dp_kai_group *v = &k->g[cand[i]];
                kai_evict(k, v);
                if (!(v->by = dp_asprintf("reclaimed by %s/%s", g->ns, g->name))) return -ENOMEM;
        }
        kai_start(k, g, kai_first_count(g));
        return 0;
}
