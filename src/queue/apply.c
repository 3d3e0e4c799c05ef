/* SPDX-License-Identifier: Apache-2.0
 *
 * apply.c — what admission does to the input before kube-scheduler sees it,
 * as Kueue's job integrations do it: an admitted Job is unsuspended (its
 * pods are stood up; partially admitted, with the parallelism admitted), a
 * pending one stays suspended (no pods); a JobSet's Jobs are stood up
 * (jobset.c) and run or stay suspended with their JobSet's workload; a
 * pending plain Pod, and every pod of a pending pod group, keeps the
 * scheduling gate kueue.x-k8s.io/admission; the pods of
 * an admitted workload get the nodeLabels of their flavors as nodeSelector
 * entries, the flavors' tolerations and the kueue.x-k8s.io/podset label
 * (Kueue's podset info merge). Over time (a Timeline) the same injection
 * runs when a workload is admitted later (dp_queue_apply_pod): a held pod
 * gets it before it is created, a gated one as its gate comes off.
 */
#include "queue/jobset.h"
#include "queue/queue-internal.h"
#include "queue/tas.h"

static const dp_resource_flavor *flavor(const dp_queue *q, const char *name) {
        return q_index_get(q, "F\x1f%s", name);
}

static const dp_queue_workload *workload_of(const dp_queue *q, const char *kind, const dp_object_meta *m) {
        const char *ns = m->namespace && m->namespace[0] ? m->namespace : "default";
        uintptr_t v = (uintptr_t)q_index_get(q, "W\x1f%s\x1f%s\x1f%s", kind, ns, m->name ? m->name : "");
        return v ? &q->wl[v - 1] : NULL;
}

