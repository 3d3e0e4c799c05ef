/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-admit.c — one KAI scheduling cycle as admission: the fair shares,
 * then Allocate (jobs taken queue by queue in KAI's queue order, each
 * started whole or not at all down to its gang's minMember, within the
 * capacity policy and the cluster's free capacity), Reclaim (across queues:
 * the reclaimer within its fair share, victims of queues above theirs under
 * MaintainFairShare or GuaranteeDeservedQuota, the saturation check of the
 * reclaiming queues against their siblings), Preempt (within a queue:
 * preemptible victims of strictly lower priority), and Allocate again for
 * what the evictions freed.
 */
#include <stdio.h>

#include "queue/kai-internal.h"

void kai_need(const dp_kai_group *g, size_t n, double v[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                v[r] = g->req[r] * (double)n;
}

bool kai_fits(const dp_kai *k, const double v[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (v[r] > 0 && !kai_le(k->used[r] + v[r], k->capacity[r])) return false;
        return true;
}

void kai_start(dp_kai *k, dp_kai_group *g, size_t n) {
        double v[DP_KAI_NRES];
        kai_need(g, n, v);
        kai_charge(k, g, v, +1);
        g->started += n;
        if (g->state == DP_KAI_PENDING) g->state = DP_KAI_ADMITTED;
        dp_free_many(g->reason, g->message);
        g->reason = g->message = NULL;
}

void kai_evict(dp_kai *k, dp_kai_group *g) {
        kai_charge(k, g, g->running, -1);
        g->state = DP_KAI_EVICTED;
}

bool kai_in_leaf(const dp_kai *k, const dp_kai_group *g) { return g->qi != KAI_NONE && k->q[g->qi].leaf; }

/* Whether g waits for pods to start (and may be tried). */
static bool waiting(const dp_kai *k, const dp_kai_group *g) {
        return kai_in_leaf(k, g) && kai_n_pending(g) > 0 && g->state != DP_KAI_EVICTED;
}

/* ---- Allocate ---- */

static int try_allocate(dp_kai *k, dp_kai_group *g) {
        double v[DP_KAI_NRES];
        size_t first = kai_first_count(g);
        for (size_t n = kai_n_pending(g); n >= first && n > 0; n--) {
                kai_need(g, n, v);
                if (kai_capacity_ok(k, g, v, false) && kai_fits(k, v)) {
                        kai_start(k, g, n);
                        return 0;
                }
        }
        kai_need(g, first, v);
        if (!kai_capacity_ok(k, g, v, true)) return g->reason ? 0 : -ENOMEM;
        char want[128] = "", freev[128] = "";
        snprintf(want, sizeof(want), "cpu %gm, memory %gMB, gpu %g", v[0], v[1], v[2]);
        snprintf(freev, sizeof(freev), "cpu %gm, memory %gMB, gpu %g", k->capacity[0] - k->used[0],
                 k->capacity[1] - k->used[1], k->capacity[2] - k->used[2]);
        return kai_set_reason(g, "Unschedulable",
                              "%zu pod(s) of the gang need %s; the cluster has %s free (devplane: the nodes' "
                              "allocatable summed; KAI would look node by node)",
                              first, want, freev);
}

/* Groups by queue, then in job order: each queue's jobs are a run of it. */
static int by_queue_then_job(const void *a, const void *b, void *arg) {
        const dp_kai *k = arg;
        const dp_kai_group *x = &k->g[*(const size_t *)a], *y = &k->g[*(const size_t *)b];
        if (x->qi != y->qi) return x->qi < y->qi ? -1 : 1;
        return kai_job_before(x, y) ? -1 : kai_job_before(y, x) ? 1 : 0;
}

typedef int (*kai_action)(dp_kai *k, dp_kai_group *g);

/* The next job of the run [*cursor, end) of sorted not tried and waiting
 * (jobs never start waiting again: the cursor only moves on). */
static ssize_t head_of(const dp_kai *k, const size_t *sorted, size_t *cursor, size_t end, const bool *tried) {
        while (*cursor < end && (tried[sorted[*cursor]] || !waiting(k, &k->g[sorted[*cursor]])))
                (*cursor)++;
        return *cursor < end ? (ssize_t)sorted[*cursor] : -1;
}

/* Jobs one at a time: the queue first in KAI's queue order with its next
 * job, each job once. */
static int each_in_order(dp_kai *k, kai_action act) {
        _cleanup_free_ bool *tried = calloc(k->n_g + 1, sizeof(bool));
        _cleanup_free_ size_t *sorted = calloc(k->n_g + 1, sizeof(size_t));
        _cleanup_free_ size_t *cursor = calloc(k->n_q + 1, sizeof(size_t)), *end = calloc(k->n_q + 1, sizeof(size_t));
        if (!tried || !sorted || !cursor || !end) return -ENOMEM;
        for (size_t i = 0; i < k->n_g; i++)
                sorted[i] = i;
        qsort_r(sorted, k->n_g, sizeof(size_t), by_queue_then_job, k);
        for (size_t i = 0, q = 0; q < k->n_q; q++) { /* groups of no queue sort last (KAI_NONE) */
                cursor[q] = i;
                while (i < k->n_g && k->g[sorted[i]].qi == q)
                        i++;
                end[q] = i;
        }
        for (;;) {
                ssize_t bq = -1, bj = -1;
                for (size_t q = 0; q < k->n_q; q++) {
                        ssize_t j = k->q[q].leaf ? head_of(k, sorted, &cursor[q], end[q], tried) : -1;
                        if (j >= 0 && (bq < 0 || kai_queue_order(k, q, &k->g[j], (size_t)bq, &k->g[bj]) < 0))
                                bq = (ssize_t)q, bj = j;
                }
                if (bq < 0) return 0;
                tried[bj] = true;
                int r = act(k, &k->g[bj]);
                if (r < 0) return r;
        }
}

static int queue_reasons(dp_kai *k) {
        for (size_t i = 0; i < k->n_g; i++) {
                dp_kai_group *g = &k->g[i];
                int r = 0;
                if (g->qi == KAI_NONE)
                        r = kai_set_reason(g, "QueueDoesNotExist", "Queue '%s' does not exist",
                                           g->queue ? g->queue : "");
                else if (!k->q[g->qi].leaf)
                        r = kai_set_reason(g, "Unschedulable",
                                           "Queue '%s' is not a leaf queue: only leaf queues hold jobs", g->queue);
                if (r < 0) return r;
        }
        return 0;
}

int dp_kai_admit(dp_kai *k) {
        assert_return(k, -EINVAL);
        int r = dp_kai_fair_share(k);
        if (r >= 0) r = queue_reasons(k);
        if (r >= 0) r = each_in_order(k, try_allocate);
        if (r >= 0) r = each_in_order(k, kai_try_reclaim);
        if (r >= 0) r = each_in_order(k, kai_try_preempt);
        if (r >= 0) r = each_in_order(k, try_allocate);
        return r;
}

/* ---- Preempt: within the queue ---- */

static bool victim_before(const dp_kai_group *a, const dp_kai_group *b) {
        if (a->priority != b->priority) return a->priority < b->priority;
        return a->order > b->order; /* the newest first */
}

static int victim_cmp(const void *a, const void *b, void *arg) {
        const dp_kai *k = arg;
        const dp_kai_group *x = &k->g[*(const size_t *)a], *y = &k->g[*(const size_t *)b];
        int32_t px = k->q[x->qi].priority, py = k->q[y->qi].priority;
        if (px != py) return px < py ? -1 : 1; /* the less prioritized queue's first */
        return victim_before(x, y) ? -1 : victim_before(y, x) ? 1 : 0;
}

/* Running preemptible groups, filtered by keep, in victim order: the
 * lower queue priority, then the lower job priority, then the newest. */
size_t kai_victims(const dp_kai *k, const dp_kai_group *by,
                   bool (*keep)(const dp_kai *, const dp_kai_group *, const dp_kai_group *), size_t *out) {
        size_t n = 0;
        for (size_t i = 0; i < k->n_g; i++) {
                const dp_kai_group *g = &k->g[i];
                if (g != by && g->state == DP_KAI_RUNNING && g->preemptible && kai_in_leaf(k, g) && keep(k, by, g))
                        out[n++] = i;
        }
        qsort_r(out, n, sizeof(size_t), victim_cmp, (void *)k);
        return n;
}

static bool same_queue_lower(const dp_kai *k, const dp_kai_group *by, const dp_kai_group *g) {
        (void)k;
        return g->qi == by->qi && g->priority < by->priority;
}

int kai_try_preempt(dp_kai *k, dp_kai_group *g) {
        if (g->started || g->state != DP_KAI_PENDING) return 0;
        _cleanup_free_ size_t *cand = calloc(k->n_g, sizeof(size_t));
        if (!cand) return -ENOMEM;
        size_t n = kai_victims(k, g, same_queue_lower, cand), taken = 0;
        double v[DP_KAI_NRES];
        size_t first = kai_first_count(g);
        kai_need(g, first, v);
        bool ok = false;
        while (taken < n && !ok) {
                kai_charge(k, &k->g[cand[taken]], k->g[cand[taken]].running, -1); /* tentatively */
                taken++;
                ok = kai_fits(k, v) && kai_capacity_ok(k, g, v, false);
        }
        /* the fewest: give back each victim but the last while the job still fits */
        size_t kept = 0;
        for (size_t i = 0; i < taken; i++) {
                dp_kai_group *x = &k->g[cand[i]];
                kai_charge(k, x, x->running, +1);
                if (!ok || i + 1 == taken || !(kai_fits(k, v) && kai_capacity_ok(k, g, v, false)))
                        cand[kept++] = cand[i];
                else
                        continue; /* not needed: it stays running (charged again) */
                if (ok) kai_charge(k, x, x->running, -1);
        }
        if (!ok) return 0;
        for (size_t i = 0; i < kept; i++) {
                dp_kai_group *x = &k->g[cand[i]];
                kai_charge(k, x, x->running, +1); /* kai_evict takes it off again */
                kai_evict(k, x);
                if (!(x->by = dp_asprintf("preempted by %s/%s", g->ns, g->name))) return -ENOMEM;
        }
        kai_start(k, g, first);
        return 0;
}
