/* SPDX-License-Identifier: Apache-2.0
 *
 * sim-queue.c — Kueue's quota over time in the simulation (src/queue): when
 * the Timeline deletes pods, every Job's pods are stood up at load and those
 * of Jobs Kueue has not admitted are held back (never created); once all
 * pods of an admitted workload have been deleted, the workload is Finished,
 * its quota released, and Kueue's cycles run again (heads set aside are
 * retried: the cluster changed); the pods of workloads admitted then are
 * created with their flavors, and kube-scheduler places them as any pod.
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
                if (w >= 0 && !dp_queue_workload_runs(dp_queue_workload_at(r->queue, (size_t)w)))
                        r->pods[i].scheduled_create = true; /* Kueue holds it: created once admitted */
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
                total[w]++;
                alive[w] += !r->pods[i].deleted;
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
        for (size_t i = 0; i < r->n_pods && rr >= 0; i++) {
                sim_pod *sp = &r->pods[i];
                ssize_t w = sp->created ? -1 : r->queue_wl[i];
                if (w < 0 || before[w] || !dp_queue_workload_runs(dp_queue_workload_at(r->queue, (size_t)w))) continue;
                rr = dp_queue_apply_pod(r->queue, (size_t)w, sp->obj.pod);
                if (rr >= 0) rr = sim_create_pod(r, sp);
        }
        return rr;
}
