/* SPDX-License-Identifier: Apache-2.0
 *
 * history.c — each ClusterQueue's quota use over time, for the report
 * (`simulate -o json`: asWritten.queues.usageOverTime; the HTML report draws
 * it): per ClusterQueue and flavor-resource its usage after every scheduling
 * cycle and every release of quota, against its nominal quota (and
 * borrowing limit); per Cohort the same summed over its ClusterQueues
 * against the quota of the whole subtree; per ClusterQueue how many
 * workloads wait; and the admissions, finishes and preemptions with the
 * workloads' names, and where admission stopped on a proved preemption loop
 * (queue/loop.c).
 *
 * Time: the queue has no clock. Without a Timeline everything happens at
 * t=0 over cycles (the report's axis is then the cycle); with one, the
 * simulator says the time before it releases quota (dp_queue_set_time) and
 * each point carries both.
 *
 * Bounded: a point is kept only when the value changed; a line keeps at
 * most DP_QUEUE_HISTORY_POINTS_MAX points, after which its last point only
 * moves on (the latest value at the latest change: the line says how many
 * were dropped); a ClusterQueue keeps DP_QUEUE_HISTORY_EVENTS_MAX events and
 * counts the rest. Made before the first cycle; freed with the queue and
 * by q_reset_admission (explain's trials start over).
 */
#include <stdio.h>

#include "queue/queue-internal.h"

typedef struct qh_point {
        int64_t t; /* ms */
        size_t cycle;
        int64_t v;
} qh_point;

/* A step line: the points where its value changed. */
typedef struct qh_line {
        qh_point *p;
        size_t n, cap, dropped;
} qh_line;

typedef struct qh_series {
        const qnode *node; /* a ClusterQueue's or a Cohort's */
        size_t fr;
        int64_t nominal; /* a Cohort's: the nominal quota of its whole subtree */
        qh_line line;
} qh_series;

typedef struct qh_event {
        int64_t t;
        size_t cycle;
        size_t w, by; /* by: the preemptor */
        uint8_t kind, reason;
} qh_event;

typedef struct qh_cq {
        size_t s0, ns; /* its series */
        qh_line pending;
        int64_t n_pending;
        qh_event *ev;
        size_t n_ev, cap_ev, ev_dropped;
} qh_cq;

typedef struct qhistory {
        qh_series *s; /* the ClusterQueues' (in queue order), then the Cohorts' (by name) */
        size_t n_s, n_cq_s;
        qh_cq *cq;  /* per ClusterQueue */
        size_t *up; /* per ClusterQueue series: up_off[i]..up_off[i+1] index the Cohort series it adds to */
        size_t *up_off;
        int64_t *acc; /* per series, while sampling */
        bool churn;
        qh_event churn_ev;
} qhistory;

enum { QH_ADMITTED = 0, QH_FINISHED, QH_PREEMPTED };
static const char *const KINDS[] = {"admitted", "finished", "preempted"};
static const char *const REASONS[] = {"", "InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing",
                                      "InCohortFairSharing"};

void dp_queue_set_time(dp_queue *q, int64_t ms) {
        if (q) q->now_ms = ms;
}

void dp_queue_format(const char *resource, int64_t v, char *buf, size_t size) { q_format(resource, v, buf, size); }

static void line_done(qh_line *l) { free(l->p); }

/* Append a step (coalesced: only a change; a second value for the same
 * instant replaces the first). 0 or -ENOMEM. */
static int line_put(qh_line *l, int64_t t, size_t cycle, int64_t v) {
        qh_point *last = l->n ? &l->p[l->n - 1] : NULL;
        if (last && last->v == v) return 0;
        if (last && last->t == t && last->cycle == cycle) {
                last->v = v;
                if (l->n >= 2 && l->p[l->n - 2].v == v) l->n--;
                return 0;
        }
        if (l->n >= DP_QUEUE_HISTORY_POINTS_MAX) { /* full: the last point moves on */
                *last = (qh_point){t, cycle, v};
                l->dropped++;
                return 0;
        }
        if (DP_GROW(l->p, l->cap, l->n + 1) < 0) return -ENOMEM;
        l->p[l->n++] = (qh_point){t, cycle, v};
        return 0;
}

