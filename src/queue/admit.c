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
 * (StrictFIFO): in a cluster where nothing finishes, neither changes.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

typedef struct entry {
        size_t w;
        qassign a;
        bool ns_mismatch;
        bool admitted;
} entry;

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

static ssize_t head(dp_queue *q, qcq *c) {
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

static bool preemption_configured(const dp_cluster_queue *cq) {
        const dp_kq_preemption *p = &cq->preemption;
        return (p->within_cluster_queue && !streq(p->within_cluster_queue, "Never")) ||
               (p->reclaim_within_cohort && !streq(p->reclaim_within_cohort, "Never"));
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

static bool fits(const qcq *c, const qassign *a) {
        for (size_t i = 0; i < a->n_usage; i++)
                if (q_available(c->node, a->usage[i].fr) < a->usage[i].value) return false;
        return true;
}

static int admit_one(dp_queue *q, qcq *c, dp_queue_workload *w, const qassign *a) {
        for (size_t i = 0; i < a->n_usage; i++)
                q_add_usage(c->node, a->usage[i].fr, a->usage[i].value);
        size_t off = 0;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++, off++) {
                        ssize_t fr = a->flavor_fr[off];
                        if (fr >= 0 && !(w->podsets[p].flavors[i] = strdup(q->fr[fr].flavor))) return -ENOMEM;
                }
        w->state = DP_QW_ADMITTED;
        w->borrowing = a->borrowing;
        w->cycle = q->cycles;
        free(w->reason);
        w->reason = strdup("Admitted");
        char msg[600];
        snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", c->cq->x.meta.name);
        return w->reason ? set_message(w, msg) : -ENOMEM;
}

/* A head that gets no admission this cycle and will not get one later. */
static int hold(dp_queue *q, qcq *c, entry *e) {
        dp_queue_workload *w = &q->wl[e->w];
        int r = set_message(w, e->ns_mismatch ? "workload namespace doesn't match ClusterQueue selector"
                                              : dp_strbuf_str(&e->a.message));
        if (r >= 0 && e->a.mode == QM_NO_CANDIDATES && preemption_configured(c->cq) && !w->note)
                w->note = dp_asprintf("Kueue would look for workloads to preempt here; devplane does not simulate "
                                      "preemption yet");
        if (e->a.mode == QM_NO_CANDIDATES) reserve(c, &e->a);
        if (c->cq->queueing == DP_KQ_STRICT_FIFO)
                c->blocked = true;
        else
                q->set_aside[e->w] = true;
        return r;
}

/* One entry, as processEntry takes it. *progress: admitted or held. */
static int process(dp_queue *q, entry *e, bool *progress) {
        dp_queue_workload *w = &q->wl[e->w];
        qcq *c = &q->cqs[w->cq];
        if (e->ns_mismatch || e->a.mode != QM_FIT) {
                *progress = true;
                return hold(q, c, e);
        }
        if (!fits(c, &e->a)) return set_message(w, "Workload no longer fits after processing another workload");
        e->admitted = true;
        *progress = true;
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
                if (h < 0) continue;
                entry *e = &v[n++];
                e->w = (size_t)h;
                e->a.message = (dp_strbuf)DP_STRBUF_INIT;
                e->ns_mismatch = !q->ns_ok[h];
                if (!e->ns_mismatch) r = q_assign(q, cq, &q->wl[h], &e->a);
        }
        *ret = v;
        *ret_n = n;
        return r;
}

/* One cycle; *more: it admitted or held something, so another may follow. */
static int cycle(dp_queue *q, bool *more) {
        entry *e = NULL;
        size_t n = 0;
        q->cycles++;
        int r = nominate(q, &e, &n);
        int64_t *saved = r >= 0 ? q_usage_save(q) : NULL;
        if (r >= 0 && !saved) r = -ENOMEM;
        if (r >= 0 && n) qsort_r(e, n, sizeof(*e), cmp_entry, q);
        bool progress = false;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = process(q, &e[i], &progress);
        if (saved) { /* the snapshot's reservations go; the admissions stay */
                q_usage_restore(q, saved);
                for (size_t k = 0; k < n; k++)
                        for (size_t u = 0; e[k].admitted && u < e[k].a.n_usage; u++)
                                q_add_usage(q->cqs[q->wl[e[k].w].cq].node, e[k].a.usage[u].fr, e[k].a.usage[u].value);
        }
        for (size_t i = 0; i < n; i++)
                q_assign_done(&e[i].a);
        free(e);
        free(saved);
        *more = progress;
        return r;
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
        bool more = true;
        int r = 0;
        /* each cycle admits or holds at least one head, so this ends (per
         * call: dp_queue_readmit calls again after quota is released) */
        for (size_t n = 0; more && r >= 0 && n < max_cycles && n <= q->n_wl + 1; n++)
                r = cycle(q, &more);
        if (r >= 0) r = blocked_notes(q);
        for (size_t i = 0; i < q->n_wl; i++)
                for (size_t p = 0; p < q->wl[i].n_podsets; p++)
                        q->wl[i].podsets[p].tmpl = NULL; /* the templates belong to the input */
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

int dp_queue_admit(dp_queue *q, dp_error *err) { return dp_queue_admit_cycles(q, SIZE_MAX, err); }
