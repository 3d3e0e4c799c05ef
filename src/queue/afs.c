/* SPDX-License-Identifier: Apache-2.0
 *
 * afs.c — Kueue's Admission Fair Sharing (KEP-4136; v0.19:
 * pkg/util/admissionfairsharing, pkg/cache/queue queueOrderingFunc): in a
 * ClusterQueue with admissionScope.admissionMode
 * UsageBasedAdmissionFairSharing, when the Configuration has
 * admissionFairSharing and the AdmissionFairSharing gate is on (beta, on
 * since v0.15), the workloads of the LocalQueue with the lower usage come
 * first; equal usage falls back to the usual order (priority, creation).
 *
 * A LocalQueue's usage is Σ over resources of weight × quantity (Kueue's
 * Quantity as a float: cpu in cores; resourceWeights, others 1) of its
 * consumed resources plus its entry penalties, divided by its
 * fairSharing.weight (default 1; 0 counts as infinite here). Each admission
 * adds an entry penalty of α × the workload's requests, α = 1 −
 * 0.5^(usageSamplingInterval / usageHalfLifeTime) (0 when the half-life is
 * 0), what the next sample would add for it.
 *
 * Offline, the history is what the input says: a LocalQueue's
 * status.fairSharing.admissionFairSharingStatus.consumedResources (a
 * `kubectl get localqueues -o yaml` dump carries it), none when absent.
 * devplane's clock does not run Kueue's sampler: the consumed resources
 * stay as written, and the penalties of the simulation's own admissions
 * stay (a Timeline finishing a workload keeps its penalty, standing for the
 * usage a sample would have recorded); a preempted workload's penalty goes
 * with it (Kueue takes back the penalty of a workload that leaves before
 * the next sample), so its next admission does not count twice.
 *
 * Preemption (CandidatesOrdering): two candidates of one ClusterQueue from
 * different LocalQueues, the one whose LocalQueue uses more goes first.
 */
#include <math.h>

#include "queue/queue-internal.h"

struct qafs {
        size_t n_lq;
        const dp_local_queue **lq;
        double *consumed; /* per LocalQueue: weighted consumedResources */
        double *penalty;  /* per LocalQueue: its workloads' pen, summed in index order */
        size_t *first;    /* per LocalQueue: its workloads are member[first[l]..first[l + 1]) */
        size_t *member;
        double *pen;   /* per workload: the entry penalty its admission added */
        size_t *lq_of; /* per workload: LocalQueue + 1, 0 when Admission Fair Sharing is off for it */
        double alpha;
};

static const dp_kueue_config *config_of(const dp_queue *q) { return q->opts ? q->opts->config : NULL; }

static double weight_of(const dp_kueue_config *cfg, const char *res) {
        for (size_t i = 0; i < cfg->n_afs_weights; i++)
                if (streq(cfg->afs_weight_names[i], res)) return cfg->afs_weights[i];
        return 1;
}

/* A request in devplane's units (q_value) as Kueue's Quantity float. */
static double as_float(const char *res, int64_t v) { return streq(res, "cpu") ? (double)v / 1000.0 : (double)v; }

/* The LocalQueue index of workload i (a new one when first seen), or -1. */
static ssize_t lq_index(dp_queue *q, size_t i) {
        const dp_queue_workload *w = &q->wl[i];
        if (!w->local_queue || w->state == DP_QW_INADMISSIBLE || !q->cqs[w->cq].cq->usage_based_afs) return -1;
        const dp_local_queue *lq = q_index_get(q, "L\x1f%s\x1f%s", w->ns, w->local_queue);
        if (!lq) return -1;
        uintptr_t v = (uintptr_t)q_index_get(q, "A\x1f%s\x1f%s", w->ns, w->local_queue);
        if (v) return (ssize_t)v - 1;
        q->afs->lq[q->afs->n_lq] = lq;
        if (q_index_put(q, (void *)(uintptr_t)(q->afs->n_lq + 1), "A\x1f%s\x1f%s", w->ns, w->local_queue) < 0)
                return -2;
        return (ssize_t)q->afs->n_lq++;
}

static double consumed_of(const dp_kueue_config *cfg, const dp_local_queue *lq) {
        double u = 0;
        for (size_t i = 0; i < lq->n_consumed; i++)
                u += weight_of(cfg, lq->consumed[i].name) * dp_quantity_as_double(&lq->consumed[i].value);
        return u;
}

/* Each LocalQueue's workloads, in index order (CSR). */
static int members(qafs *a, size_t n_wl) {
        a->first = calloc(a->n_lq + 2, sizeof(*a->first));
        a->member = calloc(n_wl + 1, sizeof(*a->member));
        if (!a->first || !a->member) return -ENOMEM;
        for (size_t i = 0; i < n_wl; i++)
                if (a->lq_of[i]) a->first[a->lq_of[i]]++;
        for (size_t l = 0; l < a->n_lq; l++)
                a->first[l + 1] += a->first[l];
        _cleanup_free_ size_t *at = calloc(a->n_lq + 1, sizeof(*at));
        if (!at) return -ENOMEM;
        for (size_t i = 0; i < n_wl; i++)
                if (a->lq_of[i]) {
                        size_t l = a->lq_of[i] - 1;
                        a->member[a->first[l] + at[l]++] = i;
                }
        return 0;
}