void q_history_free(dp_queue *q) {
        qhistory *h = q->history;
        if (!h) return;
        for (size_t i = 0; i < h->n_s; i++)
                line_done(&h->s[i].line);
        for (size_t c = 0; h->cq && c < q->n_cqs; c++) {
                line_done(&h->cq[c].pending);
                free(h->cq[c].ev);
        }
        dp_free_many(h->s, h->cq, h->up, h->up_off, h->acc, h);
        q->history = NULL;
}

/* A ClusterQueue's flavor-resources, in the order its groups name them. */
static int cq_series(dp_queue *q, qhistory *h, size_t *cap) {
        for (size_t c = 0; c < q->n_cqs; c++) {
                const dp_cluster_queue *cq = q->cqs[c].cq;
                h->cq[c].s0 = h->n_s;
                for (size_t g = 0; g < cq->n_groups; g++)
                        for (size_t k = 0; k < cq->groups[g].n_flavors; k++)
                                for (size_t i = 0; i < cq->groups[g].n_covered; i++) {
                                        ssize_t fr =
                                                q_fr_find(q, cq->groups[g].flavors[k].name, cq->groups[g].covered[i]);
                                        if (fr < 0) continue;
                                        if (DP_GROW(h->s, *cap, h->n_s + 1) < 0) return -ENOMEM;
                                        h->s[h->n_s++] = (qh_series){.node = q->cqs[c].node,
                                                                     .fr = (size_t)fr,
                                                                     .nominal = q->cqs[c].node->q[fr].nominal};
                                }
                h->cq[c].ns = h->n_s - h->cq[c].s0;
        }
        h->n_cq_s = h->n_s;
        return 0;
}

static int cmp_cohort_series(const void *a, const void *b) {
        const qh_series *x = a, *y = b;
        int c = strcmp(x->node->name, y->node->name);
        return c ? c : x->fr < y->fr ? -1 : x->fr > y->fr;
}

static size_t cohort_index(const qhistory *h, const qnode *node, size_t fr) {
        qh_series key = {.node = node, .fr = fr};
        const qh_series *s = bsearch(&key, h->s + h->n_cq_s, h->n_s - h->n_cq_s, sizeof(*s), cmp_cohort_series);
        return (size_t)(s - h->s);
}

/* Every Cohort above a ClusterQueue gets a series for each of its
 * flavor-resources, sorted by name and deduplicated; each ClusterQueue
 * series learns which it adds to, and each Cohort series sums the nominal
 * quota of its subtree. */
static int cohort_series(dp_queue *q, qhistory *h, size_t *cap) {
        size_t n_up = 0;
        for (size_t i = 0; i < h->n_cq_s; i++)
                for (const qnode *x = h->s[i].node->parent; x; x = x->parent, n_up++) {
                        if (DP_GROW(h->s, *cap, h->n_s + 1) < 0) return -ENOMEM;
                        h->s[h->n_s++] = (qh_series){.node = x, .fr = h->s[i].fr};
                }
        if (h->n_s > h->n_cq_s) qsort(h->s + h->n_cq_s, h->n_s - h->n_cq_s, sizeof(qh_series), cmp_cohort_series);
        size_t k = h->n_cq_s;
        for (size_t i = h->n_cq_s; i < h->n_s; i++)
                if (k == h->n_cq_s || cmp_cohort_series(&h->s[k - 1], &h->s[i])) h->s[k++] = h->s[i];
        h->n_s = k;
        h->up = calloc(n_up + 1, sizeof(size_t));
        h->up_off = calloc(h->n_cq_s + 1, sizeof(size_t));
        h->acc = calloc(h->n_s + 1, sizeof(int64_t));
        if (!h->up || !h->up_off || !h->acc) return -ENOMEM;
        for (size_t i = 0, u = 0; i < h->n_cq_s; i++) {
                h->up_off[i] = u;
                for (const qnode *x = h->s[i].node->parent; x; x = x->parent)
                        h->up[u++] = cohort_index(h, x, h->s[i].fr);
                h->up_off[i + 1] = u;
        }
        for (size_t n = 0; n < q->n_nodes; n++) /* each node's nominal counts in every Cohort above or at it */
                for (const qnode *x = q->nodes[n]->is_cq ? q->nodes[n]->parent : q->nodes[n]; x; x = x->parent)
                        for (size_t i = h->n_cq_s; i < h->n_s; i++)
                                if (h->s[i].node == x) h->s[i].nominal += q->nodes[n]->q[h->s[i].fr].nominal;
        return 0;
}

