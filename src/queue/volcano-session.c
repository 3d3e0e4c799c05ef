/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-session.c — one Volcano session over the jobs as they stand:
 * the queues' attributes (allocated, request, inqueue, elastic), the
 * plugin's deserved share (proportion: realCapability and the water-filling
 * loop by weight; capacity: per-resource deserved, hierarchical capability),
 * then the enqueue action (Pending -> Inqueue when JobEnqueueable permits)
 * and the allocate action (queues by priority then share, jobs by priority,
 * gang readiness, DRF share, creation; gang all-or-nothing by minMember;
 * dequeueStrategy fifo or traverse). Facts: ../shared/reference/
 * queues-and-preemption.md §2 and Volcano's plugins (docs/queues-volcano.md).
 */
#include <math.h>
#include <stdio.h>

#include "queue/volcano-internal.h"

/* Volcano's overcommit plugin (in its default configuration, beside
 * proportion): Inqueue jobs may ask for up to this factor of the cluster. */
#define VC_OVERCOMMIT_FACTOR 1.2

/* The dimensions a queue's share and overuse look at: cpu, memory and
 * the resources the cluster or its deserved has (api.Resource's keys). */
static bool present(const dp_volcano *v, const dp_vc_queue_info *q, size_t d) {
        return d < 2 || v->total[d] > 0 || q->deserved[d] > 0;
}

void vc_job_alloc(const dp_volcano *v, const dp_vc_job *j, double *out, size_t *ret_n) {
        memset(out, 0, v->n_dims * sizeof(double));
        size_t n = 0;
        for (size_t k = 0; k < j->n_tasks; k++) {
                const vtask *t = &v->tasks[j->tasks[k]];
                if (!t->allocated) continue;
                n++;
                for (size_t d = 0; d < v->n_dims; d++)
                        out[d] += t->req[d];
        }
        if (ret_n) *ret_n = n;
}

double vc_drf_share(const dp_volcano *v, const double *alloc) {
        double s = 0;
        for (size_t d = 0; d < v->n_dims; d++)
                if (v->total[d] > 0) s = fmax(s, alloc[d] / v->total[d]);
        return s;
}

/* The capacity plugin's parent of queue i (-1 none); proportion is flat. */
ssize_t vc_parent_of(const dp_volcano *v, size_t i) {
        const dp_vc_queue *q = v->qs[i].queue;
        if (v->opts.plugin != DP_VC_CAPACITY || !q || !q->parent) return -1;
        return vc_queue_index(v, q->parent);
}

/* Add x to field `off` (a vector of dp_vc_queue_info) of queue i and, under
 * the capacity plugin, of its ancestors (a parent's usage is its children's). */
static void add_up(dp_volcano *v, size_t i, size_t off, const double *x, double sign) {
        for (size_t hops = 0; hops <= v->n_qs; hops++) {
                double *dst = *(double **)((char *)&v->qs[i] + off);
                for (size_t d = 0; d < v->n_dims; d++)
                        dst[d] += sign * x[d];
                v->qs[i].active = true;
                ssize_t p = vc_parent_of(v, i);
                if (p < 0) return;
                i = (size_t)p;
        }
}

#define QOFF(field) offsetof(dp_vc_queue_info, field)

static void job_attributes(vsess *s, dp_vc_job *j, double *ja, double *tmp) {
        dp_volcano *v = s->v;
        size_t n_alloc = 0;
        vc_job_alloc(v, j, ja, &n_alloc);
        j->n_allocated = n_alloc;
        j->drf_share = vc_drf_share(v, ja);
        if (j->q < 0) return;
        size_t q = (size_t)j->q;
        for (size_t k = 0; k < j->n_tasks; k++)
                if (v->tasks[j->tasks[k]].allocated) vc_dra_take(v, &v->tasks[j->tasks[k]], q, 1);
        if (j->phase == DP_VC_INQUEUE) vc_dra_inqueue(v, j);
        add_up(v, q, QOFF(allocated), ja, 1);
        add_up(v, q, QOFF(request), ja, 1);
        for (size_t k = 0; k < j->n_tasks; k++) {
                const vtask *t = &v->tasks[j->tasks[k]];
                if (vc_pending(t)) add_up(v, q, QOFF(request), t->req, 1);
        }
        if (j->phase == DP_VC_INQUEUE && j->has_min_resources) add_up(v, q, QOFF(inqueue), j->min_res, 1);
        /* a running job still holds, as inqueue, what of its minResources it has not got yet */
        if (j->phase == DP_VC_RUNNING && j->has_min_resources && n_alloc >= (size_t)j->min_member) {
                for (size_t d = 0; d < v->n_dims; d++)
                        tmp[d] = fmax(j->min_res[d] - ja[d], 0);
                add_up(v, q, QOFF(inqueue), tmp, 1);
        }
        /* elastic: what it holds beyond its minResources */
        bool beyond = false;
        for (size_t d = 0; d < v->n_dims; d++)
                beyond = beyond || !vc_le(ja[d], j->min_res[d]);
        for (size_t d = 0; beyond && d < v->n_dims; d++)
                s->elastic[q * v->n_dims + d] += fmax(ja[d] - j->min_res[d], 0);
}

