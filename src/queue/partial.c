/* SPDX-License-Identifier: Apache-2.0
 *
 * partial.c — Kueue's partial admission (feature PartialAdmission, on by
 * default; pkg/scheduler/scheduler.go getInitialAssignments and
 * pkg/scheduler/flavorassigner/podset_reducer.go as of v0.19): when the full
 * counts do not fit and preemption finds no targets for them, a workload
 * whose pod sets may run with fewer pods (minCount; a Job's
 * kueue.x-k8s.io/job-min-parallelism) is assigned again with reduced counts.
 * The reducer walks every pod set down together: at step i of totalDelta
 * (the sum of count - minCount), pod set k runs count_k - delta_k * i /
 * totalDelta pods (integer division); a binary search finds the least step
 * whose assignment fits, or preempts and has targets. Admitted, the Job
 * runs with that parallelism (apply.c).
 */
#include "queue/queue-internal.h"

/* One probe: *ret_ok when the assignment for counts fits or has targets. */
static int probe(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const int32_t *counts, qassign *ret,
                 bool *ret_ok) {
        int r = q_assign_counts(q, cq, w, counts, ret);
        if (r < 0) return r;
        *ret_ok = ret->mode == QM_FIT;
        if (!*ret_ok && q_mode_preempts(ret->mode)) {
                qtarget *t = NULL;
                size_t n = 0;
                r = q_preempt_targets(q, cq, (size_t)(w - q->wl), ret, &t, &n);
                free(t);
                *ret_ok = r >= 0 && n > 0;
        }
        if (r < 0) q_assign_done(ret);
        return r;
}

/* The counts at step i (fillPodSetSizesForSearchIndex). */
static void counts_at(const dp_queue_workload *w, int64_t i, int64_t total, int32_t *out) {
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                int64_t delta = ps->has_min_count && ps->min_count < ps->count ? ps->count - ps->min_count : 0;
                out[p] = (int32_t)(ps->count - delta * i / total);
        }
}

/* Keep the probe for step i when it is the best so far (the search only
 * ever moves to smaller steps after a success). */
static int try_step(dp_queue *q, const qcq *cq, const dp_queue_workload *w, int64_t i, int64_t total, int32_t *counts,
                    qassign *best, bool *ret_ok) {
        counts_at(w, i, total, counts);
        qassign a;
        int r = probe(q, cq, w, counts, &a, ret_ok);
        if (r < 0) return r;
        if (!*ret_ok) {
                q_assign_done(&a);
                return 0;
        }
        if (!(a.counts = malloc(w->n_podsets * sizeof(int32_t)))) {
                q_assign_done(&a);
                return -ENOMEM;
        }
        memcpy(a.counts, counts, w->n_podsets * sizeof(int32_t));
        q_assign_done(best);
        *best = a;
        return 0;
}

int q_partial(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *a) {
        int64_t total = 0;
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                if (ps->has_min_count && ps->min_count < ps->count) total += ps->count - ps->min_count;
        }
        if (!total) return 0;
        if (q_mode_preempts(a->mode)) { /* the full counts preempt when they have targets */
                qtarget *t = NULL;
                size_t n = 0;
                int r = q_preempt_targets(q, cq, (size_t)(w - q->wl), a, &t, &n);
                free(t);
                if (r < 0 || n) return r;
        }
        _cleanup_free_ int32_t *counts = malloc((w->n_podsets + 1) * sizeof(int32_t));
        if (!counts) return -ENOMEM;
        qassign best = {.message = DP_STRBUF_INIT};
        bool found = false;
        /* sort.Search over [0, total): the least step that fits */
        int64_t lo = 0, hi = total;
        while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                bool ok = false;
                int r = try_step(q, cq, w, mid, total, counts, &best, &ok);
                if (r < 0) {
                        q_assign_done(&best);
                        return r;
                }
                found |= ok;
                if (ok)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        if (lo == total) { /* every pod set at its minimum, tried apart */
                int r = try_step(q, cq, w, total, total, counts, &best, &found);
                if (r < 0) {
                        q_assign_done(&best);
                        return r;
                }
        }
        if (!found) return 0;
        q_assign_done(a);
        *a = best;
        return 0;
}

void q_partial_admitted(dp_queue_workload *w, const qassign *a) {
        for (size_t p = 0; p < w->n_podsets; p++)
                w->podsets[p].admitted_count = a->counts ? a->counts[p] : w->podsets[p].count;
}
