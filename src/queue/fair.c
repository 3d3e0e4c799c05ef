/* SPDX-License-Identifier: Apache-2.0
 *
 * fair.c — Kueue's fair sharing (pkg/cache/scheduler/fair_sharing.go,
 * pkg/scheduler/fair_sharing_iterator.go), on when the Configuration's
 * fairSharing.enable is (dp_queue_set_fair_sharing).
 *
 * The dominant resource share of a ClusterQueue or Cohort with a parent:
 * per resource, what its usage exceeds its subtree quota by, summed over
 * flavors, times 1000, over what the parent could lend of that resource
 * (potentialAvailable summed over the root's flavors); the largest ratio
 * (ties: the smaller resource name), divided by fairSharing.weight. A node
 * that borrows with weight 0 is +Inf.
 *
 * The heads of a cycle are taken one at a time: the first remaining head's
 * root cohort runs a tournament, where each cohort picks among its
 * children's proposals the one that (1) does not borrow on the flavors it
 * requests at that level (gate FairSharingPrioritizeNonBorrowing), (2) has the lowest share once its workload is
 * admitted, (3) the higher priority, (4) the older. Admissions made earlier
 * in the cycle count, as Kueue's iterator recomputes at each pop. Across
 * roots and for queues without a cohort Kueue's order is arbitrary;
 * devplane takes ClusterQueues by name.
 */
#include <math.h>

#include "queue/queue-internal.h"

/* One node's share, with a workload's usage added below it. */
typedef struct qdrs {
        const qnode *parent; /* the tournament level this value is compared at */
        double ratio;        /* unweighted, ×1000 */
        double weight;
        bool borrowing;    /* over its quota in some flavor-resource */
        bool borrowing_on; /* over its quota in a flavor-resource the workload requests */
} qdrs;

/* On by the CLI's flag or by the Configuration's fairSharing.enable. */
void dp_queue_set_fair_sharing(dp_queue *q, bool enable) {
        if (q) q->fair_sharing = enable || (q->opts && q->opts->config && q->opts->config->fair_sharing);
}

/* FairSharingPrioritizeNonBorrowing (beta, on since Kueue 0.17). */
static bool prioritize_non_borrowing(const dp_queue *q) {
        return !(q->opts && q->opts->config && q->opts->config->gate_non_borrowing_off);
}

static bool zero_weight_borrows(const qdrs *d) { return d->weight == 0 && d->borrowing; }

static double weighted(const qdrs *d) {
        if (zero_weight_borrows(d)) return INFINITY;
        return d->ratio == 0 ? 0 : d->ratio / d->weight;
}

/* CompareDRS */
static int cmp_drs(const qdrs *a, const qdrs *b) {
        bool za = zero_weight_borrows(a), zb = zero_weight_borrows(b);
        if (za && zb) return (a->ratio > b->ratio) - (a->ratio < b->ratio);
        if (za != zb) return za ? 1 : -1;
        double x = weighted(a), y = weighted(b);
        return (x > y) - (x < y);
}

static bool requested(const qassign *a, size_t fr) {
        for (size_t i = 0; a && i < a->n_usage; i++)
                if (a->usage[i].fr == fr && a->usage[i].value > 0) return true;
        return false;
}

/* dominantResourceShare (usage already includes the workload's) */
static qdrs share(const dp_queue *q, const qnode *n, const qassign *a) {
        qdrs d = {n->parent, 0, n->weight, false, false};
        if (!n->parent) return d;
        for (size_t f = 0; f < q->n_fr; f++) {
                if (n->q[f].usage <= n->q[f].subtree) continue;
                d.borrowing = true;
                d.borrowing_on |= requested(a, f);
        }
        if (!d.borrowing) return d;
        const char *dominant = NULL;
        for (size_t f = 0; f < q->n_fr; f++) {
                const char *res = q->fr[f].resource;
                bool seen = false; /* each resource once, at its first flavor */
                for (size_t g = 0; g < f && !seen; g++)
                        seen = streq(q->fr[g].resource, res);
                if (seen) continue;
                int64_t borrowed = 0, lendable = 0;
                for (size_t g = f; g < q->n_fr; g++) {
                        if (!streq(q->fr[g].resource, res)) continue;
                        borrowed += DP_MAX(0, n->q[g].usage - n->q[g].subtree);
                        lendable += q_potential(n->parent, g);
                }
                if (borrowed <= 0 || lendable <= 0) continue;
                double ratio = (double)borrowed * 1000.0 / (double)lendable;
                if (ratio > d.ratio || (ratio == d.ratio && dominant && strcmp(res, dominant) < 0)) {
                        d.ratio = ratio;
                        dominant = res;
                }
        }
        return d;
}

qshare q_share(const dp_queue *q, const qnode *n) {
        qdrs d = share(q, n, NULL);
        return (qshare){d.ratio, d.weight, d.borrowing};
}

