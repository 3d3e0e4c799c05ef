/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-admit.c — one KAI scheduling cycle as admission: the fair shares,
 * then Allocate (jobs taken queue by queue in KAI's queue order, each
 * started whole or not at all down to its gang's minMember, within the
 * capacity policy and placed on nodes, queue/kai-nodes.c), Reclaim (across queues:
 * the reclaimer within its fair share, victims of queues above theirs under
 * MaintainFairShare or GuaranteeDeservedQuota, the saturation check of the
 * reclaiming queues against their siblings), Preempt (within a queue:
 * preemptible victims of strictly lower priority), and Allocate again for
 * what the evictions freed.
 */
#include <math.h>
#include <stdio.h>

#include "queue/kai-internal.h"

void kai_need(const dp_kai_group *g, size_t n, double v[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                v[r] = g->req[r] * (double)n;
}

bool kai_fits(dp_kai *k, const dp_kai_group *g, size_t n) { return kai_place(k, g, n, false, NULL) == n; }

void kai_start(dp_kai *k, dp_kai_group *g, size_t n) {
        double v[DP_KAI_NRES];
        kai_need(g, n, v);
        size_t placed = kai_place(k, g, n, true, NULL);
        assert(placed == n); /* every caller checked kai_fits on the same state */
        (void)placed;
        kai_charge(k, g, v, +1);
        g->started += n;
        if (g->state == DP_KAI_PENDING) g->state = DP_KAI_ADMITTED;
        dp_free_many(g->reason, g->message);
        g->reason = g->message = NULL;
}

void kai_held(const dp_kai_group *g, double v[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                v[r] = g->running[r] + g->req[r] * (double)g->started;
}

void kai_hold(dp_kai *k, dp_kai_group *g, int sign) {
        double v[DP_KAI_NRES];
        kai_held(g, v);
        kai_charge(k, g, v, sign);
        kai_nodes_hold(k, g, sign);
}

/* The group's running pods and those started in this cycle (an elastic
 * group that grew before it became a victim: KAI evicts what it allocated
 * in the same cycle too) leave their nodes and queues. */
void kai_evict(dp_kai *k, dp_kai_group *g) {
        kai_hold(k, g, -1);
        kai_nodes_unplace(k, g);
        g->started = 0;
        k->evictions++;
        g->state = DP_KAI_EVICTED;
}

bool kai_in_leaf(const dp_kai *k, const dp_kai_group *g) { return g->qi != KAI_NONE && k->q[g->qi].leaf; }

/* Whether g waits for pods to start (and may be tried). */
static bool waiting(const dp_kai *k, const dp_kai_group *g) {
        return kai_in_leaf(k, g) && kai_n_pending(g) > 0 && g->state != DP_KAI_EVICTED;
}

/* ---- Allocate ---- */

/* Why the first pods of g fit no node (g->reason and message). */
static int no_room(dp_kai *k, dp_kai_group *g, size_t first) {
        size_t failed = KAI_NONE;
        (void)kai_place(k, g, first, false, &failed);
        if (failed == KAI_NONE) return kai_set_reason(g, "Unschedulable", "no room on the nodes");
        const dp_kai_pod *p = &k->pods[failed];
        const double *most = kai_most_free(k);
        return kai_set_reason(g, "Unschedulable",
                              "%zu pod(s) of the gang must start together: pod %s (cpu %gm, memory %gMB, gpu %g) "
                              "fits no node that passes its predicates once the others are placed (the most free "
                              "on one node: cpu %gm, memory %gMB, gpu %g)",
                              first, p->key, p->req[DP_KAI_CPU], p->req[DP_KAI_MEMORY], p->req[DP_KAI_GPU],
                              fmax(most[DP_KAI_CPU], 0), fmax(most[DP_KAI_MEMORY], 0), fmax(most[DP_KAI_GPU], 0));
}

/* All pending pods of g, else as many as can be placed and pass the
 * capacity policy, down to its first count (the gang's rest); the pods that
 * can be placed are a prefix (kai_place): one trial says how many. */
static int try_allocate(dp_kai *k, dp_kai_group *g) {
        double v[DP_KAI_NRES];
        size_t first = kai_first_count(g), room = kai_place(k, g, kai_n_pending(g), false, NULL);
        for (size_t n = room; n >= first && n > 0; n--) {
                kai_need(g, n, v);
                if (kai_capacity_ok(k, g, v, false)) {
                        kai_start(k, g, n);
                        return 0;
                }
        }
        kai_need(g, first, v);
        if (!kai_capacity_ok(k, g, v, true)) return g->reason ? 0 : -ENOMEM;
        return no_room(k, g, first);
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

/* Picking the next job: KAI's queue order compares two leaves at the level
 * where their paths part, so the first leaf is found from the top, taking
 * at each level the child whose own first leaf goes first. Each node keeps
 * its first leaf until something under it changes (an allocation changes
 * its path; an eviction, anything). Node n_q is the root above the top
 * queues. */
typedef struct picker {
        dp_kai *k;
        bool *tried;
        size_t *sorted, *cursor, *end; /* each leaf's run of jobs in sorted */
        size_t *first, *children;      /* node q's children: children[first[q] .. first[q + 1]) */
        ssize_t *best;                 /* the first leaf under the node, -1 none */
        bool *valid;
} picker;

static ssize_t head(picker *p, size_t q) { return head_of(p->k, p->sorted, &p->cursor[q], p->end[q], p->tried); }

static ssize_t best_under(picker *p, size_t q) {
        const dp_kai *k = p->k;
        if (p->valid[q]) return p->best[q];
        ssize_t b = -1;
        if (q < k->n_q && k->q[q].leaf) b = head(p, q) >= 0 ? (ssize_t)q : -1;
        for (size_t i = p->first[q]; i < p->first[q + 1]; i++) {
                ssize_t l = best_under(p, p->children[i]);
                if (l >= 0 && (b < 0 || kai_queue_order(k, (size_t)l, &k->g[head(p, (size_t)l)], (size_t)b,
                                                        &k->g[head(p, (size_t)b)]) < 0))
                        b = l;
        }
        p->valid[q] = true;
        return p->best[q] = b;
}

static int picker_init(picker *p, dp_kai *k) {
        size_t nq = k->n_q;
        *p = (picker){k,
                      calloc(k->n_g + 1, sizeof(bool)),
                      calloc(k->n_g + 1, sizeof(size_t)),
                      calloc(nq + 1, sizeof(size_t)),
                      calloc(nq + 1, sizeof(size_t)),
                      calloc(nq + 3, sizeof(size_t)),
                      calloc(nq + 1, sizeof(size_t)),
                      calloc(nq + 1, sizeof(ssize_t)),
                      calloc(nq + 1, sizeof(bool))};
        if (!p->tried || !p->sorted || !p->cursor || !p->end || !p->first || !p->children || !p->best || !p->valid)
                return -ENOMEM;
        for (size_t i = 0; i < k->n_g; i++)
                p->sorted[i] = i;
        qsort_r(p->sorted, k->n_g, sizeof(size_t), by_queue_then_job, k);
        for (size_t i = 0, q = 0; q < nq; q++) { /* groups of no queue sort last (KAI_NONE) */
                p->cursor[q] = i;
                while (i < k->n_g && k->g[p->sorted[i]].qi == q)
                        i++;
                p->end[q] = i;
        }
        for (size_t q = 0; q < nq; q++) /* children counted, then placed */
                p->first[(k->q[q].parent == KAI_NONE ? nq : k->q[q].parent) + 2]++;
        for (size_t q = 2; q < nq + 3; q++)
                p->first[q] += p->first[q - 1];
        for (size_t q = 0; q < nq; q++)
                p->children[p->first[(k->q[q].parent == KAI_NONE ? nq : k->q[q].parent) + 1]++] = q;
        return 0;
}

static void picker_done(picker *p) {
        dp_free_many(p->tried, p->sorted, p->cursor, p->end, p->first, p->children, p->best, p->valid);
}

/* Jobs one at a time: the queue first in KAI's queue order with its next
 * job, each job once. */
static int each_in_order(dp_kai *k, kai_action act) {
        _cleanup_(picker_done) picker p;
        if (picker_init(&p, k) < 0) return -ENOMEM;
        for (;;) {
                ssize_t bq = best_under(&p, k->n_q);
                if (bq < 0) return 0;
                size_t bj = (size_t)head(&p, (size_t)bq), evictions = k->evictions;
                p.tried[bj] = true;
                int r = act(k, &k->g[bj]);
                if (r < 0) return r;
                if (k->evictions != evictions) memset(p.valid, 0, (k->n_q + 1) * sizeof(bool));
                for (size_t a = (size_t)bq; a != KAI_NONE; a = k->q[a].parent)
                        p.valid[a] = false;
                p.valid[k->n_q] = false;
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
 * lower queue priority, then the lower job priority, then the newest. Only
 * by's queue when own_queue (Preempt), else every other leaf (Reclaim). */
size_t kai_victims(const dp_kai *k, const dp_kai_group *by, bool own_queue,
                   bool (*keep)(const dp_kai *, const dp_kai_group *, const dp_kai_group *), size_t *out) {
        size_t n = 0;
        for (size_t q = own_queue ? by->qi : 0; q < k->n_q; q = own_queue ? k->n_q : q + 1) {
                if (!own_queue && q == by->qi) continue;
                for (size_t j = 0; j < k->q[q].n_running; j++) {
                        size_t i = k->q[q].running[j];
                        const dp_kai_group *g = &k->g[i];
                        if (g->state == DP_KAI_RUNNING && g->preemptible && kai_in_leaf(k, g) && keep(k, by, g))
                                out[n++] = i;
                }
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
        size_t n = kai_victims(k, g, true, same_queue_lower, cand), taken = 0;
        double v[DP_KAI_NRES];
        size_t first = kai_first_count(g);
        kai_need(g, first, v);
        bool ok = false;
        while (taken < n && !ok) {
                kai_hold(k, &k->g[cand[taken]], -1); /* tentatively */
                taken++;
                ok = kai_capacity_ok(k, g, v, false) && kai_fits(k, g, first);
        }
        /* the fewest: give back each victim but the last while the job still fits */
        size_t kept = 0;
        for (size_t i = 0; i < taken; i++) {
                dp_kai_group *x = &k->g[cand[i]];
                kai_hold(k, x, +1);
                if (!ok || i + 1 == taken || !(kai_capacity_ok(k, g, v, false) && kai_fits(k, g, first)))
                        cand[kept++] = cand[i];
                else
                        continue; /* not needed: it stays running (held again) */
                if (ok) kai_hold(k, x, -1);
        }
        if (!ok) return 0;
        for (size_t i = 0; i < kept; i++) {
                dp_kai_group *x = &k->g[cand[i]];
                kai_hold(k, x, +1); /* kai_evict takes it off again */
                kai_evict(k, x);
                if (!(x->by = dp_asprintf("preempted by %s/%s", g->ns, g->name))) return -ENOMEM;
        }
        kai_start(k, g, first);
        return 0;
}