static int attributes(vsess *s) {
        dp_volcano *v = s->v;
        for (size_t i = 0; i < v->n_qs; i++) {
                dp_vc_queue_info *q = &v->qs[i];
                q->active = false;
                for (size_t d = 0; d < v->n_dims; d++)
                        q->deserved[d] = q->allocated[d] = q->request[d] = q->inqueue[d] = q->real_capability[d] = 0;
        }
        _cleanup_free_ double *ja = vc_vec_new(v), *tmp = vc_vec_new(v);
        if (!ja || !tmp) return -ENOMEM;
        vc_dra_reset(v);
        for (size_t j = 0; j < v->n_jobs; j++)
                job_attributes(s, &v->jobs[j], ja, tmp);
        return 0;
}

/* realCapability = (total − Σ guarantee) + own guarantee, then the minimum
 * with capability per named resource (proportion: a capability without cpu
 * or memory, or with 0, leaves that one unlimited); capacity: with the
 * parent's too. */
static void real_capability(dp_volcano *v, size_t i, const double *total_guarantee, double *cap, size_t depth) {
        dp_vc_queue_info *q = &v->qs[i];
        for (size_t d = 0; d < v->n_dims; d++) {
                q->real_capability[d] = fmax(v->total[d] - total_guarantee[d], 0) + q->guarantee[d];
                cap[d] = INFINITY;
        }
        if (q->queue) vc_vec_from(v, q->queue->capability, q->queue->n_capability, cap);
        for (size_t d = 0; d < v->n_dims; d++)
                if (!(v->opts.plugin == DP_VC_PROPORTION && d < 2 && cap[d] <= 0))
                        q->real_capability[d] = fmin(q->real_capability[d], cap[d]);
        ssize_t p = vc_parent_of(v, i);
        if (p < 0 || depth > v->n_qs) return;
        real_capability(v, (size_t)p, total_guarantee, cap, depth + 1);
        for (size_t d = 0; d < v->n_dims; d++)
                v->qs[i].real_capability[d] = fmin(v->qs[i].real_capability[d], v->qs[p].real_capability[d]);
}

static bool vec_empty(const dp_volcano *v, const double *x) {
        for (size_t d = 0; d < v->n_dims; d++)
                if (x[d] >= VC_EPS) return false;
        return true;
}

/* One queue's step of the water-filling loop; returns whether it is met. */
static bool fill_one(dp_volcano *v, dp_vc_queue_info *q, const double *remaining, double ratio, double *inc,
                     double *dec, double *old) {
        memcpy(old, q->deserved, v->n_dims * sizeof(double));
        bool same = true, met = true;
        for (size_t d = 0; d < v->n_dims; d++) {
                double x = q->deserved[d] + remaining[d] * ratio;
                x = fmin(x, q->real_capability[d]);
                x = fmin(x, q->request[d]);
                q->deserved[d] = x;
                same = same && x == old[d];
                met = met && vc_le(q->request[d], x);
        }
        for (size_t d = 0; d < v->n_dims; d++) {
                q->deserved[d] = fmax(q->deserved[d], q->guarantee[d]);
                inc[d] += fmax(q->deserved[d] - old[d], 0);
                dec[d] += fmax(old[d] - q->deserved[d], 0);
        }
        return met || same;
}

/* proportion: deserved by weight, water-filling: each unmet queue gets
 * remaining × weight / Σ weight(unmet), clamped by realCapability and its
 * request, raised to its guarantee; a queue whose request is met or whose
 * deserved stopped changing leaves; until nothing remains or it stops moving. */
