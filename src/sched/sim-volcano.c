/* SPDX-License-Identifier: Apache-2.0
 *
 * sim-volcano.c — `simulate --queue-policy volcano`: before the first pods
 * are created, Volcano's sessions (src/queue/volcano.h) run over the run's
 * nodes (their allocatable, as the store holds them once the fleet is up),
 * its pods, Volcano PodGroups, Queues, PriorityClasses, ResourceClaims and
 * their templates (the capacity plugin's DRA quota); the pods of the
 * groups Volcano allocates lose spec.schedulerName and go on to the
 * kube-scheduler engine like any pod, the others keep schedulerName volcano
 * and stay Pending (the report says why in Volcano's words). Over time,
 * once the Timeline creates pods or deletes them (or an eviction does), the
 * sessions run again on what is there: the pods of groups allocated then go
 * on to kube-scheduler as well (sim_volcano_step). A pod the Timeline
 * creates later is no task before it exists.
 */
#include <stdlib.h>

#include "sched/sim-internal.h"
#include "sched/store.h"

static int add_kind(sim_run *r, dp_kind kind, dp_error *err) {
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, kind, &i, &o, NULL)) {
                int rr = dp_volcano_add(r->volcano, o, err);
                if (rr < 0) return rr;
        }
        return 0;
}

int sim_volcano(sim_run *r, dp_error *err) {
        if (!r->in->volcano) return 0;
        int rr = dp_volcano_new(r->in->volcano, &r->volcano);
        if (rr < 0) return rr;
        static const dp_kind kinds[] = {DP_KIND_NODE,
                                        DP_KIND_POD_GROUP,
                                        DP_KIND_PRIORITY_CLASS,
                                        DP_KIND_EXT,
                                        DP_KIND_RESOURCE_CLAIM_TEMPLATE,
                                        DP_KIND_RESOURCE_CLAIM,
                                        DP_KIND_POD};
        for (size_t k = 0; rr >= 0 && k < ELEMENTSOF(kinds); k++)
                rr = add_kind(r, kinds[k], err);
        /* the pods not created yet are the run's own until create_pod */
        for (size_t i = 0; rr >= 0 && i < r->n_pods; i++)
                if (!r->pods[i].created && r->pods[i].obj.hdr) rr = dp_volcano_add(r->volcano, r->pods[i].obj, err);
        /* a pod the Timeline creates later is no task until then */
        if (rr >= 0) rr = dp_volcano_prepare(r->volcano, err);
        for (size_t i = 0; rr >= 0 && i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                if (sp->created || !sp->scheduled_create) continue;
                sp->volcano_later = dp_volcano_pod_deleted(r->volcano, sp->ns, sp->name) > 0;
        }
        if (rr >= 0) rr = dp_volcano_resume(r->volcano, err);
        if (rr >= 0) rr = dp_volcano_apply(r->volcano);
        return rr;
}

/* Once the input's pods are created: those Volcano's reclaim or preempt
 * evicted (bound in the input) are deleted, Evicted with its words. */
int sim_volcano_evict(sim_run *r) {
        for (size_t i = 0; r->volcano && i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                char why[700];
                if (!sp->created || sp->deleted ||
                    !dp_volcano_pod_evicted(r->volcano, sp->ns, sp->name, why, sizeof(why)))
                        continue;
                int rr = sim_evict_now(r, sp, why);
                if (rr < 0) return rr;
        }
        return 0;
}

static int hand_on(dp_object o, void *userdata) {
        (void)userdata;
        free(o.pod->scheduler_name);
        o.pod->scheduler_name = NULL;
        return 0;
}

/* Tell Volcano which pods were deleted since it last looked; whether one
 * changed what it counts. */
static int tell_deleted(sim_run *r) {
        int any = 0;
        for (size_t i = 0; i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                if (!sp->deleted || sp->volcano_told) continue;
                sp->volcano_told = true;
                any |= dp_volcano_pod_deleted(r->volcano, sp->ns, sp->name) > 0;
        }
        return any;
}

/* What the pods kube-scheduler (or the input) bound use now: Volcano's
 * sessions count them as used. */
static int bound_now(sim_run *r) {
        size_t i = 0, n = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_POD, &i, &o, NULL))
                n += o.pod->node_name != NULL;
        _cleanup_free_ const dp_pod **pods = calloc(n + 1, sizeof(*pods));
        if (!pods) return -ENOMEM;
        for (i = 0, n = 0; dp_store_next(r->store, DP_KIND_POD, &i, &o, NULL);)
                if (o.pod->node_name) pods[n++] = o.pod;
        return dp_volcano_set_bound(r->volcano, pods, n);
}

/* ... and which of the pods it was told were not there yet have been
 * created since. */
static int tell_created(sim_run *r) {
        int any = 0;
        for (size_t i = 0; i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                if (!sp->volcano_later || !sp->created) continue;
                sp->volcano_later = false;
                any |= dp_volcano_pod_created(r->volcano, sp->ns, sp->name) > 0;
        }
        return any;
}

int sim_volcano_step(sim_run *r, dp_error *err) {
        if (!r->volcano) return 0;
        int created = tell_created(r);
        if (!tell_deleted(r) && !created) return 0;
        int rr = bound_now(r);
        if (rr >= 0) rr = dp_volcano_resume(r->volcano, err);
        for (size_t i = 0; rr >= 0 && i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                if (!sp->created || sp->deleted || !dp_volcano_pod_allocated(r->volcano, sp->ns, sp->name)) continue;
                dp_object o = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
                if (!o.hdr || !o.pod->scheduler_name || o.pod->node_name) continue; /* handed on already */
                rr = dp_store_update(r->store, DP_KIND_POD, sp->ns, sp->name, DP_STORE_ANY_RV, hand_on, NULL, NULL);
                if (rr >= 0)
                        dp_strbuf_printf(&r->log, "t=%" PRId64 "s Volcano: %s allocated, handed to the scheduler\n",
                                         r->now / 1000, sp->key);
        }
        if (rr >= 0) rr = sim_volcano_evict(r);
        if (rr >= 0) tell_deleted(r); /* those evicted now: Volcano evicted them itself */
        return rr;
}