static int add_gate(dp_pod *p) {
        for (size_t i = 0; i < p->n_scheduling_gates; i++)
                if (streq(p->scheduling_gates[i], DP_KUEUE_ADMISSION_GATE)) return 0;
        char **v = realloc(p->scheduling_gates, (p->n_scheduling_gates + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        p->scheduling_gates = v;
        if (!(v[p->n_scheduling_gates] = strdup(DP_KUEUE_ADMISSION_GATE))) return -ENOMEM;
        p->n_scheduling_gates++;
        return 0;
}

/* Add key=value to a label-like list unless the key is there already. */
static int kv_add(dp_kv **list, size_t *n, const char *key, const char *value) {
        if (dp_kv_get(*list, *n, key)) return 0;
        dp_kv *v = realloc(*list, (*n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        *list = v;
        dp_kv *x = &v[*n];
        x->key = strdup(key);
        x->value = strdup(value ? value : "");
        if (!x->key || !x->value) {
                dp_free_many(x->key, x->value);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

static int add_selector(dp_pod *p, const dp_kv *kv) {
        return kv_add(&p->node_selector, &p->n_node_selector, kv->key, kv->value);
}

int q_label_podset(dp_pod *p, const char *podset) {
        return kv_add(&p->meta.labels, &p->meta.n_labels, DP_KUEUE_PODSET_LABEL, podset);
}

int q_annotate_role(dp_pod *p, const char *podset) {
        return kv_add(&p->meta.annotations, &p->meta.n_annotations, DP_KUEUE_ROLE_HASH, podset);
}

static int add_toleration(dp_pod *p, const dp_toleration *t) {
        dp_toleration *v = realloc(p->tolerations, (p->n_tolerations + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        p->tolerations = v;
        v[p->n_tolerations] = (dp_toleration){0};
        int r = dp_toleration_copy(&v[p->n_tolerations], t);
        if (r < 0) return r;
        p->n_tolerations++;
        return 0;
}

static const dp_queue_podset *podset_named(const dp_queue_workload *w, const char *name) {
        for (size_t i = 0; name && i < w->n_podsets; i++)
                if (streq(w->podsets[i].name, name)) return &w->podsets[i];
        return NULL;
}

/* The pod set p belongs to: the one Kueue's kueue.x-k8s.io/podset label
 * names (a started pod's; a held integration pod's from its stand-up), a
 * JobSet's by its replicatedJob (the label its controller sets), the one the
 * kueue.x-k8s.io/role-hash annotation names (Kueue's webhook gives it to a
 * LeaderWorkerSet's and a StatefulSet's pods), a pod group's by the pod's
 * role, else the first ("main"). */
static const dp_queue_podset *podset_of(const dp_queue_workload *w, const dp_pod *p) {
        const dp_queue_podset *ps = podset_named(w, dp_kv_get(p->meta.labels, p->meta.n_labels, DP_KUEUE_PODSET_LABEL));
        if (!ps && streq(w->kind, "JobSet"))
                ps = podset_named(w, dp_kv_get(p->meta.labels, p->meta.n_labels, DP_JOBSET_RJOB_LABEL));
        if (!ps) ps = podset_named(w, dp_kv_get(p->meta.annotations, p->meta.n_annotations, DP_KUEUE_ROLE_HASH));
        if (!ps && streq(w->kind, "PodGroup")) {
                char role[64];
                q_pod_role(p, role);
                ps = podset_named(w, role);
        }
        return ps ? ps : &w->podsets[0];
}

/* A pod of pod set psi gets its flavors, and the kueue.x-k8s.io/podset
 * label Kueue puts on the templates of every pod set it starts. */
int q_inject_podset(const dp_queue *q, const dp_queue_workload *w, size_t psi, dp_pod *p) {
        const dp_queue_podset *ps = &w->podsets[psi];
        if (q_label_podset(p, ps->name) < 0) return -ENOMEM;
        for (size_t i = 0; i < ps->n_requests; i++) {
                if (!ps->flavors[i]) continue;
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = streq_ptr(ps->flavors[k], ps->flavors[i]);
                const dp_resource_flavor *rf = seen ? NULL : flavor(q, ps->flavors[i]);
                for (size_t k = 0; rf && k < rf->n_node_labels; k++)
                        if (add_selector(p, &rf->node_labels[k]) < 0) return -ENOMEM;
                for (size_t k = 0; rf && k < rf->n_tolerations; k++)
                        if (add_toleration(p, &rf->tolerations[k]) < 0) return -ENOMEM;
        }
        return q_tas_pin(q, w, p);
}

/* A Job's pods once admitted: a Job's own workload runs the count admitted
 * (partial admission lowers its parallelism); a JobSet's Job runs its own. */
static int32_t job_replicas(const dp_queue *q, const dp_queue_workload *w, const dp_deployment *d) {
        bool admitted = dp_queue_workload_runs(w); /* QuotaReserved on its admission checks: suspended */
        if (!admitted && !q->over_time) return 0;
        if (admitted && streq(w->kind, "Job")) return w->podsets[0].admitted_count;
        return d->job_pods; /* over time: the caller holds a pending Job's pods back */
}

/* A Job's, Pod's, pod group's or JobSet's pod: its pod set by podset_of. */
static int inject(const dp_queue *q, const dp_queue_workload *w, dp_pod *p) {
        return q_inject_podset(q, w, (size_t)(podset_of(w, p) - w->podsets), p);
}

int q_gate_pod(dp_pod *p) { return add_gate(p); }

int dp_queue_apply_owners(const dp_queue *q, dp_object_list *l, dp_error *err) {
        assert_return(q && l, -EINVAL);
        int r = q_jobset_jobs(l, err); /* the JobSet controller's Jobs, run or held below */
        if (r < 0) return r;
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind != DP_KIND_JOB && o.hdr->kind != DP_KIND_POD) continue;
                const dp_queue_workload *w = workload_of(q, dp_kind_name(o.hdr->kind), dp_object_meta_of(o));
                /* a pod group still short of pods has no workload: gated */
                if (!w && q->n_owned && q_is_group_pod(o) && add_gate(o.pod) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
                if (!w) continue;
                bool admitted = dp_queue_workload_runs(w);
                if (o.hdr->kind == DP_KIND_JOB)
                        o.deployment->replicas = job_replicas(q, w, o.deployment);
                else
                        r = admitted ? inject(q, w, o.pod) : add_gate(o.pod);
                if (r < 0) return dp_error_set(err, r, "out of memory");
        }
        return q_integrations_stand_up(q, l, err);
}

int dp_queue_apply_pods(const dp_queue *q, dp_object_list *l, dp_error *err) {
        assert_return(q && l, -EINVAL);
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind != DP_KIND_POD) continue;
                const dp_object_meta *m = &o.pod->meta;
                for (size_t k = 0; k < m->n_owner_references; k++) {
                        const dp_owner_ref *own = &m->owner_references[k];
                        if (!own->controller || !streq_ptr(own->kind, "Job")) continue;
                        dp_object_meta jm = {.name = own->name, .namespace = m->namespace};
                        const dp_queue_workload *w = workload_of(q, "Job", &jm);
                        if (w && dp_queue_workload_runs(w) && inject(q, w, o.pod) < 0)
                                return dp_error_set(err, -ENOMEM, "out of memory");
                }
        }
        return 0;
}

bool dp_queue_pod_gated(const dp_pod *p) {
        for (size_t i = 0; p && i < p->n_scheduling_gates; i++)
                if (streq(p->scheduling_gates[i], DP_KUEUE_ADMISSION_GATE)) return true;
        return false;
}

/* Kueue's gate off (the other gates stay). */
static void remove_gate(dp_pod *p) {
        for (size_t i = 0; i < p->n_scheduling_gates; i++)
                if (streq(p->scheduling_gates[i], DP_KUEUE_ADMISSION_GATE)) {
                        free(p->scheduling_gates[i]);
                        DP_REMOVE_AT(p->scheduling_gates, p->n_scheduling_gates, i);
                        return;
                }
}

int dp_queue_apply_pod(const dp_queue *q, size_t i, dp_pod *p) {
        assert_return(q && p && i < q->n_wl, -EINVAL);
        if (!dp_queue_workload_runs(&q->wl[i])) return 0;
        int r = inject(q, &q->wl[i], p);
        if (r >= 0) remove_gate(p);
        return r;
}