static int proportion(dp_volcano *v) {
        _cleanup_free_ double *remaining = vc_vec_new(v), *old_rem = vc_vec_new(v), *inc = vc_vec_new(v);
        _cleanup_free_ double *dec = vc_vec_new(v), *old = vc_vec_new(v);
        _cleanup_free_ bool *met = calloc(v->n_qs + 1, sizeof(bool));
        if (!remaining || !old_rem || !inc || !dec || !old || !met) return -ENOMEM;
        memcpy(remaining, v->total, v->n_dims * sizeof(double));
        for (size_t i = 0; i < v->n_qs; i++)
                met[i] = !v->qs[i].active;
        for (size_t round = 0; round < 64 * (v->n_qs + 1); round++) {
                double w = 0;
                for (size_t i = 0; i < v->n_qs; i++)
                        if (!met[i]) w += v->qs[i].queue ? v->qs[i].queue->weight : 1;
                if (w == 0) break;
                memcpy(old_rem, remaining, v->n_dims * sizeof(double));
                memset(inc, 0, v->n_dims * sizeof(double));
                memset(dec, 0, v->n_dims * sizeof(double));
                for (size_t i = 0; i < v->n_qs; i++)
                        if (!met[i])
                                met[i] = fill_one(v, &v->qs[i], old_rem,
                                                  (v->qs[i].queue ? v->qs[i].queue->weight : 1) / w, inc, dec, old);
                bool same = true;
                for (size_t d = 0; d < v->n_dims; d++) {
                        remaining[d] = remaining[d] - inc[d] + dec[d];
                        same = same && remaining[d] == old_rem[d];
                }
                if (vec_empty(v, remaining) || same) break;
        }
        return 0;
}

/* capacity: deserved as written per resource, within realCapability, at
 * least the guarantee. */
static void capacity(dp_volcano *v) {
        for (size_t i = 0; i < v->n_qs; i++) {
                dp_vc_queue_info *q = &v->qs[i];
                if (q->queue) vc_vec_from(v, q->queue->deserved, q->queue->n_deserved, q->deserved);
                for (size_t d = 0; d < v->n_dims; d++)
                        q->deserved[d] = fmax(fmin(q->deserved[d], q->real_capability[d]), q->guarantee[d]);
        }
}

static void share_of(dp_volcano *v, dp_vc_queue_info *q) {
        q->share = 0;
        q->overused = true;
        for (size_t d = 0; d < v->n_dims; d++) {
                if (!present(v, q, d)) continue;
                double s = q->deserved[d] > 0 ? q->allocated[d] / q->deserved[d] : (q->allocated[d] > 0 ? 1 : 0);
                q->share = fmax(q->share, s);
                q->overused = q->overused && vc_le(q->deserved[d], q->allocated[d]);
        }
}

static int plugin(dp_volcano *v) {
        _cleanup_free_ double *tg = vc_vec_new(v), *cap = vc_vec_new(v);
        if (!tg || !cap) return -ENOMEM;
        for (size_t i = 0; i < v->n_qs; i++)
                for (size_t d = 0; d < v->n_dims; d++)
                        tg[d] += v->qs[i].guarantee[d];
        for (size_t i = 0; i < v->n_qs; i++)
                real_capability(v, i, tg, cap, 0);
        int r = 0;
        if (v->opts.plugin == DP_VC_CAPACITY)
                capacity(v);
        else
                r = proportion(v);
        for (size_t i = 0; i < v->n_qs; i++)
                share_of(v, &v->qs[i]);
        return r;
}

/* ---- orders ---- */

/* Queue order: spec.priority (higher first), then share (lower first). */
static int cmp_queue(const dp_volcano *v, size_t a, size_t b) {
        const dp_vc_queue_info *x = &v->qs[a], *y = &v->qs[b];
        int32_t px = x->queue ? x->queue->priority : 0, py = y->queue ? y->queue->priority : 0;
        if (px != py) return px > py ? -1 : 1;
        if (x->share != y->share) return x->share < y->share ? -1 : 1;
        return a < b ? -1 : a > b;
}

static bool vc_job_ready(const dp_vc_job *j) { return j->n_allocated >= (size_t)DP_MAX(j->min_member, 1); }

/* Job order: priority (higher first), gang (not ready first), DRF share
 * (lower first), creation, input order. */
int vc_cmp_job(const dp_volcano *v, const dp_vc_job *x, const dp_vc_job *y) {
        if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
        bool rx = vc_job_ready(x), ry = vc_job_ready(y);
        if (rx != ry) return rx ? 1 : -1;
        if (fabs(x->drf_share - y->drf_share) > 1e-12) return x->drf_share < y->drf_share ? -1 : 1;
        if (x->created && y->created && !streq(x->created, y->created)) return strcmp(x->created, y->created);
        return x->order < y->order ? -1 : x->order > y->order;
}

