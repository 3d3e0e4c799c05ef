/* SPDX-License-Identifier: Apache-2.0
 *
 * admit.c — Kueue's scheduling cycle (pkg/scheduler/scheduler.go schedule()),
 * repeated until a cycle admits nothing: the head of every active
 * ClusterQueue, a flavor assignment for each against a snapshot of the
 * quota, the heads in the classical iterator's order (not borrowing before
 * borrowing, higher priority, older first), then each admitted if it still
 * fits what the earlier ones took ("Workload no longer fits after processing
 * another workload" otherwise, and it is tried again next cycle). A head
 * that cannot be admitted is set aside (BestEffortFIFO) or blocks its queue
 * (StrictFIFO) until its cohort changes, which in a cluster where nothing
 * finishes only a preemption does. A head that needs preemption and has
 * targets (preempt.c) issues them and waits: the victims are evicted at the
 * end of the cycle (their quota goes back, they queue again) and the
 * preemptor is tried again in the next one.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

typedef struct entry {
        size_t w;
        qassign a;
        qtarget *targets; /* preemption targets, when a.mode preempts */
        size_t n_targets;
        bool ns_mismatch;
        bool admitted;
        bool preempting; /* issued its preemptions this cycle */
} entry;

/* The workloads preempted so far in this cycle (preemptedWorkloads). */
typedef struct gone {
        size_t *v;
        size_t n;
} gone;

static int cmp_entry(const void *x, const void *y, void *userdata) {
        const dp_queue *q = userdata;
        const entry *a = x, *b = y;
        if (a->a.borrowing != b->a.borrowing) return a->a.borrowing < b->a.borrowing ? -1 : 1;
        const dp_queue_workload *u = &q->wl[a->w], *v = &q->wl[b->w];
        if (u->priority != v->priority) return u->priority > v->priority ? -1 : 1;
        if (u->created && v->created) {
                int c = strcmp(u->created, v->created);
                if (c) return c;
        }
        return u->order < v->order ? -1 : u->order > v->order;
}

/* The head of a ClusterQueue: the workload waiting for its preemptions
 * first (Kueue's sticky workload), then queue order (with Admission Fair
 * Sharing, the LocalQueue's usage first: afs.c). */
static ssize_t head(dp_queue *q, qcq *c) {
        if (c->sticky && q->wl[c->sticky - 1].state == DP_QW_PENDING) return (ssize_t)(c->sticky - 1);
        if (q_afs_on(q, c)) return q_afs_head(q, c);
        while (c->next < c->n_wl) {
                size_t i = c->wl[c->next];
                if (q->wl[i].state == DP_QW_PENDING && !q->set_aside[i]) return (ssize_t)i;
                c->next++;
        }
        return -1;
}

static int set_message(dp_queue_workload *w, const char *text) {
        char *s = strdup(text);
        if (!s) return -ENOMEM;
        free(w->message);
        w->message = s;
        return 0;
}

/* quotaResourcesToReserve: a head that would need preemption and finds no
 * candidates keeps what it could use of its nominal quota (or its borrowing
 * limit) from heads later in the same cycle, unless its queue can always
 * reclaim (reclaimWithinCohort: Any). */
static void reserve(qcq *c, const qassign *a) {
        const char *reclaim = c->cq->preemption.reclaim_within_cohort;
        if (reclaim && streq(reclaim, "Any")) return;
        for (size_t i = 0; i < a->n_usage; i++) {
                const qquota *x = &c->node->q[a->usage[i].fr];
                int64_t v = a->usage[i].value;
                if (a->borrowing > 0)
                        v = x->has_borrowing_limit ? DP_MIN(v, x->nominal + x->borrowing_limit - x->usage) : v;
                else
                        v = DP_MAX(0, DP_MIN(v, x->nominal - x->usage));
                if (v > 0) q_add_usage(c->node, a->usage[i].fr, v);
        }
}

static int admit_one(dp_queue *q, qcq *c, dp_queue_workload *w, const qassign *a) {
        for (size_t i = 0; i < a->n_usage; i++) {
                q_add_usage(c->node, a->usage[i].fr, a->usage[i].value);
                if (q_held_add(q, (size_t)(w - q->wl), a->usage[i].fr, a->usage[i].value) < 0) return -ENOMEM;
        }
        size_t off = 0;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++, off++) {
                        ssize_t fr = a->flavor_fr[off];
                        if (fr >= 0 && !(w->podsets[p].flavors[i] = strdup(q->fr[fr].flavor))) return -ENOMEM;
                }
        q_partial_admitted(w, a);
        w->state = DP_QW_ADMITTED;
        q_state_changed(q, w);
        if (q_history_admitted(q, (size_t)(w - q->wl)) < 0) return -ENOMEM;
        w->borrowing = a->borrowing;
        w->cycle = q->cycles;
        q_afs_admitted(q, (size_t)(w - q->wl));
        free(w->reason);
        w->reason = strdup("Admitted");
        char msg[600];
        snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", c->cq->x.meta.name);
        return !w->reason || set_message(w, msg) < 0 ? -ENOMEM : q_checks_reserved(q, (size_t)(w - q->wl));
}

