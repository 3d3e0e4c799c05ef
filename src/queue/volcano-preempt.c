/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-preempt.c — Volcano's opt-in preempt action
 * (pkg/scheduler/actions/preempt/preempt.go) under the default tiers
 * (pkg/scheduler/util.go: priority, gang, conformance; then overcommit,
 * drf, predicates, proportion, nodeorder, every extension point enabled):
 *
 * - preemptors: jobs not Pending, valid (gang), of a known queue, starving
 *   (gang and priority: fewer allocated tasks than minMember); per queue in
 *   job order, their pending tasks in task order, while the job starves;
 *   a task of preemptionPolicy Never preempts nothing;
 * - candidates: running tasks of other jobs of the same queue that are
 *   preemptable (volcano.sh/preemptable, default true), none that is not
 *   BestEffort for a BestEffort preemptor;
 * - victims (Session.Preemptable): tier 1 votes plugin by plugin — priority
 *   (the victim's job of lower priority), gang (its job keeps more than
 *   minMember ready tasks, counted down victim by victim), conformance (no
 *   kube-system pod, no system-*-critical class); a plugin that finds none
 *   ends the tier with none, an empty intersection lets the next plugin
 *   start again; a tier with no victims hands over to tier 2, where DRF
 *   alone decides: the preemptor's job share with the task added must be
 *   below the victim's job share with the victim (and the victims before it
 *   in the same job) taken away, or equal within shareDelta 0.000001;
 * - the victims must free enough with what is idle (ValidateVictims); then
 *   they go, the latest in job order first (within a job the latest in task
 *   order), until the task is Allocatable in its queue and fits; it is then
 *   pipelined (devplane allocates it at once);
 * - the job's evictions are kept only when it ends up pipelined (as many
 *   allocated as minMember), else undone (statement discard).
 *
 * Volcano looks node by node; devplane looks at the cluster's free total as
 * one node (docs/queues-volcano.md). Volcano's second phase, preemption
 * between the tasks of one starving job, cannot evict under these tiers
 * (gang keeps a starving job's ready tasks, whose count is below its
 * minMember, and DRF never finds a job's own share higher without a task
 * than with one more) and is left out.
 */
#include <stdio.h>

#include "queue/volcano-internal.h"

#define VC_SHARE_DELTA 0.000001 /* drf.go shareDelta */

static bool starving(const dp_vc_job *j) { return j->n_allocated < (size_t)j->min_member; }

static bool has_pending(const dp_volcano *v, const dp_vc_job *j) {
        for (size_t k = 0; k < j->n_tasks; k++)
                if (vc_pending(&v->tasks[j->tasks[k]])) return true;
        return false;
}

static bool want_preemptor(vsess *s, const dp_vc_job *j) {
        return !s->tried[j - s->v->jobs] && j->phase != DP_VC_PENDING && j->n_tasks >= (size_t)j->min_member &&
               starving(j) && has_pending(s->v, j);
}

static bool best_effort(const dp_volcano *v, const vtask *t) {
        for (size_t d = 0; d < v->n_dims; d++)
                if (t->req[d] >= VC_EPS) return false;
        return true;
}

/* One victim search: the candidates (task indexes) and, per candidate,
 * whether it is a victim. */
typedef struct vpick {
        size_t *cand;
        size_t n;
        bool *in, *vote;
        size_t *ready; /* per job: gang's count of ready tasks left */
} vpick;

static void vote_priority(const dp_volcano *v, const vtask *t, vpick *p) {
        int32_t own = v->jobs[t->job].priority;
        for (size_t i = 0; i < p->n; i++)
                p->vote[i] = v->jobs[v->tasks[p->cand[i]].job].priority < own;
}

static void vote_gang(const dp_volcano *v, vpick *p) {
        for (size_t i = 0; i < p->n; i++)
                p->ready[v->tasks[p->cand[i]].job] = v->jobs[v->tasks[p->cand[i]].job].n_allocated;
        for (size_t i = 0; i < p->n; i++) {
                size_t j = (size_t)v->tasks[p->cand[i]].job;
                p->vote[i] = p->ready[j] > (size_t)DP_MAX(v->jobs[j].min_member, 0);
                if (p->vote[i]) p->ready[j]--;
        }
}

static void vote_conformance(const dp_volcano *v, vpick *p) {
        for (size_t i = 0; i < p->n; i++)
                p->vote[i] = !v->tasks[p->cand[i]].critical;
}