/* The first job of queue q in job order that `want` accepts, -1 none. */
ssize_t vc_best_job(vsess *s, size_t q, bool (*want)(vsess *, const dp_vc_job *)) {
        dp_volcano *v = s->v;
        ssize_t best = -1;
        for (size_t k = s->qstart[q]; k < s->qstart[q + 1]; k++) {
                size_t j = s->qjobs[k];
                if (want(s, &v->jobs[j]) && (best < 0 || vc_cmp_job(v, &v->jobs[j], &v->jobs[best]) < 0))
                        best = (ssize_t)j;
        }
        return best;
}

/* The first queue in queue order with a job `want` accepts, -1 none. */
static ssize_t best_queue(vsess *s, bool (*want)(vsess *, const dp_vc_job *)) {
        dp_volcano *v = s->v;
        ssize_t best = -1;
        for (size_t q = 0; q < v->n_qs; q++)
                if (!s->closed[q] && (best < 0 || cmp_queue(v, q, (size_t)best) < 0) && vc_best_job(s, q, want) >= 0)
                        best = (ssize_t)q;
        return best;
}

int vc_set_words(dp_vc_job *j, const char *reason, const char *message) {
        free(j->reason);
        free(j->message);
        j->reason = reason ? dp_strdup(reason) : NULL;
        j->message = message ? dp_strdup(message) : NULL;
        return (reason && !j->reason) || (message && !j->message) ? -ENOMEM : 0;
}

int vc_set_note(dp_vc_job *j, char *note) {
        if (!note) return -ENOMEM;
        free(j->note);
        j->note = note;
        return 0;
}

/* ---- enqueue ---- */

static bool want_enqueue(vsess *s, const dp_vc_job *j) {
        return j->phase == DP_VC_PENDING && !s->tried[j - s->v->jobs];
}

/* overcommit's JobEnqueueable: Inqueue jobs' minResources within the
 * cluster × 1.2 less what is in use. */
static bool overcommit_permits(vsess *s, const dp_vc_job *j) {
        dp_volcano *v = s->v;
        for (size_t d = 0; d < v->n_dims; d++) /* only the resources it asks for */
                if (j->min_res[d] > 0 &&
                    !vc_le(s->oc_inqueue[d] + j->min_res[d], v->total[d] * VC_OVERCOMMIT_FACTOR - s->used[d]))
                        return false;
        for (size_t d = 0; d < v->n_dims; d++)
                s->oc_inqueue[d] += j->min_res[d];
        return true;
}

/* proportion's (and capacity's) JobEnqueueable: minResources + allocated +
 * inqueue − elastic within realCapability; capacity compares only the
 * resources the job asks for, at its queue and every ancestor. */
static bool quota_permits(vsess *s, const dp_vc_job *j) {
        dp_volcano *v = s->v;
        bool cap = v->opts.plugin == DP_VC_CAPACITY;
        ssize_t q = j->q;
        for (size_t hops = 0; q >= 0 && hops <= v->n_qs; hops++) {
                const dp_vc_queue_info *qi = &v->qs[q];
                for (size_t d = 0; d < v->n_dims; d++) {
                        if (cap && j->min_res[d] <= 0) continue;
                        double x = j->min_res[d] + qi->allocated[d] + qi->inqueue[d] -
                                   s->elastic[(size_t)q * v->n_dims + d];
                        if (!vc_le(x, qi->real_capability[d])) return false;
                }
                q = vc_parent_of(v, (size_t)q);
        }
        return true;
}

static int enqueue_one(vsess *s, dp_vc_job *j) {
        dp_volcano *v = s->v;
        const dp_vc_queue_info *qi = &v->qs[j->q];
        if (qi->queue && qi->queue->state && !streq(qi->queue->state, "Open"))
                return vc_set_note(j, dp_asprintf("queue %s is %s (status.state): Volcano enqueues no job into it",
                                                  qi->name, qi->queue->state));
        if (j->has_min_resources) {
                if (v->opts.plugin == DP_VC_PROPORTION && !overcommit_permits(s, j))
                        return vc_set_words(j, "Unschedulable", "resource in cluster is overused");
                if (!quota_permits(s, j)) return vc_set_words(j, "Unschedulable", "queue resource quota insufficient");
        }
        /* capacity's DRA quota, minResources or not (volcano-dra.c) */
        if (!vc_dra_enqueue(v, j)) return vc_set_words(j, "Unschedulable", "queue resource quota insufficient");
        if (j->has_min_resources) add_up(v, (size_t)j->q, QOFF(inqueue), j->min_res, 1);
        j->phase = DP_VC_INQUEUE;
        s->changed = true;
        return vc_set_words(j, NULL, NULL);
}

/* Queues in order, one job each in turn (the action pushes a queue back
 * after each of its jobs), every Pending job tried once. */