/* A head that gets no admission this cycle and will not get one later. */
static int hold(dp_queue *q, qcq *c, entry *e) {
        dp_queue_workload *w = &q->wl[e->w];
        int r = set_message(w, e->ns_mismatch ? "workload namespace doesn't match ClusterQueue selector"
                                              : dp_strbuf_str(&e->a.message));
        if (!e->ns_mismatch && q_mode_preempts(e->a.mode)) reserve(c, &e->a);
        if (c->cq->queueing == DP_KQ_STRICT_FIFO)
                c->blocked = true;
        else
                q->set_aside[e->w] = true;
        return r;
}

static bool overlaps(const gone *g, const entry *e) {
        for (size_t i = 0; i < e->n_targets; i++)
                for (size_t k = 0; k < g->n; k++)
                        if (g->v[k] == e->targets[i].w) return true;
        return false;
}

/* fits(): the assignment fits once this cycle's victims and its own are gone. */
static int fits_now(dp_queue *q, const qcq *c, const entry *e, const gone *g, bool *ret) {
        size_t *v = malloc((g->n + e->n_targets + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        for (size_t i = 0; i < g->n; i++)
                v[i] = g->v[i];
        for (size_t i = 0; i < e->n_targets; i++)
                v[g->n + i] = e->targets[i].w;
        *ret = q_fits_without(q, c, &e->a, v, g->n + e->n_targets);
        free(v);
        return 0;
}

/* The preemptions are issued: the targets join the cycle's victims, the
 * preemptor's usage stays in the snapshot, and it waits for them. */
static int issue(dp_queue *q, qcq *c, entry *e, gone *g) {
        size_t *v = realloc(g->v, (g->n + e->n_targets + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        g->v = v;
        for (size_t i = 0; i < e->n_targets; i++)
                v[g->n++] = e->targets[i].w;
        for (size_t i = 0; i < e->a.n_usage; i++)
                q_add_usage(c->node, e->a.usage[i].fr, e->a.usage[i].value);
        e->preempting = true;
        c->sticky = e->w + 1;
        char *msg = dp_asprintf("%s. Pending the preemption of %zu workload(s)", dp_strbuf_str(&e->a.message),
                                e->n_targets);
        if (!msg) return -ENOMEM;
        int r = set_message(&q->wl[e->w], msg);
        free(msg);
        return r;
}

/* One entry, as processEntry takes it. *progress: admitted, held or preempting. */
static int process(dp_queue *q, entry *e, gone *g, bool *progress) {
        dp_queue_workload *w = &q->wl[e->w];
        qcq *c = &q->cqs[w->cq];
        if (e->ns_mismatch || e->a.mode == QM_NOFIT || (q_mode_preempts(e->a.mode) && !e->n_targets)) {
                *progress = true;
                return hold(q, c, e);
        }
        if (overlaps(g, e)) return set_message(w, "Workload has overlapping preemption targets with another workload");
        bool ok = false;
        int r = fits_now(q, c, e, g, &ok);
        if (r < 0) return r;
        if (!ok) return set_message(w, "Workload no longer fits after processing another workload");
        *progress = true;
        if (e->n_targets) return issue(q, c, e, g);
        e->admitted = true;
        return admit_one(q, c, w, &e->a);
}

static int nominate(dp_queue *q, entry **ret, size_t *ret_n) {
        entry *v = calloc(q->n_cqs + 1, sizeof(*v));
        if (!v) return -ENOMEM;
        size_t n = 0;
        int r = 0;
        for (size_t c = 0; c < q->n_cqs && r >= 0; c++) {
                qcq *cq = &q->cqs[c];
                if (cq->inactive || cq->blocked) continue;
                ssize_t h = head(q, cq);
                cq->sticky = 0; /* issue() sets it again if it preempts again */
                if (h < 0) continue;
                entry *e = &v[n++];
                e->w = (size_t)h;
                e->a.message = (dp_strbuf)DP_STRBUF_INIT;
                e->ns_mismatch = !q->ns_ok[h];
                if (!e->ns_mismatch) r = q_assign(q, cq, &q->wl[h], &e->a);
                if (r >= 0 && !e->ns_mismatch && q_mode_preempts(e->a.mode))
                        r = q_preempt_targets(q, cq, (size_t)h, &e->a, &e->targets, &e->n_targets);
        }
        *ret = v;
        *ret_n = n;
        return r;
}

/* Fair sharing: the heads in the tournament's order, one at a time, as
 * admissions earlier in the cycle change the shares. */
static int process_fair(dp_queue *q, entry *e, size_t n, gone *g, bool *progress) {
        qhead *h = calloc(n + 1, sizeof(*h));
        bool *done = calloc(n + 1, sizeof(*done));
        int r = h && done ? 0 : -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++)
                h[i] = (qhead){e[i].w, &e[i].a};
        for (ssize_t k; r >= 0 && (k = q_fair_next(q, h, n, done)) != -1;) {
                if (k < 0) {
                        r = (int)k;
                        break;
                }
                done[k] = true;
                r = process(q, &e[k], g, progress);
        }
        free(h);
        free(done);
        return r;
}

/* One cycle; *more: it admitted or held something, so another may follow;
 * *evicted: it evicted preemption victims. */
static int cycle(dp_queue *q, bool *more, bool *evicted) {
        entry *e = NULL;
        size_t n = 0;
        q->cycles++;
        int r = nominate(q, &e, &n);
        int64_t *saved = r >= 0 ? q_usage_save(q) : NULL;
        if (r >= 0 && !saved) r = -ENOMEM;
        if (r >= 0 && n && !q->fair_sharing) qsort_r(e, n, sizeof(*e), cmp_entry, q);
        bool progress = false;
        gone g = {0};
        if (r >= 0 && q->fair_sharing) r = process_fair(q, e, n, &g, &progress);
        for (size_t i = 0; i < n && r >= 0 && !q->fair_sharing; i++)
                r = process(q, &e[i], &g, &progress);
        if (saved) { /* the snapshot's reservations go; the admissions stay */
                q_usage_restore(q, saved);
                for (size_t k = 0; k < n; k++)
                        for (size_t u = 0; e[k].admitted && u < e[k].a.n_usage; u++)
                                q_add_usage(q->cqs[q->wl[e[k].w].cq].node, e[k].a.usage[u].fr, e[k].a.usage[u].value);
        }
        /* the victims are evicted once the cycle is over */
        *evicted = false;
        for (size_t k = 0; k < n && r >= 0; k++)
                for (size_t t = 0; e[k].preempting && t < e[k].n_targets && r >= 0; t++) {
                        r = q_evict(q, e[k].targets[t].w, e[k].w, e[k].targets[t].reason);
                        *evicted = true;
                }
        for (size_t i = 0; i < n; i++) {
                q_assign_done(&e[i].a);
                free(e[i].targets);
        }
        free(g.v);
        free(e);
        free(saved);
        *more = progress;
        return r < 0 ? r : q_history_sample(q);
}

/* Workloads behind a blocked StrictFIFO head never got a cycle: say so,
 * in devplane's words (Kueue writes no condition for them). */
static int blocked_notes(dp_queue *q) {
        for (size_t c = 0; c < q->n_cqs; c++) {
                qcq *cq = &q->cqs[c];
                ssize_t h = cq->blocked ? head(q, cq) : -1;
                for (size_t k = cq->next + 1; h >= 0 && k < cq->n_wl; k++) {
                        dp_queue_workload *w = &q->wl[cq->wl[k]];
                        if (w->state != DP_QW_PENDING || w->message || w->note) continue;
                        w->note = dp_asprintf("behind %s/%s in StrictFIFO ClusterQueue %s, which cannot be admitted",
                                              q->wl[h].ns, q->wl[h].name, cq->cq->x.meta.name);
                        if (!w->note) return -ENOMEM;
                }
        }
        return 0;
}

int dp_queue_admit_cycles(dp_queue *q, size_t max_cycles, dp_error *err) {
        assert_return(q, -EINVAL);
        bool more = true, evicted = false;
        qloop loop = {0};
        int r = q->history ? 0 : q_history_sample(q); /* the first points, before any cycle (history.c) */
        /* each cycle admits, holds or preempts for at least one head; without
         * a preemption the cycles end (admissions and holds only add up);
         * with preemptions they end too unless the admission state recurs
         * (q_loop_check: a loop, proved); the bound is a safety net (per
         * call: dp_queue_readmit calls again after quota is released) */
        q->churning = false;
        for (size_t n = 0; more && r >= 0 && n < max_cycles && !q->churning && n <= 4 * (q->n_wl + 1); n++) {
                r = cycle(q, &more, &evicted);
                if (r >= 0 && evicted && more) r = q_loop_check(q, &loop);
        }
        q_loop_done(&loop);
        if (r >= 0) r = blocked_notes(q);
        for (size_t i = 0; i < q->n_wl; i++)
                for (size_t p = 0; p < q->wl[i].n_podsets; p++)
                        q->wl[i].podsets[p].tmpl = NULL; /* the templates belong to the input */
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

int dp_queue_admit(dp_queue *q, dp_error *err) { return dp_queue_admit_cycles(q, SIZE_MAX, err); }