/* drf.go's preemptableFn; job_res is scratch (n_jobs × n_dims). */
static void vote_drf(const dp_volcano *v, const vtask *t, vpick *p, double *job_res, double *tmp) {
        vc_job_alloc(v, &v->jobs[t->job], tmp, NULL);
        for (size_t d = 0; d < v->n_dims; d++)
                tmp[d] += t->req[d];
        double ls = vc_drf_share(v, tmp);
        for (size_t i = 0; i < p->n; i++)
                p->ready[v->tasks[p->cand[i]].job] = 0; /* here: whether job_res holds the job yet */
        for (size_t i = 0; i < p->n; i++) {
                const vtask *u = &v->tasks[p->cand[i]];
                double *a = job_res + (size_t)u->job * v->n_dims;
                if (!p->ready[u->job]) vc_job_alloc(v, &v->jobs[u->job], a, NULL);
                p->ready[u->job] = 1;
                for (size_t d = 0; d < v->n_dims; d++)
                        a[d] -= u->req[d];
                double rs = vc_drf_share(v, a);
                p->vote[i] = ls < rs || fabs(ls - rs) <= VC_SHARE_DELTA;
        }
}

/* Fold one plugin's vote into the tier's victims (Session.Preemptable):
 * false when the plugin found none (the tier ends with none). */
static bool fold(vpick *p, bool *started) {
        bool any = false, kept = false;
        for (size_t i = 0; i < p->n; i++)
                any = any || p->vote[i];
        if (!any) {
                memset(p->in, 0, p->n * sizeof(bool));
                *started = false;
                return false;
        }
        for (size_t i = 0; i < p->n; i++) {
                p->in[i] = *started ? p->in[i] && p->vote[i] : p->vote[i];
                kept = kept || p->in[i];
        }
        *started = kept; /* an empty intersection: the next plugin starts again */
        return true;
}

static bool victims(const dp_volcano *v, const vtask *t, vpick *p, double *job_res, double *tmp) {
        bool started = false;
        vote_priority(v, t, p);
        if (fold(p, &started)) {
                vote_gang(v, p);
                if (fold(p, &started)) {
                        vote_conformance(v, p);
                        fold(p, &started);
                }
        }
        if (started) return true;
        vote_drf(v, t, p, job_res, tmp);
        started = false;
        return fold(p, &started) && started;
}

static bool candidate(const dp_volcano *v, const vtask *t, const vtask *u) {
        if (u->job < 0 || !u->allocated || u->evicted_for >= 0 || !u->preemptable || u->job == t->job) return false;
        if (v->jobs[u->job].q != v->jobs[t->job].q) return false;
        return !best_effort(v, t) || best_effort(v, u);
}

/* Victims go latest first: a later job in job order, within a job the
 * later task in task order. */
static int cmp_victim(const void *a, const void *b, void *userdata) {
        const dp_volcano *v = userdata;
        const vtask *x = &v->tasks[*(const size_t *)a], *y = &v->tasks[*(const size_t *)b];
        if (x->job != y->job) return -vc_cmp_job(v, &v->jobs[x->job], &v->jobs[y->job]);
        return -vc_cmp_task(a, b, userdata);
}

/* ValidateVictims: what is idle and what the victims hold cover the task. */
static bool victims_cover(vsess *s, const vtask *t, const vpick *p, double *tmp) {
        const dp_volcano *v = s->v;
        for (size_t d = 0; d < v->n_dims; d++)
                tmp[d] = v->total[d] - s->used[d];
        for (size_t i = 0; i < p->n; i++)
                for (size_t d = 0; p->in[i] && d < v->n_dims; d++)
                        tmp[d] += v->tasks[p->cand[i]].req[d];
        for (size_t d = 0; d < v->n_dims; d++)
                if (t->req[d] > 0 && !vc_le(t->req[d], tmp[d])) return false;
        return true;
}

typedef struct vstmt {
        size_t *evicted, *taken;
        size_t n_evicted, n_taken;
        size_t *qtasks, *qstart; /* the tasks by their job's queue: qtasks[qstart[q]..qstart[q + 1]) */
} vstmt;

/* One pending task of job j: evict what the tiers allow until it fits,
 * then take it. Whether it was taken. */
static bool preempt_task(vsess *s, size_t ti, vpick *p, vstmt *st, double *job_res, double *tmp) {
        dp_volcano *v = s->v;
        vtask *t = &v->tasks[ti];
        ssize_t q = v->jobs[t->job].q;
        if (t->never) return false;
        p->n = 0;
        for (size_t k = st->qstart[q]; k < st->qstart[q + 1]; k++)
                if (candidate(v, t, &v->tasks[st->qtasks[k]])) p->cand[p->n++] = st->qtasks[k];
        if (!p->n || !victims(v, t, p, job_res, tmp) || !victims_cover(s, t, p, tmp)) return false;
        size_t n = 0;
        for (size_t i = 0; i < p->n; i++)
                if (p->in[i]) p->cand[n++] = p->cand[i];
        qsort_r(p->cand, n, sizeof(size_t), cmp_victim, v);
        for (size_t i = 0; i < n && !vc_task_fits(s, q, t); i++) {
                vtask *u = &v->tasks[p->cand[i]];
                vc_evict(s, u, t->job, 1);
                u->by_preempt = true;
                st->evicted[st->n_evicted++] = p->cand[i];
        }
        if (!vc_task_fits(s, q, t)) return false;
        vc_take_task(s, t, q, 1);
        st->taken[st->n_taken++] = ti;
        return true;
}