static int enqueue(vsess *s) {
        dp_volcano *v = s->v;
        memset(s->tried, 0, v->n_jobs * sizeof(bool));
        for (;;) {
                ssize_t q = best_queue(s, want_enqueue);
                if (q < 0) return 0;
                ssize_t j = vc_best_job(s, (size_t)q, want_enqueue);
                s->tried[j] = true;
                int r = enqueue_one(s, &v->jobs[j]);
                if (r < 0) return r;
        }
}

/* ---- allocate ---- */

static bool want_allocate(vsess *s, const dp_vc_job *j) {
        if (s->tried[j - s->v->jobs] || j->phase == DP_VC_PENDING) return false;
        for (size_t k = 0; k < j->n_tasks; k++)
                if (vc_pending(&s->v->tasks[j->tasks[k]])) return true;
        return false;
}

/* The queue's Allocatable (proportion: the request within deserved −
 * allocated; capacity: allocated + request within realCapability on the
 * resources it asks for, up the hierarchy) and room in the cluster. */
bool vc_task_fits(vsess *s, ssize_t q, const vtask *t) {
        dp_volcano *v = s->v;
        const double *req = t->req;
        for (size_t d = 0; d < v->n_dims; d++)
                if (req[d] > 0 && !vc_le(req[d], v->total[d] - s->used[d])) return false;
        if (v->opts.plugin == DP_VC_PROPORTION) {
                for (size_t d = 0; d < v->n_dims; d++)
                        if (!vc_le(req[d], fmax(v->qs[q].deserved[d] - v->qs[q].allocated[d], 0))) return false;
                return true;
        }
        for (ssize_t a = q, hops = 0; a >= 0 && hops <= (ssize_t)v->n_qs; hops++) {
                for (size_t d = 0; d < v->n_dims; d++)
                        if (req[d] > 0 && !vc_le(v->qs[a].allocated[d] + req[d], v->qs[a].real_capability[d]))
                                return false;
                a = vc_parent_of(v, (size_t)a);
        }
        return vc_dra_fits(v, t, (size_t)q);
}