int q_share_cmp(qshare a, qshare b) {
        qdrs x = {NULL, a.ratio, a.weight, a.borrowing, false}, y = {NULL, b.ratio, b.weight, b.borrowing, false};
        return cmp_drs(&x, &y);
}

int64_t q_weighted_share(const dp_queue *q, const qnode *n) {
        qdrs d = share(q, n, NULL);
        if (zero_weight_borrows(&d)) return INT64_MAX;
        return (int64_t)ceil(weighted(&d));
}

/* ---- the tournament ---- */

#define FAIR_MAX_DEPTH 16 /* cohort levels kept per head (Kueue has no limit; deeper trees compare as equal) */

typedef struct fhead {
        qdrs at[FAIR_MAX_DEPTH]; /* the share of the child below each ancestor */
        size_t depth;
} fhead;

static const qnode *root_of(const qnode *n) {
        while (n->parent)
                n = n->parent;
        return n;
}

static const qnode *cq_node(const dp_queue *q, const qhead *h) { return q->cqs[q->wl[h->w].cq].node; }

/* computeDRS for one head: its usage added, the share of every node on the
 * way up, then taken out again. */
static void compute(dp_queue *q, const qhead *h, fhead *f) {
        qnode *n = q->cqs[q->wl[h->w].cq].node;
        for (size_t i = 0; h->a && i < h->a->n_usage; i++)
                q_add_usage(n, h->a->usage[i].fr, h->a->usage[i].value);
        f->depth = 0;
        for (const qnode *c = n; c->parent && f->depth < FAIR_MAX_DEPTH; c = c->parent)
                f->at[f->depth++] = share(q, c, h->a);
        for (size_t i = 0; h->a && i < h->a->n_usage; i++)
                q_remove_usage(n, h->a->usage[i].fr, h->a->usage[i].value);
}

static const qdrs *at_level(const fhead *f, const qnode *cohort) {
        for (size_t i = 0; i < f->depth; i++)
                if (f->at[i].parent == cohort) return &f->at[i];
        return NULL;
}

/* entryComparer.less */
static bool less(const dp_queue *q, const qhead *ha, const fhead *fa, const qhead *hb, const fhead *fb,
                 const qnode *cohort) {
        const qdrs *a = at_level(fa, cohort), *b = at_level(fb, cohort);
        if (a && b) {
                if (prioritize_non_borrowing(q) && a->borrowing_on != b->borrowing_on) return !a->borrowing_on;
                int c = cmp_drs(a, b);
                if (c) return c < 0;
        }
        const dp_queue_workload *x = &q->wl[ha->w], *y = &q->wl[hb->w];
        if (x->priority != y->priority) return x->priority > y->priority;
        if (x->created && y->created && strcmp(x->created, y->created)) return strcmp(x->created, y->created) < 0;
        return x->order < y->order;
}

/* runTournament: the winning head under cohort, or -1. at[c]: the head
 * still to process of ClusterQueue c, -1 none. */
static ssize_t tournament(const dp_queue *q, const qnode *cohort, const qhead *heads, const fhead *f,
                          const ssize_t *at) {
        ssize_t best = -1;
        for (size_t k = 0; k < cohort->n_kids; k++) {
                const qnode *kid = cohort->kids[k];
                ssize_t c = -1;
                if (!kid->is_cq)
                        c = tournament(q, kid, heads, f, at);
                else
                        c = at[kid->cq];
                if (c >= 0 && (best < 0 || less(q, &heads[c], &f[c], &heads[best], &f[best], cohort))) best = c;
        }
        return best;
}

ssize_t q_fair_next(dp_queue *q, const qhead *heads, size_t n, const bool *done) {
        ssize_t first = -1;
        for (size_t i = 0; i < n && first < 0; i++)
                if (!done[i]) first = (ssize_t)i;
        if (first < 0) return -1;
        const qnode *cq = cq_node(q, &heads[first]);
        if (!cq->parent) return first;
        const qnode *root = root_of(cq);
        fhead *f = malloc((n + 1) * sizeof(*f)); /* only the heads of this root are computed and read */
        ssize_t *at = malloc((q->n_cqs + 1) * sizeof(*at));
        if (!f || !at) {
                free(f);
                free(at);
                return -ENOMEM;
        }
        for (size_t c = 0; c < q->n_cqs; c++)
                at[c] = -1;
        for (size_t i = 0; i < n; i++) {
                if (done[i] || root_of(cq_node(q, &heads[i])) != root) continue;
                at[q->wl[heads[i].w].cq] = (ssize_t)i;
                compute(q, &heads[i], &f[i]);
        }
        ssize_t r = tournament(q, root, heads, f, at);
        free(f);
        free(at);
        return r >= 0 ? r : first;
}
