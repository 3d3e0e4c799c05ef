/* SPDX-License-Identifier: Apache-2.0
 *
 * sim-queue.c — Kueue's quota over time in the simulation (src/queue): when
 * the Timeline deletes pods, the pods of every Job and suspend-based
 * integration are stood up at load and those Kueue has not admitted are held
 * back (never created), while the pods Kueue gates (plain Pods, pod groups,
 * the pod-based integrations) are created gated; once all pods of an
 * admitted workload have been deleted, the workload is Finished, its quota
 * released, and Kueue's cycles run again (heads set aside are retried: the
 * cluster changed); the pods of workloads admitted then get their flavors
 * and are created or ungated, and kube-scheduler places them as any pod.
 * Without a delete event in the Timeline, nothing here runs: admission
 * happens once, at t=0, and pending Jobs stand up no pods.
 */
#include <inttypes.h>
#include <stdio.h>

#include "sched/fmt.h"
#include "sched/sim-internal.h"

bool sim_queue_over_time(const dp_sim_input *in) {
        for (size_t i = 0; in && i < in->n_events; i++)
                if (in->events[i].kind == DP_SIM_EV_DELETE) return true;
        return false;
}

/* The queue's index of the workload sp belongs to, -1 when none. */
static ssize_t workload_of(const sim_run *r, const sim_pod *sp) {
        const char *sl = sp->workload ? strchr(sp->workload, '/') : NULL;
        if (!sl) return dp_queue_index(r->queue, "Pod", sp->ns, sp->name);
        char kind[64];
        dp_fmt(kind, sizeof(kind), "%.*s", (int)(sl - sp->workload), sp->workload);
        return dp_queue_index(r->queue, kind, sp->ns, sl + 1);
}

int sim_queue_hold(sim_run *r) {
        if (!dp_queue_over_time(r->queue)) return 0;
        if (!(r->queue_wl = calloc(r->n_pods + 1, sizeof(ssize_t)))) return -ENOMEM;
        for (size_t i = 0; i < r->n_pods; i++) {
                ssize_t w = r->queue_wl[i] = workload_of(r, &r->pods[i]);
                /* Kueue holds it: created once admitted; a gated one is there, gated */
                if (w >= 0 && !dp_queue_workload_runs(dp_queue_workload_at(r->queue, (size_t)w)) &&
                    !dp_queue_pod_gated(r->pods[i].obj.pod))
                        r->pods[i].scheduled_create = true;
        }
        return 0;
}

/* Workloads whose pods have all been deleted: Finished. *ret_any: one was. */
static int finish_ended(sim_run *r, bool *ret_any) {
        size_t n = dp_queue_n_workloads(r->queue);
        _cleanup_free_ uint32_t *total = calloc(n + 1, sizeof(uint32_t)), *alive = calloc(n + 1, sizeof(uint32_t));
        if (!total || !alive) return -ENOMEM;
        for (size_t i = 0; i < r->n_pods; i++) {
                ssize_t w = r->queue_wl[i];
                if (w < 0) continue;
                total[w] += r->pods[i].created; /* a pod held (partial admission) is no part of the run */
                alive[w] += r->pods[i].created && !r->pods[i].deleted;
        }
        *ret_any = false;
        for (size_t i = 0; i < n; i++) {
                const dp_queue_workload *w = dp_queue_workload_at(r->queue, i);
                if (w->state != DP_QW_ADMITTED || !total[i] || alive[i]) continue;
                int rr = dp_queue_finish(r->queue, i);
                if (rr < 0) return rr;
                dp_strbuf_printf(&r->log,
                                 "t=%" PRId64 "s Kueue: %s/%s finished, its quota in ClusterQueue %s released\n",
                                 r->now / 1000, w->ns, w->name, w->cluster_queue);
                *ret_any = true;
        }
        return 0;
}

typedef struct start_ctx {
        const dp_queue *q;
        size_t w;
} start_ctx;

static int start_in_store(dp_object o, void *userdata) {
        const start_ctx *c = userdata;
        return dp_queue_apply_pod(c->q, c->w, o.pod);
}

/* The pods of the workloads admitted now (not before[w]) start as admission
 * at t=0 starts them (dp_queue_apply_pod: their pod set's flavors): a held
 * one is created, a gated one (in the store) loses Kueue's gate, and
 * kube-scheduler places them. */
static int start_pods(sim_run *r, const bool *before) {
        size_t n = dp_queue_n_workloads(r->queue);
        _cleanup_free_ int32_t *left = calloc(n + 1, sizeof(int32_t));
        if (!left) return -ENOMEM;
        for (size_t i = 0; i < n; i++) { /* partial admission: a Job runs the parallelism admitted */
                const dp_queue_workload *w = dp_queue_workload_at(r->queue, i);
                left[i] = streq(w->kind, "Job") ? w->podsets[0].admitted_count : INT32_MAX;
        }
        for (size_t i = 0; i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                ssize_t w = sp->deleted ? -1 : r->queue_wl[i];
                if (w < 0 || before[w] || !dp_queue_workload_runs(dp_queue_workload_at(r->queue, (size_t)w)) ||
                    left[w] <= 0)
                        continue;
                left[w]--;
                int rr;
                if (sp->created) { /* gated: ungated now; else running already (admitted before, evicted) */
                        dp_object o = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
                        if (!o.hdr || !dp_queue_pod_gated(o.pod)) continue;
                        start_ctx c = {r->queue, (size_t)w};
                        rr = dp_store_update(r->store, DP_KIND_POD, sp->ns, sp->name, DP_STORE_ANY_RV, start_in_store,
                                             &c, NULL);
                        if (rr >= 0)
                                dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s ungated (Kueue admitted its workload)\n",
                                                 r->now / 1000, sp->key);
                } else {
                        rr = dp_queue_apply_pod(r->queue, (size_t)w, sp->obj.pod);
                        if (rr >= 0) rr = sim_create_pod(r, sp);
                }
                if (rr < 0) return rr;
        }
        return 0;
}

int sim_queue_step(sim_run *r, dp_error *err) {
        if (!dp_queue_over_time(r->queue) || !r->queue_wl) return 0;
        size_t deleted = 0;
        for (size_t i = 0; i < r->n_pods; i++)
                deleted += r->pods[i].deleted;
        if (deleted == r->queue_deleted) return 0; /* nothing ended since */
        r->queue_deleted = deleted;
        dp_queue_set_time(r->queue, r->now); /* the usage history's time (queue/history.c) */
        bool any = false;
        int rr = finish_ended(r, &any);
        if (rr < 0 || !any) return rr;
        size_t n = dp_queue_n_workloads(r->queue);
        _cleanup_free_ bool *before = calloc(n + 1, sizeof(bool));
        if (!before) return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                before[i] = dp_queue_workload_runs(dp_queue_workload_at(r->queue, i));
        if ((rr = dp_queue_readmit(r->queue, err)) < 0) return rr;
        for (size_t i = 0; i < n; i++) {
                const dp_queue_workload *w = dp_queue_workload_at(r->queue, i);
                if (!before[i] && dp_queue_workload_runs(w))
                        dp_strbuf_printf(&r->log, "t=%" PRId64 "s Kueue: %s/%s admitted in ClusterQueue %s\n",
                                         r->now / 1000, w->ns, w->name, w->cluster_queue);
        }
        return start_pods(r, before);
}
