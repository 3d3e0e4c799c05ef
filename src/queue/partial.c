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

/* The counts at step i of total (fillPodSetSizesForSearchIndex). */
static void counts_at(const int32_t *full, const int32_t *min, size_t n, int64_t i, int64_t total, int32_t *out) {
        for (size_t p = 0; p < n; p++)
                out[p] = (int32_t)(full[p] - (__int128)(full[p] - min[p]) * i / total);
}

static int probe_step(const int32_t *full, const int32_t *min, size_t n, int64_t i, int64_t total, q_fits_fn fits,
                      void *userdata, int32_t *counts, bool *ret_ok) {
        counts_at(full, min, n, i, total, counts);
        *ret_ok = false;
        return fits(counts, userdata, ret_ok);
}

int q_podset_reduce(const int32_t *full, const int32_t *min, size_t n, q_fits_fn fits, void *userdata,
                    int32_t *ret_counts) {
        int64_t total = 0;
        for (size_t p = 0; p < n; p++)
                total += full[p] - min[p];
        if (total <= 0) return 0;
        _cleanup_free_ int32_t *counts = malloc((n + 1) * sizeof(int32_t));
        if (!counts) return -ENOMEM;
        bool found = false, ok = false;
        /* sort.Search over [0, total): the least step that fits (the last
         * probe that fits is that step), then the minimum counts apart */
        int64_t lo = 0, hi = total;
        while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                int r = probe_step(full, min, n, mid, total, fits, userdata, counts, &ok);
                if (r < 0) return r;
                if (ok) {
                        memcpy(ret_counts, counts, n * sizeof(int32_t));
                        found = true;
                        hi = mid;
                } else
                        lo = mid + 1;
        }
        if (!found) {
                int r = probe_step(full, min, n, total, total, fits, userdata, counts, &found);
                if (r < 0) return r;
                if (found) memcpy(ret_counts, counts, n * sizeof(int32_t));
        }
        return found;
}

/* q_partial's probe: a fit, or preemption with targets, is kept as best. */
typedef struct probe_ctx {
        dp_queue *q;
        const qcq *cq;
        const dp_queue_workload *w;
        qassign best;
        bool have;
} probe_ctx;

static int probe_fits(const int32_t *counts, void *userdata, bool *ret_ok) {
        probe_ctx *x = userdata;
        qassign a;
        int r = probe(x->q, x->cq, x->w, counts, &a, ret_ok);
        if (r < 0 || !*ret_ok) {
                if (r >= 0) q_assign_done(&a);
                return r;
        }
        if (!(a.counts = malloc(x->w->n_podsets * sizeof(int32_t)))) {
                q_assign_done(&a);
                return -ENOMEM;
        }
        memcpy(a.counts, counts, x->w->n_podsets * sizeof(int32_t));
        if (x->have) q_assign_done(&x->best);
        x->best = a;
        x->have = true;
        return 0;
}

int q_partial(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *a) {
        _cleanup_free_ int32_t *full = calloc(w->n_podsets + 1, sizeof(int32_t));
        _cleanup_free_ int32_t *min = calloc(w->n_podsets + 1, sizeof(int32_t));
        _cleanup_free_ int32_t *got = calloc(w->n_podsets + 1, sizeof(int32_t));
        if (!full || !min || !got) return -ENOMEM;
        bool can = false;
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                full[p] = ps->count;
                min[p] = ps->has_min_count && ps->min_count < ps->count ? ps->min_count : ps->count;
                can |= min[p] < full[p];
        }
        if (!can) return 0;
        if (q_mode_preempts(a->mode)) { /* the full counts preempt when they have targets */
                qtarget *t = NULL;
                size_t n = 0;
                int r = q_preempt_targets(q, cq, (size_t)(w - q->wl), a, &t, &n);
                free(t);
                if (r < 0 || n) return r;
        }
        probe_ctx x = {q, cq, w, {.message = DP_STRBUF_INIT}, false};
        int r = q_podset_reduce(full, min, w->n_podsets, probe_fits, &x, got);
        if (r > 0 && x.have) { /* the last probe that fit is the one found */
                q_assign_done(a);
                *a = x.best;
                return 0;
        }
        if (x.have) q_assign_done(&x.best);
        return r < 0 ? r : 0;
}

void q_partial_admitted(dp_queue_workload *w, const qassign *a) {
        for (size_t p = 0; p < w->n_podsets; p++)
                w->podsets[p].admitted_count = a->counts ? a->counts[p] : w->podsets[p].count;
}