int q_afs_init(dp_queue *q) {
        const dp_kueue_config *cfg = config_of(q);
        if (!cfg || !cfg->has_afs || cfg->gate_afs_off) return 0;
        qafs *a = q->afs = calloc(1, sizeof(*a));
        if (!a || !(a->lq = calloc(q->n_wl + 1, sizeof(*a->lq))) || !(a->lq_of = calloc(q->n_wl + 1, sizeof(size_t))) ||
            !(a->pen = calloc(q->n_wl + 1, sizeof(double))))
                return -ENOMEM;
        for (size_t i = 0; i < q->n_wl; i++) {
                ssize_t l = lq_index(q, i);
                if (l == -2) return -ENOMEM;
                a->lq_of[i] = (size_t)(l + 1);
        }
        a->consumed = calloc(a->n_lq + 1, sizeof(double));
        a->penalty = calloc(a->n_lq + 1, sizeof(double));
        if (!a->consumed || !a->penalty || members(a, q->n_wl) < 0) return -ENOMEM;
        for (size_t l = 0; l < a->n_lq; l++)
                a->consumed[l] = consumed_of(cfg, a->lq[l]);
        a->alpha = cfg->afs_half_life_s > 0 ? 1.0 - pow(0.5, cfg->afs_sampling_s / cfg->afs_half_life_s) : 0.0;
        return 0;
}

void q_afs_free(dp_queue *q) {
        qafs *a = q->afs;
        if (!a) return;
        dp_free_many(a->lq, a->consumed, a->penalty, a->first, a->member, a->pen, a->lq_of);
        free(a);
        q->afs = NULL;
}

double q_afs_usage(const dp_queue *q, size_t w) {
        const qafs *a = q->afs;
        if (!a || !a->lq_of[w]) return -1;
        size_t l = a->lq_of[w] - 1;
        double weight = a->lq[l]->has_weight ? dp_quantity_as_double(&a->lq[l]->weight) : 1;
        double u = a->consumed[l] + a->penalty[l];
        if (weight <= 0) return u > 0 ? INFINITY : 0;
        return u / weight;
}

/* The LocalQueue's penalty summed again in a fixed order, so the same
 * admitted set always gives the same bits (loop.c compares them). */
static void resum(qafs *a, size_t l) {
        double s = 0;
        for (size_t k = a->first[l]; k < a->first[l + 1]; k++)
                s += a->pen[a->member[k]];
        a->penalty[l] = s;
}

void q_afs_admitted(dp_queue *q, size_t w) {
        qafs *a = q->afs;
        if (!a || !a->lq_of[w]) return;
        const dp_kueue_config *cfg = config_of(q);
        const dp_queue_workload *x = &q->wl[w];
        double p = 0;
        for (size_t s = 0; s < x->n_podsets; s++)
                for (size_t i = 0; i < x->podsets[s].n_requests; i++) {
                        const dp_queue_request *r = &x->podsets[s].requests[i];
                        p += weight_of(cfg, r->name) * as_float(r->name, r->value * x->podsets[s].count);
                }
        a->pen[w] = a->alpha * p;
        resum(a, a->lq_of[w] - 1);
}

void q_afs_evicted(dp_queue *q, size_t w) {
        qafs *a = q->afs;
        if (!a || !a->lq_of[w] || !a->pen[w]) return;
        a->pen[w] = 0;
        resum(a, a->lq_of[w] - 1);
}

void q_afs_reset(dp_queue *q) {
        qafs *a = q->afs;
        if (!a) return;
        for (size_t i = 0; i < q->n_wl; i++)
                if (q->wl[i].state != DP_QW_FINISHED) a->pen[i] = 0;
        for (size_t l = 0; l < a->n_lq; l++)
                resum(a, l);
}

const double *q_afs_penalties(const dp_queue *q, size_t *ret_n) {
        *ret_n = q->afs ? q->afs->n_lq : 0;
        return q->afs ? q->afs->penalty : NULL;
}

ssize_t q_afs_head(dp_queue *q, qcq *c) {
        ssize_t best = -1;
        double best_u = 0;
        for (size_t k = c->next; k < c->n_wl; k++) {
                size_t i = c->wl[k];
                if (q->wl[i].state != DP_QW_PENDING || q->set_aside[i]) {
                        if (best < 0 && k == c->next) c->next++;
                        continue;
                }
                double u = q_afs_usage(q, i);
                if (best < 0 || u < best_u) best = (ssize_t)i, best_u = u; /* ties: queue order */
        }
        return best;
}

bool q_afs_on(const dp_queue *q, const qcq *c) { return q->afs && c->cq->usage_based_afs; }
