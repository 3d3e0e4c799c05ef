/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-share.c — KAI's fair share (resource_division.go, v0.17), per resource,
 * level by level down the queue tree: the top queues share the cluster's
 * capacity, the children of a queue share its fair share. At each level:
 *   1. every queue gets min(deserved, requestable) (deserved -1: the total);
 *   2. what is left goes by queue priority, highest first; inside a priority,
 *      rounds: each unsatisfied queue with a weight is offered
 *      left × w / Σw (w = its overQuotaWeight over the unsatisfied ones':
 *      kValue 0, no time-based usage), takes all of it when its remaining
 *      request is smaller, else the whole units of it, and the fraction is
 *      remembered; another round while someone took less than offered;
 *   3. the units still left go one at a time (or what is left, under one)
 *      to the remembered queues, largest fraction first, then the earlier
 *      queue, then the name.
 * A queue is satisfied when its request or its limit is at most its fair
 * share. Go iterates a map where devplane takes the queues in input order
 * (it matters only to who is offered first within a round).
 */
#include <math.h>

#include "queue/kai-internal.h"

double kai_requestable(const dp_kai_queue *q, int r) {
        return q->limit[r] == DP_KAI_UNLIMITED ? q->request[r] : fmin(q->limit[r], q->request[r]);
}

double kai_allocatable(const dp_kai_queue *q, int r) {
        if (q->deserved[r] == DP_KAI_UNLIMITED) return q->limit[r];
        double a = fmax(q->deserved[r], q->fair[r]);
        return q->limit[r] == DP_KAI_UNLIMITED ? a : fmin(q->limit[r], a);
}

static bool satisfied(const dp_kai_queue *q, int r) {
        if (q->request[r] <= q->fair[r]) return true;
        return q->limit[r] != DP_KAI_UNLIMITED && q->limit[r] <= q->fair[r];
}

static double remaining_request(const dp_kai_queue *q, int r) {
        double req = kai_requestable(q, r);
        return req < q->fair[r] ? 0 : req - q->fair[r];
}

/* One level: the queues of `lv` (indices into k->q) share `total`. */
typedef struct level {
        size_t *qi;
        size_t n;
        double *fraction; /* per member: the fraction remembered, < 0 none */
} level;

static double give_deserved(dp_kai *k, const level *lv, int r, double total) {
        double left = total;
        for (size_t i = 0; i < lv->n; i++) {
                dp_kai_queue *q = &k->q[lv->qi[i]];
                double d = q->deserved[r] == DP_KAI_UNLIMITED ? total : q->deserved[r];
                double amount = fmin(d, kai_requestable(q, r));
                q->fair[r] += amount;
                left -= amount;
        }
        return left;
}

/* The rounds inside one priority; returns what is left. */
static double rounds(dp_kai *k, const level *lv, int32_t prio, int r, double left) {
        for (;;) {
                double total_w = 0, sum = 0, offered = left;
                bool again = false;
                for (size_t i = 0; i < lv->n; i++) {
                        const dp_kai_queue *q = &k->q[lv->qi[i]];
                        if (q->priority == prio && remaining_request(q, r) > 0) total_w += q->weight[r];
                }
                if (total_w == 0) break;
                for (size_t i = 0; i < lv->n; i++) {
                        const dp_kai_queue *q = &k->q[lv->qi[i]];
                        if (q->priority == prio && !satisfied(q, r)) sum += q->weight[r] / total_w;
                }
                if (sum == 0) break;
                for (size_t i = 0; i < lv->n && left != 0; i++) {
                        dp_kai_queue *q = &k->q[lv->qi[i]];
                        if (q->priority != prio || satisfied(q, r) || q->weight[r] == 0) continue;
                        double want = remaining_request(q, r), share = offered * (q->weight[r] / total_w) / sum;
                        double give = want <= share ? want : fmax(floor(share), 0);
                        lv->fraction[i] = want <= share ? -1 : share - give > 0 ? share - give : lv->fraction[i];
                        if (give == 0) continue;
                        q->fair[r] += give;
                        left -= give;
                        again = again || want < share;
                }
                if (!again || left == 0) break;
        }
        return left;
}

/* Step 3: whole units to the largest fractions. */
static double leftovers(dp_kai *k, const level *lv, int32_t prio, int r, double left) {
        for (;;) {
                size_t best = KAI_NONE;
                for (size_t i = 0; i < lv->n; i++) {
                        if (k->q[lv->qi[i]].priority != prio || lv->fraction[i] <= 0) continue;
                        if (best == KAI_NONE || lv->fraction[i] > lv->fraction[best] ||
                            (lv->fraction[i] == lv->fraction[best] && k->q[lv->qi[i]].order < k->q[lv->qi[best]].order))
                                best = i;
                }
                if (best == KAI_NONE || left <= 0) return left;
                double give = fmin(1, left);
                k->q[lv->qi[best]].fair[r] += give;
                left -= give;
                lv->fraction[best] = -1; /* popped */
        }
}

static void divide(dp_kai *k, const level *lv, int r, double total) {
        double left = give_deserved(k, lv, r, total);
        int32_t prio = INT32_MAX;
        while (left > 0) {
                /* the next priority below prio present at this level */
                bool found = false;
                int32_t next = INT32_MIN;
                for (size_t i = 0; i < lv->n; i++) {
                        int32_t p = k->q[lv->qi[i]].priority;
                        if (p < prio && p >= next) next = p, found = true;
                }
                if (!found) break;
                prio = next;
                for (size_t i = 0; i < lv->n; i++)
                        lv->fraction[i] = -1;
                left = rounds(k, lv, prio, r, left);
                if (left > 0) left = leftovers(k, lv, prio, r, left);
        }
}

/* The children of parent (KAI_NONE: the top queues) share total, then
 * each shares its own fair share among its children. */
static void divide_tree(dp_kai *k, size_t parent, int r, double total, size_t *qi, double *fraction) {
        level lv = {qi, 0, fraction};
        for (size_t i = 0; i < k->n_q; i++)
                if (k->q[i].parent == parent) qi[lv.n++] = i;
        if (!lv.n) return;
        divide(k, &lv, r, total);
        /* the children's lists reuse the arrays past this level's */
        for (size_t i = 0; i < lv.n; i++) {
                size_t c = qi[i];
                divide_tree(k, c, r, k->q[c].fair[r], qi + lv.n, fraction + lv.n);
        }
}

int dp_kai_fair_share(dp_kai *k) {
        assert_return(k, -EINVAL);
        if (!k->n_q) return 0;
        _cleanup_free_ size_t *qi = calloc(k->n_q, sizeof(*qi));
        _cleanup_free_ double *fraction = calloc(k->n_q, sizeof(*fraction));
        if (!qi || !fraction) return -ENOMEM;
        for (size_t i = 0; i < k->n_q; i++)
                for (int r = 0; r < DP_KAI_NRES; r++)
                        k->q[i].fair[r] = 0;
        for (int r = 0; r < DP_KAI_NRES; r++)
                divide_tree(k, KAI_NONE, r, k->capacity[r], qi, fraction);
        return 0;
}