int vc_cmp_task(const void *a, const void *b, void *userdata) {
        const dp_volcano *v = userdata;
        const vtask *x = &v->tasks[*(const size_t *)a], *y = &v->tasks[*(const size_t *)b];
        if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

void vc_take_task(vsess *s, vtask *t, ssize_t q, double sign) {
        dp_volcano *v = s->v;
        t->allocated = sign > 0;
        if (sign > 0)
                v->jobs[t->job].n_allocated++;
        else
                v->jobs[t->job].n_allocated--;
        add_up(v, (size_t)q, QOFF(allocated), t->req, sign);
        vc_dra_take(v, t, (size_t)q, sign > 0 ? 1 : -1);
        for (size_t d = 0; d < v->n_dims; d++)
                s->used[d] += sign * t->req[d];
        share_of(v, &v->qs[q]);
}

/* Gang: the job's pending tasks in task order while they fit; ready (as
 * many allocated as minMember) keeps them, else the statement is discarded. */
/* gang's words for a job left unready: its pending tasks of all, then the
 * tasks by status ("2 Pending", "1 Running", sorted as strings) and
 * minAvailable (JobInfo.FitError). */
static const char *gang_message(const dp_vc_job *j, size_t running, char *buf, size_t size) {
        char a[32] = "", b[32] = "";
        size_t pending = j->n_tasks - running;
        if (pending) snprintf(a, sizeof(a), "%zu Pending, ", pending);
        if (running) snprintf(b, sizeof(b), "%zu Running, ", running);
        bool swap = a[0] && b[0] && strcmp(b, a) < 0;
        snprintf(buf, size, "%zu/%zu tasks in gang unschedulable: pod group is not ready, %s%s%d minAvailable", pending,
                 j->n_tasks, swap ? b : a, swap ? a : b, j->min_member);
        return buf;
}

static int allocate_job(vsess *s, dp_vc_job *j) {
        dp_volcano *v = s->v;
        char msg[200];
        if (j->n_tasks < (size_t)j->min_member) {
                snprintf(msg, sizeof(msg), "Not enough valid tasks for gang-scheduling, valid: %zu, min: %d",
                         j->n_tasks, j->min_member);
                return vc_set_words(j, "NotEnoughTasks", msg);
        }
        _cleanup_free_ size_t *order = calloc(j->n_tasks + 1, sizeof(size_t)),
                              *taken = calloc(j->n_tasks + 1, sizeof(size_t));
        if (!order || !taken) return -ENOMEM;
        memcpy(order, j->tasks, j->n_tasks * sizeof(size_t));
        qsort_r(order, j->n_tasks, sizeof(size_t), vc_cmp_task, v);
        size_t n_taken = 0, before = 0;
        for (size_t k = 0; k < j->n_tasks; k++) {
                vtask *t = &v->tasks[order[k]];
                if (t->allocated) {
                        before++;
                        continue;
                }
                if (!vc_pending(t)) continue; /* gone: Volcano's controller would make a new pod */
                if (!vc_task_fits(s, j->q, t)) break;
                vc_take_task(s, t, j->q, 1);
                taken[n_taken++] = order[k];
        }
        if (before + n_taken >= (size_t)DP_MAX(j->min_member, 1)) {
                if (n_taken) s->changed = true;
                if (j->phase != DP_VC_RUNNING) j->session = v->sessions;
                j->phase = DP_VC_RUNNING;
                return vc_set_words(j, NULL, NULL);
        }
        for (size_t k = n_taken; k-- > 0;)
                vc_take_task(s, &v->tasks[taken[k]], j->q, -1);
        return vc_set_words(j, "NotEnoughResources", gang_message(j, before, msg, sizeof(msg)));
}

/* The jobs a fifo head (fifo_head[q] >= 0) or their queue's overuse (-2)
 * kept back this session get a note saying so. */
static int fifo_notes(vsess *s) {
        dp_volcano *v = s->v;
        for (size_t j = 0; j < v->n_jobs; j++) {
                dp_vc_job *job = &v->jobs[j];
                if (job->q < 0 || s->fifo_head[job->q] == -1 || !want_allocate(s, job)) continue;
                if (s->fifo_head[job->q] == -2) {
                        if (vc_set_note(job,
                                        dp_asprintf("queue %s is overused (deserved <= allocated): Volcano's allocate "
                                                    "skips it",
                                                    job->queue)) < 0)
                                return -ENOMEM;
                        continue;
                }
                const dp_vc_job *h = &v->jobs[s->fifo_head[job->q]];
                if (vc_set_note(job,
                                dp_asprintf("behind %s/%s, the head of fifo queue %s that cannot be allocated: not "
                                            "tried (dequeueStrategy fifo)",
                                            h->ns, h->name, job->queue)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int allocate(vsess *s) {
        dp_volcano *v = s->v;
        memset(s->tried, 0, v->n_jobs * sizeof(bool));
        memset(s->closed, 0, v->n_qs * sizeof(bool));
        for (size_t q = 0; q < v->n_qs; q++)
                s->fifo_head[q] = -1;
        for (;;) {
                ssize_t q = best_queue(s, want_allocate);
                if (q < 0) return fifo_notes(s);
                if (v->qs[q].overused) { /* Overused: the queue takes nothing more this session */
                        s->closed[q] = true;
                        s->fifo_head[q] = -2;
                        continue;
                }
                ssize_t j = vc_best_job(s, (size_t)q, want_allocate);
                s->tried[j] = true;
                dp_vc_job *job = &v->jobs[j];
                int r = allocate_job(s, job);
                if (r < 0) return r;
                job->drf_share = 0;
                _cleanup_free_ double *ja = vc_vec_new(v);
                if (!ja) return -ENOMEM;
                vc_job_alloc(v, job, ja, NULL);
                job->drf_share = vc_drf_share(v, ja);
                /* fifo: a head that cannot go blocks the jobs behind it */
                if (job->phase != DP_VC_RUNNING && v->qs[q].queue && v->qs[q].queue->fifo) {
                        s->closed[q] = true;
                        s->fifo_head[q] = j;
                }
        }
}

/* ---- reclaim (opt-in) ---- */

static bool want_reclaim(vsess *s, const dp_vc_job *j) {
        return j->phase == DP_VC_INQUEUE && !s->tried[j - s->v->jobs];
}

/* What the job still needs to be ready: its first pending tasks in task
 * order up to minMember. */
static void reclaim_need(const dp_volcano *v, const dp_vc_job *j, double *need) {
        memset(need, 0, v->n_dims * sizeof(double));
        size_t missing = (size_t)DP_MAX(j->min_member, 1) - DP_MIN(j->n_allocated, (size_t)DP_MAX(j->min_member, 1));
        for (size_t k = 0; k < j->n_tasks && missing; k++) {
                const vtask *t = &v->tasks[j->tasks[k]];
                if (!vc_pending(t)) continue;
                for (size_t d = 0; d < v->n_dims; d++)
                        need[d] += t->req[d];
                missing--;
        }
}

bool vc_fits_free(vsess *s, const double *need) {
        for (size_t d = 0; d < s->v->n_dims; d++)
                if (need[d] > 0 && !vc_le(need[d], s->v->total[d] - s->used[d])) return false;
        return true;
}

/* A running task another queue may lose: preemptable (volcano.sh/preemptable),
 * not kube-system's or critical (conformance), its queue is reclaimable and holds
 * more than its deserved on some resource (proportion's Reclaimable; capacity
 * keeps the guarantee), and gang lets its job lose one (minAvailable 1, or
 * more ready than minAvailable). */
static bool victim_ok(vsess *s, size_t own_q, const vtask *t) {
        dp_volcano *v = s->v;
        if (t->job < 0) return false;                     /* a pod naming a PodGroup not in the input: no one's */
        if (!t->preemptable || t->critical) return false; /* reclaim.go's filter; conformance */
        const dp_vc_job *j = &v->jobs[t->job];
        if (!t->allocated || j->q < 0 || (size_t)j->q == own_q) return false;
        const dp_vc_queue_info *q = &v->qs[j->q];
        if (q->queue && !q->queue->reclaimable) return false;
        if (!(j->min_member <= 1 || (size_t)j->min_member + 1 <= j->n_allocated)) return false;
        bool over = false;
        for (size_t d = 0; d < v->n_dims; d++) {
                over = over || !vc_le(q->allocated[d], q->deserved[d]);
                if (v->opts.plugin == DP_VC_CAPACITY && t->req[d] > 0 &&
                    q->allocated[d] - t->req[d] < q->guarantee[d] - VC_EPS)
                        return false;
        }
        return over;
}

/* Victims in order: lower priority first, then the later pod. */
static ssize_t next_victim(vsess *s, size_t own_q) {
        dp_volcano *v = s->v;
        ssize_t best = -1;
        for (size_t i = 0; i < v->n_tasks; i++) {
                const vtask *t = &v->tasks[i];
                if (!victim_ok(s, own_q, t)) continue;
                if (best < 0 || t->priority < v->tasks[best].priority ||
                    (t->priority == v->tasks[best].priority && t->order > v->tasks[best].order))
                        best = (ssize_t)i;
        }
        return best;
}

void vc_evict(vsess *s, vtask *t, ssize_t for_job, double sign) {
        ssize_t q = s->v->jobs[t->job].q;
        vc_take_task(s, t, q, -sign);
        t->evicted_for = sign > 0 ? for_job : -1;
}

/* Evict until the job's need fits the cluster, then allocate it; all or
 * nothing (a job that still cannot run gets its victims back). */
static int reclaim_job(vsess *s, dp_vc_job *j, double *need) {
        dp_volcano *v = s->v;
        const dp_vc_queue_info *own = &v->qs[j->q];
        reclaim_need(v, j, need);
        for (size_t d = 0; d < v->n_dims; d++) /* a queue at its deserved cannot reclaim */
                if (need[d] > 0 && !vc_le(own->allocated[d] + need[d], own->deserved[d])) return 0;
        _cleanup_free_ size_t *taken = calloc(v->n_tasks + 1, sizeof(size_t));
        if (!taken) return -ENOMEM;
        size_t n = 0;
        ssize_t victim;
        while (!vc_fits_free(s, need) && (victim = next_victim(s, (size_t)j->q)) >= 0) {
                vc_evict(s, &v->tasks[victim], j - v->jobs, 1);
                taken[n++] = (size_t)victim;
        }
        int r = vc_fits_free(s, need) && n ? allocate_job(s, j) : 0;
        if (r < 0 || j->phase != DP_VC_RUNNING) {
                for (size_t k = n; k-- > 0;)
                        vc_evict(s, &v->tasks[taken[k]], -1, -1);
                return r;
        }
        for (size_t k = 0; k < n; k++) { /* a victim's group below minMember waits again */
                dp_vc_job *vj = &v->jobs[v->tasks[taken[k]].job];
                if (vj->n_allocated < (size_t)DP_MAX(vj->min_member, 1)) vj->phase = DP_VC_INQUEUE;
        }
        s->changed = true;
        return vc_set_note(j, dp_asprintf("Running after reclaim evicted %zu pod(s) of other queues", n));
}

static int reclaim(vsess *s) {
        dp_volcano *v = s->v;
        memset(s->tried, 0, v->n_jobs * sizeof(bool));
        memset(s->closed, 0, v->n_qs * sizeof(bool));
        _cleanup_free_ double *need = vc_vec_new(v);
        if (!need) return -ENOMEM;
        for (;;) {
                ssize_t q = best_queue(s, want_reclaim);
                if (q < 0) return 0;
                if (v->qs[q].overused) {
                        s->closed[q] = true;
                        continue;
                }
                ssize_t j = vc_best_job(s, (size_t)q, want_reclaim);
                s->tried[j] = true;
                int r = reclaim_job(s, &v->jobs[j], need);
                if (r < 0) return r;
        }
}

/* ---- the session ---- */

static int missing_queues(dp_volcano *v) {
        for (size_t j = 0; j < v->n_jobs; j++) {
                dp_vc_job *job = &v->jobs[j];
                if (job->q >= 0 || job->note) continue;
                if (vc_set_note(job,
                                dp_asprintf("Queue %s is not in the input: Volcano leaves the job Pending (Failed to "
                                            "find Queue)",
                                            job->queue)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void used_of(vsess *s) {
        dp_volcano *v = s->v;
        memcpy(s->used, v->other_used, v->n_dims * sizeof(double));
        for (size_t i = 0; i < v->n_tasks; i++)
                for (size_t d = 0; v->tasks[i].allocated && d < v->n_dims; d++)
                        s->used[d] += v->tasks[i].req[d];
}

/* backfill: a job whose pending tasks ask for nothing (BestEffort) is not
 * held back by its queue's share; gang still needs minMember of them. */
static int backfill(vsess *s) {
        dp_volcano *v = s->v;
        for (size_t j = 0; j < v->n_jobs; j++) {
                dp_vc_job *job = &v->jobs[j];
                if (job->phase != DP_VC_INQUEUE || job->q < 0 || job->n_tasks < (size_t)DP_MAX(job->min_member, 1))
                        continue;
                bool empty = true;
                for (size_t k = 0; k < job->n_tasks && empty; k++) {
                        const vtask *t = &v->tasks[job->tasks[k]];
                        empty = t->allocated || vec_empty(v, t->req);
                }
                if (!empty) continue;
                for (size_t k = 0; k < job->n_tasks; k++)
                        if (vc_pending(&v->tasks[job->tasks[k]])) {
                                v->tasks[job->tasks[k]].allocated = true;
                                job->n_allocated++;
                        }
                job->phase = DP_VC_RUNNING;
                job->session = v->sessions;
                s->changed = true;
                if (vc_set_words(job, NULL, NULL) < 0) return -ENOMEM;
        }
        return 0;
}

/* Counting sort of the jobs by queue (those without one left out). */
static int by_queue(vsess *s) {
        dp_volcano *v = s->v;
        if (!(s->qjobs = calloc(v->n_jobs + 1, sizeof(size_t))) || !(s->qstart = calloc(v->n_qs + 2, sizeof(size_t))))
                return -ENOMEM;
        for (size_t j = 0; j < v->n_jobs; j++)
                if (v->jobs[j].q >= 0) s->qstart[v->jobs[j].q + 2]++;
        for (size_t q = 0; q < v->n_qs; q++)
                s->qstart[q + 2] += s->qstart[q + 1];
        for (size_t j = 0; j < v->n_jobs; j++)
                if (v->jobs[j].q >= 0) s->qjobs[s->qstart[v->jobs[j].q + 1]++] = j;
        return 0;
}

int vc_session(dp_volcano *v, bool *ret_changed, dp_error *err) {
        vsess s = {.v = v};
        s.elastic = calloc(v->n_qs * v->n_dims + 1, sizeof(double));
        s.used = vc_vec_new(v);
        s.oc_inqueue = vc_vec_new(v);
        s.tried = calloc(v->n_jobs + 1, sizeof(bool));
        s.closed = calloc(v->n_qs + 1, sizeof(bool));
        s.fifo_head = calloc(v->n_qs + 1, sizeof(ssize_t));
        int r = s.elastic && s.used && s.oc_inqueue && s.tried && s.closed && s.fifo_head ? 0 : -ENOMEM;
        if (r >= 0) r = missing_queues(v);
        if (r >= 0) r = by_queue(&s);
        if (r >= 0) r = attributes(&s);
        if (r >= 0) r = plugin(v);
        if (r >= 0) {
                used_of(&s);
                for (size_t i = 0; i < v->n_qs; i++)
                        for (size_t d = 0; d < v->n_dims; d++)
                                s.oc_inqueue[d] += v->qs[i].inqueue[d];
                r = enqueue(&s);
        }
        if (r >= 0) r = allocate(&s);
        if (r >= 0 && v->opts.preempt) r = vc_preempt(&s);
        if (r >= 0 && v->opts.reclaim) r = reclaim(&s);
        if (r >= 0) r = backfill(&s);
        dp_free_many(s.elastic, s.used, s.oc_inqueue, s.tried, s.closed, s.fifo_head, s.qjobs, s.qstart);
        if (r < 0) return dp_error_set(err, r, "out of memory");
        *ret_changed = s.changed;
        return 0;
}
