/* SPDX-License-Identifier: Apache-2.0
 *
 * loop.c — when preemptions would go on forever, proved. Kueue has no bound
 * on its cycles: with reclaimWithinCohort Any and a full cohort, quota freed
 * by an eviction can be taken by a borrower and reclaimed again, round and
 * round. devplane stops only when it can prove that: a cycle is a function
 * of the admission state it starts from, so once that state recurs the
 * cycles between repeat forever.
 *
 * The state (what the next cycle reads): per workload its state (pending,
 * admitted, finished), whether it is set aside, whether its admission came
 * with the input, for an admitted one its place in the order of admissions
 * (the preemption candidates' "most recently admitted" order: dense ranks
 * of the cycle it was admitted in) and the quota it holds per
 * flavor-resource; per ClusterQueue its StrictFIFO block and its sticky
 * preemptor; every node's usage; with Admission Fair Sharing every
 * LocalQueue's entry penalties. (A ClusterQueue's `next` cursor only
 * skips what head() would skip.) Only the states after cycles that evicted
 * are compared: a cycle without an eviction only adds admissions and holds,
 * so a loop evicts in every period. Brent's algorithm keeps one state (the
 * one after the 1st, 2nd, 4th, 8th... such cycle) and compares each later
 * one with it byte for byte: a loop of period λ entered after μ such cycles
 * is found within 2(μ + λ) of them, with one saved state in memory.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

typedef struct sbuf {
        uint8_t *v;
        size_t n, cap;
        bool oom;
} sbuf;

static void put(sbuf *b, const void *p, size_t len) {
        if (b->oom) return;
        if (b->n + len > b->cap) {
                size_t cap = DP_MAX(b->cap * 2, b->n + len + 256);
                uint8_t *v = realloc(b->v, cap);
                if (!v) {
                        b->oom = true;
                        return;
                }
                b->v = v;
                b->cap = cap;
        }
        memcpy(b->v + b->n, p, len);
        b->n += len;
}

static void put_u64(sbuf *b, uint64_t x) { put(b, &x, sizeof(x)); }

static int cmp_by_cycle(const void *a, const void *b, void *userdata) {
        const dp_queue *q = userdata;
        size_t x = q->wl[*(const size_t *)a].cycle, y = q->wl[*(const size_t *)b].cycle;
        return x < y ? -1 : x > y;
}

/* Per workload: the dense rank of the cycle it was admitted in (1 the
 * earliest), 0 when it was not admitted by a cycle. */
static size_t *admission_ranks(const dp_queue *q) {
        size_t *rank = calloc(q->n_wl + 1, sizeof(*rank)), *order = calloc(q->n_wl + 1, sizeof(*order)), n = 0;
        if (!rank || !order) {
                free(order);
                free(rank);
                return NULL;
        }
        for (size_t i = 0; i < q->n_wl; i++)
                if (q->wl[i].state == DP_QW_ADMITTED && q->wl[i].cycle) order[n++] = i;
        if (n) qsort_r(order, n, sizeof(*order), cmp_by_cycle, (void *)q);
        for (size_t k = 0, r = 0; k < n; k++) {
                if (!k || q->wl[order[k]].cycle != q->wl[order[k - 1]].cycle) r++;
                rank[order[k]] = r;
        }
        free(order);
        return rank;
}

static void put_workloads(const dp_queue *q, const size_t *rank, sbuf *b) {
        for (size_t i = 0; i < q->n_wl; i++) {
                const dp_queue_workload *w = &q->wl[i];
                uint8_t flags = (uint8_t)(w->state | (q->set_aside[i] ? 8 : 0) | (w->preadmitted ? 16 : 0));
                put(b, &flags, 1);
                if (w->state != DP_QW_ADMITTED) continue;
                qheld h = q->held ? q->held[i] : (qheld){0};
                put_u64(b, rank[i]);
                put_u64(b, h.n);
                for (size_t k = 0; k < h.n; k++) {
                        put_u64(b, h.v[k].fr);
                        put_u64(b, (uint64_t)h.v[k].value);
                }
        }
}

/* The admission state as bytes (b->v, b->n); b->oom on failure. */
static void state_of(const dp_queue *q, sbuf *b) {
        size_t *rank = admission_ranks(q);
        if (!rank) {
                b->oom = true;
                return;
        }
        put_workloads(q, rank, b);
        free(rank);
        for (size_t c = 0; c < q->n_cqs; c++) {
                uint8_t blocked = q->cqs[c].blocked;
                put(b, &blocked, 1);
                put_u64(b, q->cqs[c].sticky);
        }
        for (size_t n = 0; n < q->n_nodes; n++)
                for (size_t f = 0; f < q->n_fr; f++)
                        put_u64(b, (uint64_t)q->nodes[n]->q[f].usage);
        size_t n_lq = 0;
        const double *pen = q_afs_penalties(q, &n_lq);
        if (n_lq) put(b, pen, n_lq * sizeof(*pen));
}

/* The loop is proved: admission stops, and the workload preempted most
 * (the first of those) says why. */
static int proved(dp_queue *q, const qloop *l) {
        size_t most = 0;
        for (size_t i = 1; i < q->n_wl; i++)
                if (q->wl[i].times_preempted > q->wl[most].times_preempted) most = i;
        dp_queue_workload *w = &q->wl[most];
        q->churning = true;
        free(w->note);
        w->note = dp_asprintf("preempted %zu times, last by %s: the admission state after cycle %zu (the same "
                              "workloads admitted, holding the same quota, the same ones waiting) is the one after "
                              "cycle %zu, so Kueue would repeat cycles %zu to %zu forever (a preemption loop); "
                              "devplane stops admission here",
                              w->times_preempted, w->preempted_by ? w->preempted_by : "none", q->cycles, l->at,
                              l->at + 1, q->cycles);
        if (!w->note) return -ENOMEM;
        return q_history_churn(q, most); /* the report marks where admission stopped */
}

int q_loop_check(dp_queue *q, qloop *l) {
        sbuf b = {0};
        state_of(q, &b);
        if (b.oom) {
                free(b.v);
                return -ENOMEM;
        }
        if (l->saved && b.n == l->len && !memcmp(b.v, l->saved, b.n)) {
                free(b.v);
                return proved(q, l);
        }
        bool first = !l->saved;
        if (first || l->power == l->lam) { /* keep this one */
                free(l->saved);
                l->saved = b.v;
                l->len = b.n;
                l->at = q->cycles;
                l->power = first ? 1 : l->power * 2;
                l->lam = 0;
        } else
                free(b.v);
        l->lam++;
        return 0;
}

void q_loop_done(qloop *l) {
        free(l->saved);
        *l = (qloop){0};
}