/* The first points: the usage before the first cycle (what the input
 * admitted), and who waits then. */
static int first_points(dp_queue *q, qhistory *h) {
        for (size_t n = 0; n < q->n_nodes; n++) {
                const qnode *x = q->nodes[n];
                if (!x->is_cq || x->cq < 0) continue;
                const qh_cq *c = &h->cq[x->cq];
                for (size_t i = c->s0; i < c->s0 + c->ns; i++)
                        h->acc[i] = q->usage0[n * q->n_fr + h->s[i].fr];
        }
        for (size_t i = 0; i < q->n_wl; i++) {
                const dp_queue_workload *w = &q->wl[i];
                if (w->cluster_queue && w->cq < q->n_cqs && w->state == DP_QW_PENDING) h->cq[w->cq].n_pending++;
        }
        int r = 0;
        for (size_t c = 0; c < q->n_cqs && r >= 0; c++)
                r = line_put(&h->cq[c].pending, q->now_ms, 0, h->cq[c].n_pending);
        for (size_t i = 0; i < h->n_cq_s; i++)
                for (size_t u = h->up_off[i]; u < h->up_off[i + 1]; u++)
                        h->acc[h->up[u]] += h->acc[i];
        for (size_t i = 0; i < h->n_s && r >= 0; i++)
                r = line_put(&h->s[i].line, q->now_ms, 0, h->acc[i]);
        return r;
}

static qhistory *history(dp_queue *q) {
        if (q->history) return q->history;
        qhistory *h = q->history = calloc(1, sizeof(*h));
        if (!h || !(h->cq = calloc(q->n_cqs + 1, sizeof(qh_cq)))) {
                q_history_free(q);
                return NULL;
        }
        size_t cap = 0;
        int r = cq_series(q, h, &cap);
        if (r >= 0) r = cohort_series(q, h, &cap);
        if (r >= 0) r = first_points(q, h);
        if (r < 0) q_history_free(q);
        return q->history;
}

int q_history_sample(dp_queue *q) {
        qhistory *h = history(q);
        if (!h) return -ENOMEM;
        for (size_t i = h->n_cq_s; i < h->n_s; i++)
                h->acc[i] = 0;
        int r = 0;
        for (size_t i = 0; i < h->n_cq_s && r >= 0; i++) {
                int64_t v = h->s[i].node->q[h->s[i].fr].usage;
                for (size_t u = h->up_off[i]; u < h->up_off[i + 1]; u++)
                        h->acc[h->up[u]] += v;
                r = line_put(&h->s[i].line, q->now_ms, q->cycles, v);
        }
        for (size_t i = h->n_cq_s; i < h->n_s && r >= 0; i++)
                r = line_put(&h->s[i].line, q->now_ms, q->cycles, h->acc[i]);
        for (size_t c = 0; c < q->n_cqs && r >= 0; c++)
                r = line_put(&h->cq[c].pending, q->now_ms, q->cycles, h->cq[c].n_pending);
        return r;
}

static uint8_t reason_code(const char *reason) {
        for (size_t i = 1; reason && i < ELEMENTSOF(REASONS); i++)
                if (streq(REASONS[i], reason)) return (uint8_t)i;
        return 0;
}

static int q_history_event(dp_queue *q, int kind, size_t w, size_t by, const char *reason) {
        qhistory *h = history(q);
        if (!h) return -ENOMEM;
        qh_cq *c = &h->cq[q->wl[w].cq];
        qh_event e = {q->now_ms, q->cycles, w, by, (uint8_t)kind, reason_code(reason)};
        c->n_pending += kind == QH_ADMITTED ? -1 : kind == QH_PREEMPTED ? 1 : 0;
        if (c->n_ev >= DP_QUEUE_HISTORY_EVENTS_MAX) {
                c->ev_dropped++;
                return 0;
        }
        if (DP_GROW(c->ev, c->cap_ev, c->n_ev + 1) < 0) return -ENOMEM;
        c->ev[c->n_ev++] = e;
        return 0;
}

