/* SPDX-License-Identifier: Apache-2.0
 *
 * sim-kai.c — KAI-Scheduler's fair share as the admission of the pods of
 * kai-scheduler (src/queue/kai.h), chosen with `simulate --queue-policy kai`,
 * or with no flag when the input has KAI Queues and no Kueue object: the
 * Queues are taken out of the run's list, the groups KAI would start are
 * handed to the kube-scheduler engine, evicted ones lose their nodes, the
 * others stay Pending (still of kai-scheduler) with KAI's reason in the
 * report's "kaiQueues".
 */
#include <stdio.h>

#include "sched/sim-internal.h"
#include "sched/topology.h"

/* Whether KAI admits this run's pods (l still holds the Queues). */
static bool kai_used(const sim_run *r, const dp_object_list *l) {
        const char *p = r->in->queue_policy;
        if (p) return streq(p, "kai");
        bool kueue = r->queue && dp_queue_n_cluster_queues(r->queue);
        return !kueue && dp_kai_input_has_queues(l);
}

const char *sim_kai_reason(const sim_run *r, const char *ns, const char *name, char *buf, size_t size) {
        const dp_kai_group *g = r->kai ? dp_kai_group_of_pod(r->kai, ns, name) : NULL;
        if (!g || !g->reason || g->state == DP_KAI_ADMITTED || g->state == DP_KAI_RUNNING) return NULL;
        snprintf(buf, size, "KAI-Scheduler %s: %s", g->reason, g->message ? g->message : "");
        return buf;
}

int sim_kai_admit(sim_run *r, dp_object_list *l, dp_error *err) {
        if (!dp_kai_input_has_queues(l) && !(r->in->queue_policy && streq(r->in->queue_policy, "kai"))) return 0;
        bool used = kai_used(r, l);
        int rr = dp_kai_new(l, &r->kai, err); /* the Queues leave the list either way */
        if (rr < 0 || !used) {
                r->kai = dp_kai_free(r->kai);
                return rr;
        }
        dp_kai_set_node_filter(r->kai, dp_sched_pod_node_allowed); /* the kube-scheduler engine's predicates */
        if ((rr = dp_kai_admit(r->kai)) < 0) return dp_error_set(err, rr, "out of memory");
        return dp_kai_apply(r->kai, l, err);
}
