/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-order.c — the comparisons of KAI's proportion plugin: the queue order
 * of the Allocate action (queue_order.go GetQueueOrderResult, rules 1–8),
 * the job order inside a queue, and the capacity policy every allocation
 * passes (capacity_policy: a limit up the tree, then non-preemptible work
 * only within quota), with KAI's reason words and messages.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "queue/kai-internal.h"

bool kai_job_before(const dp_kai_group *a, const dp_kai_group *b) {
        if (a->priority != b->priority) return a->priority > b->priority;
        return a->order < b->order;
}

/* The queue's allocated share with the job's request v added. */
static void with_job(const dp_kai_queue *q, const double *v, double out[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                out[r] = q->allocated[r] + (v ? v[r] : 0);
}

/* 1: queues at most at their fair share first. */
static bool over_fair_share(const dp_kai_queue *q) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (!kai_le(q->allocated[r], q->fair[r])) return true;
        return false;
}

/* 2: allocated + job within deserved in every resource (-1: unlimited). */
static bool within_deserved(const dp_kai_queue *q, const double *v) {
        double a[DP_KAI_NRES];
        with_job(q, v, a);
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (q->deserved[r] != DP_KAI_UNLIMITED && !kai_le(a[r], q->deserved[r])) return false;
        return true;
}

/* 4: a resource with no allocatable share that the queue would use. */
static bool zero_share_violation(const dp_kai_queue *q, const double *v) {
        double a[DP_KAI_NRES];
        with_job(q, v, a);
        for (int r = 0; r < DP_KAI_NRES; r++)
                if (kai_allocatable(q, r) == 0 && a[r] > 0) return true;
        return false;
}

/* 5, 6: the dominant share of allocated (+ the job) over the allocatable
 * share (unlimited: the cluster's; none: ×1000). */
static double dominant_share(const dp_kai *k, const dp_kai_queue *q, const double *v) {
        double a[DP_KAI_NRES], d = 0;
        with_job(q, v, a);
        for (int r = 0; r < DP_KAI_NRES; r++) {
                double s = kai_allocatable(q, r);
                if (s == DP_KAI_UNLIMITED) s = k->capacity[r];
                d = fmax(d, s == 0 ? a[r] * 1000 : a[r] / s);
        }
        return d;
}

/* 7: a's allocatable share below b's in one resource and not above in any. */
static bool smaller_allocatable(const dp_kai_queue *a, const dp_kai_queue *b) {
        bool less = false;
        for (int r = 0; r < DP_KAI_NRES; r++) {
                double x = kai_allocatable(a, r), y = kai_allocatable(b, r);
                if (x > y) return false;
                less = less || x < y;
        }
        return less;
}

#define PREFER(a_first, b_first)                                                                                       \
        do {                                                                                                           \
                bool _a = (a_first), _b = (b_first);                                                                   \
                if (_a && !_b) return -1;                                                                              \
                if (_b && !_a) return 1;                                                                               \
        } while (0)

static int compare_siblings(const dp_kai *k, const dp_kai_queue *a, const double *va, const dp_kai_queue *b,
                            const double *vb) {
        PREFER(!over_fair_share(a), !over_fair_share(b));
        PREFER(within_deserved(a, va), within_deserved(b, vb));
        if (a->priority != b->priority) return a->priority > b->priority ? -1 : 1;
        PREFER(!zero_share_violation(a, va), !zero_share_violation(b, vb));
        double da = dominant_share(k, a, va), db = dominant_share(k, b, vb);
        if (da != db) return da < db ? -1 : 1;
        da = dominant_share(k, a, NULL), db = dominant_share(k, b, NULL);
        if (da != db) return da < db ? -1 : 1;
        PREFER(smaller_allocatable(a, b), smaller_allocatable(b, a));
        return a->order < b->order ? -1 : 1;
}

static size_t depth(const dp_kai *k, size_t q) {
        size_t d = 0;
        for (size_t a = k->q[q].parent; a != KAI_NONE; a = k->q[a].parent)
                d++;
        return d;
}

static size_t ancestor_at(const dp_kai *k, size_t q, size_t level) {
        for (size_t d = depth(k, q); d > level; d--)
                q = k->q[q].parent;
        return q;
}