int q_history_churn(dp_queue *q, size_t w) {
        qhistory *h = history(q);
        if (!h) return -ENOMEM;
        if (!h->churn) { /* admission stops here: the loop is proved (loop.c) */
                h->churn = true;
                h->churn_ev = (qh_event){q->now_ms, q->cycles, w, w, QH_PREEMPTED, 0};
        }
        return 0;
}

int q_history_admitted(dp_queue *q, size_t w) { return q_history_event(q, QH_ADMITTED, w, 0, NULL); }
int q_history_finished(dp_queue *q, size_t w) { return q_history_event(q, QH_FINISHED, w, 0, NULL); }
int q_history_preempted(dp_queue *q, size_t w, size_t by, const char *reason) {
        return q_history_event(q, QH_PREEMPTED, w, by, reason);
}

/* ---- the document ---- */

#define PUT(s, m, k, v)                                                                                                \
        do {                                                                                                           \
                if (dp_doc_map_add((s), (m), (k), (v)) < 0) return NULL;                                               \
        } while (0)

static dp_doc_node *name_of(dp_doc_set *s, const dp_queue_workload *w) {
        char name[600];
        snprintf(name, sizeof(name), "%s/%s", w->ns, w->name);
        return dp_doc_new_str(s, name);
}

/* "t" in seconds (the events log's), then the cycle. */
static dp_doc_node *when(dp_doc_set *s, int64_t t, size_t cycle) {
        dp_doc_node *m = dp_doc_new_map(s);
        if (!m) return NULL;
        PUT(s, m, "t", dp_doc_new_int(s, t / 1000));
        PUT(s, m, "cycle", dp_doc_new_int(s, (int64_t)cycle));
        return m;
}

static dp_doc_node *series_doc(dp_doc_set *s, const dp_queue *q, const qh_series *x) {
        dp_doc_node *d = dp_doc_new_map(s), *pts = dp_doc_new_seq(s);
        if (!d || !pts) return NULL;
        const qquota *qq = &x->node->q[x->fr];
        PUT(s, d, "flavor", dp_doc_new_str(s, q->fr[x->fr].flavor));
        PUT(s, d, "resource", dp_doc_new_str(s, q->fr[x->fr].resource));
        PUT(s, d, "nominal", dp_doc_new_int(s, x->nominal));
        if (x->node->is_cq && qq->has_borrowing_limit)
                PUT(s, d, "borrowingLimit", dp_doc_new_int(s, qq->borrowing_limit));
        for (size_t i = 0; i < x->line.n; i++) {
                const qh_point *p = &x->line.p[i];
                dp_doc_node *m = when(s, p->t, p->cycle);
                PUT(s, m, "used", dp_doc_new_int(s, p->v));
                PUT(s, m, "borrowed", dp_doc_new_int(s, DP_MAX(p->v - x->nominal, 0)));
                if (dp_doc_seq_add(s, pts, m) < 0) return NULL;
        }
        PUT(s, d, "points", pts);
        if (x->line.dropped) PUT(s, d, "dropped", dp_doc_new_int(s, (int64_t)x->line.dropped));
        return d;
}

static dp_doc_node *event_doc(dp_doc_set *s, const dp_queue *q, const qh_event *e) {
        dp_doc_node *m = when(s, e->t, e->cycle);
        if (!m) return NULL;
        PUT(s, m, "kind", dp_doc_new_str(s, KINDS[e->kind]));
        PUT(s, m, "workload", name_of(s, &q->wl[e->w]));
        if (e->kind == QH_PREEMPTED) {
                PUT(s, m, "by", name_of(s, &q->wl[e->by]));
                if (e->reason) PUT(s, m, "reason", dp_doc_new_str(s, REASONS[e->reason]));
        }
        return m;
}