static void discard(vsess *s, vstmt *st) {
        for (size_t k = st->n_taken; k-- > 0;)
                vc_take_task(s, &s->v->tasks[st->taken[k]], s->v->jobs[s->v->tasks[st->taken[k]].job].q, -1);
        for (size_t k = st->n_evicted; k-- > 0;) {
                vtask *u = &s->v->tasks[st->evicted[k]];
                vc_evict(s, u, -1, -1);
                u->by_preempt = false;
        }
}

static int commit(vsess *s, dp_vc_job *j, const vstmt *st) {
        dp_volcano *v = s->v;
        for (size_t k = 0; k < st->n_evicted; k++) { /* a victim's group below minMember waits again */
                dp_vc_job *vj = &v->jobs[v->tasks[st->evicted[k]].job];
                if (vj->n_allocated < (size_t)DP_MAX(vj->min_member, 1)) vj->phase = DP_VC_INQUEUE;
        }
        if (j->phase != DP_VC_RUNNING) j->session = v->sessions;
        j->phase = DP_VC_RUNNING;
        s->changed = true;
        if (vc_set_words(j, NULL, NULL) < 0) return -ENOMEM;
        return vc_set_note(j, dp_asprintf("Running after preempt evicted %zu pod(s) of lower-priority jobs in queue %s",
                                          st->n_evicted, j->queue));
}

/* One preemptor job: its pending tasks in task order while it starves;
 * kept when it is pipelined (allocated >= minMember), else discarded. */
static int preempt_job(vsess *s, dp_vc_job *j, vpick *p, vstmt *st, double *job_res, double *tmp) {
        dp_volcano *v = s->v;
        _cleanup_free_ size_t *order = calloc(j->n_tasks + 1, sizeof(size_t));
        if (!order) return -ENOMEM;
        memcpy(order, j->tasks, j->n_tasks * sizeof(size_t));
        qsort_r(order, j->n_tasks, sizeof(size_t), vc_cmp_task, v);
        st->n_evicted = st->n_taken = 0;
        for (size_t k = 0; k < j->n_tasks && starving(j); k++) {
                const vtask *t = &v->tasks[order[k]];
                if (vc_pending(t)) preempt_task(s, order[k], p, st, job_res, tmp);
        }
        if (starving(j) || !st->n_taken) {
                discard(s, st);
                return 0;
        }
        return commit(s, j, st);
}

/* Counting sort of the tasks by their job's queue (those of no queue left
 * out), in task order within a queue. */
static int by_queue(const dp_volcano *v, vstmt *st) {
        if (!(st->qtasks = calloc(v->n_tasks + 1, sizeof(size_t))) ||
            !(st->qstart = calloc(v->n_qs + 2, sizeof(size_t))))
                return -ENOMEM;
        for (size_t i = 0; i < v->n_tasks; i++)
                if (v->tasks[i].job >= 0 && v->jobs[v->tasks[i].job].q >= 0)
                        st->qstart[v->jobs[v->tasks[i].job].q + 2]++;
        for (size_t q = 0; q < v->n_qs; q++)
                st->qstart[q + 2] += st->qstart[q + 1];
        for (size_t i = 0; i < v->n_tasks; i++)
                if (v->tasks[i].job >= 0 && v->jobs[v->tasks[i].job].q >= 0)
                        st->qtasks[st->qstart[v->jobs[v->tasks[i].job].q + 1]++] = i;
        return 0;
}

int vc_preempt(vsess *s) {
        dp_volcano *v = s->v;
        vpick p = {0};
        vstmt st = {0};
        p.cand = calloc(v->n_tasks + 1, sizeof(size_t));
        p.in = calloc(v->n_tasks + 1, sizeof(bool));
        p.vote = calloc(v->n_tasks + 1, sizeof(bool));
        p.ready = calloc(v->n_jobs + 1, sizeof(size_t));
        st.evicted = calloc(v->n_tasks + 1, sizeof(size_t));
        st.taken = calloc(v->n_tasks + 1, sizeof(size_t));
        double *job_res = calloc(v->n_jobs * v->n_dims + 1, sizeof(double)), *tmp = vc_vec_new(v);
        int r = p.cand && p.in && p.vote && p.ready && st.evicted && st.taken && job_res && tmp ? by_queue(v, &st)
                                                                                                : -ENOMEM;
        memset(s->tried, 0, v->n_jobs * sizeof(bool));
        /* queues in name order (Volcano walks a Go map: any order) */
        for (size_t q = 0; r >= 0 && q < v->n_qs; q++)
                for (ssize_t j; r >= 0 && (j = vc_best_job(s, q, want_preemptor)) >= 0;) {
                        s->tried[j] = true;
                        r = preempt_job(s, &v->jobs[j], &p, &st, job_res, tmp);
                }
        dp_free_many(p.cand, p.in, p.vote, p.ready, st.evicted, st.taken, st.qtasks, st.qstart, job_res, tmp);
        return r;
}