int kai_queue_order(const dp_kai *k, size_t a, const dp_kai_group *ja, size_t b, const dp_kai_group *jb) {
        if (a == b) return kai_job_before(ja, jb) ? -1 : 1;
        size_t da = depth(k, a), db = depth(k, b), level = 0;
        size_t top = DP_MIN(da, db);
        while (level < top && ancestor_at(k, a, level) == ancestor_at(k, b, level))
                level++;
        size_t x = ancestor_at(k, a, level), y = ancestor_at(k, b, level);
        if (x == y) return a < b ? -1 : 1; /* one is the other's ancestor: not a tree of leaves */
        double va[DP_KAI_NRES], vb[DP_KAI_NRES];
        for (int r = 0; r < DP_KAI_NRES; r++) {
                va[r] = ja->req[r] * (double)kai_first_count(ja);
                vb[r] = jb->req[r] * (double)kai_first_count(jb);
        }
        return compare_siblings(k, &k->q[x], va, &k->q[y], vb);
}

/* ---- capacity policy ---- */

int kai_set_reason(dp_kai_group *g, const char *reason, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *m = dp_vasprintf(fmt, ap);
        va_end(ap);
        char *r = strdup(reason);
        if (!m || !r) {
                dp_free_many(m, r);
                return -ENOMEM;
        }
        free(g->reason);
        free(g->message);
        g->reason = r;
        g->message = m;
        return 0;
}

static const char *const units[DP_KAI_NRES] = {"CPU cores", "memory", "GPUs"};
static const char *const unit_short[DP_KAI_NRES] = {"cores", "GB", "GPUs"};
static const double scale[DP_KAI_NRES] = {1000, 1000, 1}; /* millicores → cores, MB → GB */

static bool over_limit(dp_kai *k, dp_kai_group *g, const double *v, bool set_reason) {
        for (size_t a = g->qi; a != KAI_NONE; a = k->q[a].parent) {
                const dp_kai_queue *q = &k->q[a];
                for (int r = 0; r < DP_KAI_NRES; r++) {
                        if (q->limit[r] == DP_KAI_UNLIMITED || v[r] == 0) continue;
                        if (kai_le(q->allocated[r] + v[r], q->limit[r])) continue;
                        if (set_reason)
                                (void)kai_set_reason(g, "OverLimit",
                                                     "%s quota has reached the allowable limit of %s. Limit is %g %s, "
                                                     "currently %g %s allocated and workload requested %g %s",
                                                     q->name, units[r], q->limit[r] / scale[r], unit_short[r],
                                                     q->allocated[r] / scale[r], unit_short[r], v[r] / scale[r],
                                                     unit_short[r]);
                        return true;
                }
        }
        return false;
}

static const char *const np_units[DP_KAI_NRES] = {"CPU cores", "GB memory", "GPUs"};
static const char *const np_quota_units[DP_KAI_NRES] = {"cores", "GB", "GPUs"};

static bool np_over_quota(dp_kai *k, dp_kai_group *g, const double *v, bool set_reason) {
        if (g->preemptible) return false;
        for (size_t a = g->qi; a != KAI_NONE; a = k->q[a].parent) {
                const dp_kai_queue *q = &k->q[a];
                for (int r = 0; r < DP_KAI_NRES; r++) {
                        if (q->deserved[r] == DP_KAI_UNLIMITED || v[r] == 0) continue;
                        if (kai_le(q->allocated_np[r] + v[r], q->deserved[r])) continue;
                        if (set_reason)
                                (void)kai_set_reason(
                                        g, "NonPreemptibleOverQuota",
                                        "Non-preemptible workload is over quota. Workload requested %g %s, but %s "
                                        "quota "
                                        "is %g %s, while %g %s are already allocated for non-preemptible pods. Use a "
                                        "preemptible workload to go over quota.",
                                        v[r] / scale[r], np_units[r], q->name, q->deserved[r] / scale[r],
                                        np_quota_units[r], q->allocated_np[r] / scale[r], np_quota_units[r]);
                        return true;
                }
        }
        return false;
}

bool kai_capacity_ok(dp_kai *k, dp_kai_group *g, const double v[DP_KAI_NRES], bool set_reason) {
        return !over_limit(k, g, v, set_reason) && !np_over_quota(k, g, v, set_reason);
}