static dp_doc_node *cq_doc(dp_doc_set *s, const dp_queue *q, const qhistory *h, size_t c) {
        const qh_cq *x = &h->cq[c];
        dp_doc_node *d = dp_doc_new_map(s), *ser = dp_doc_new_seq(s), *pend = dp_doc_new_seq(s),
                    *ev = dp_doc_new_seq(s);
        if (!d || !ser || !pend || !ev) return NULL;
        PUT(s, d, "name", dp_doc_new_str(s, q->cqs[c].cq->x.meta.name));
        if (q->cqs[c].cq->cohort) PUT(s, d, "cohort", dp_doc_new_str(s, q->cqs[c].cq->cohort));
        for (size_t i = x->s0; i < x->s0 + x->ns; i++)
                if (dp_doc_seq_add(s, ser, series_doc(s, q, &h->s[i])) < 0) return NULL;
        PUT(s, d, "series", ser);
        for (size_t i = 0; i < x->pending.n; i++) {
                dp_doc_node *m = when(s, x->pending.p[i].t, x->pending.p[i].cycle);
                PUT(s, m, "waiting", dp_doc_new_int(s, x->pending.p[i].v));
                if (dp_doc_seq_add(s, pend, m) < 0) return NULL;
        }
        PUT(s, d, "pending", pend);
        for (size_t i = 0; i < x->n_ev; i++)
                if (dp_doc_seq_add(s, ev, event_doc(s, q, &x->ev[i])) < 0) return NULL;
        PUT(s, d, "events", ev);
        if (x->ev_dropped) PUT(s, d, "eventsDropped", dp_doc_new_int(s, (int64_t)x->ev_dropped));
        return d;
}

static dp_doc_node *cohorts_doc(dp_doc_set *s, const dp_queue *q, const qhistory *h) {
        dp_doc_node *seq = dp_doc_new_seq(s), *cur = NULL, *ser = NULL;
        if (!seq) return NULL;
        for (size_t i = h->n_cq_s; i < h->n_s; i++) {
                if (!cur || h->s[i].node != h->s[i - 1].node) {
                        cur = dp_doc_new_map(s);
                        ser = dp_doc_new_seq(s);
                        if (!cur || !ser) return NULL;
                        PUT(s, cur, "name", dp_doc_new_str(s, h->s[i].node->name));
                        PUT(s, cur, "series", ser);
                        if (dp_doc_seq_add(s, seq, cur) < 0) return NULL;
                }
                if (dp_doc_seq_add(s, ser, series_doc(s, q, &h->s[i])) < 0) return NULL;
        }
        return seq;
}

static dp_doc_node *churn_doc(dp_doc_set *s, const dp_queue *q, const qhistory *h) {
        const qh_event *e = &h->churn_ev;
        const dp_queue_workload *w = &q->wl[e->w];
        dp_doc_node *m = when(s, e->t, e->cycle);
        if (!m) return NULL;
        PUT(s, m, "workload", name_of(s, w));
        PUT(s, m, "clusterQueue", dp_doc_new_str(s, w->cluster_queue));
        if (w->preempted_by) PUT(s, m, "by", dp_doc_new_str(s, w->preempted_by));
        PUT(s, m, "timesPreempted", dp_doc_new_int(s, (int64_t)w->times_preempted));
        return m;
}

dp_doc_node *q_history_encode(dp_doc_set *s, const dp_queue *q) {
        const qhistory *h = q->history;
        dp_doc_node *d = dp_doc_new_map(s), *cqs = dp_doc_new_seq(s);
        if (!h || !d || !cqs) return NULL;
        bool timed = false;
        for (size_t i = 0; i < h->n_s && !timed; i++)
                timed = h->s[i].line.n && h->s[i].line.p[h->s[i].line.n - 1].t > 0;
        for (size_t c = 0; c < q->n_cqs && !timed; c++)
                timed = h->cq[c].n_ev && h->cq[c].ev[h->cq[c].n_ev - 1].t > 0;
        PUT(s, d, "axis", dp_doc_new_str(s, timed ? "time" : "cycle"));
        PUT(s, d, "cycles", dp_doc_new_int(s, (int64_t)q->cycles));
        PUT(s, d, "maxPoints", dp_doc_new_int(s, DP_QUEUE_HISTORY_POINTS_MAX));
        PUT(s, d, "maxEvents", dp_doc_new_int(s, DP_QUEUE_HISTORY_EVENTS_MAX));
        if (h->churn) PUT(s, d, "churnStop", churn_doc(s, q, h));
        for (size_t c = 0; c < q->n_cqs; c++)
                if (dp_doc_seq_add(s, cqs, cq_doc(s, q, h, c)) < 0) return NULL;
        PUT(s, d, "clusterQueues", cqs);
        PUT(s, d, "cohorts", cohorts_doc(s, q, h));
        return d;
}
