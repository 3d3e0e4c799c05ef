/* SPDX-License-Identifier: Apache-2.0
 *
 * integrations.c — workloads from the objects of Kueue's job integrations
 * (integrations-decode.c), and their pods once admission has run:
 *   - a suspend-based job (Kubeflow, MPIJob, KubeRay, SparkApplication,
 *     AppWrapper): one workload with the object's pod sets; admitted, its
 *     operator's pods stand up with the flavors of their pod set; pending,
 *     none (the operator waits for spec.suspend: false), or over time (a
 *     Timeline) all, which the simulation holds until Kueue admits the
 *     workload and then creates with their flavors (dp_queue_apply_pod);
 *   - Kueue's pod-based serving integrations: a Deployment's pods are each a
 *     workload of one pod (pod set "main"); a StatefulSet is one pod group
 *     (pod set "main", replicas pods); a LeaderWorkerSet is one workload per
 *     group ("leader" + "worker", or "main" without a leader template). Their
 *     pods stand up in every case, gated by kueue.x-k8s.io/admission while
 *     their workload is pending (over time ungated once it is admitted);
 *   - a CronJob is none at t=0 (decode warns).
 * The pods are named as the operators name them where the name is
 * deterministic (<job>-worker-0, <lws>-0-1, <app>-driver); random suffixes
 * are left out.
 */
#include <stdio.h>

#include "doc/builder.h"
#include "queue/integrations.h"
#include "queue/queue-internal.h"

static const char *queue_of(const dp_object_meta *m) { return dp_kv_get(m->labels, m->n_labels, DP_KUEUE_QUEUE_LABEL); }

/* The LocalQueue of an input object: its label, or for a Sandbox its pod
 * template's (the pod is what Kueue's pod integration sees). */
static const char *object_queue(dp_object o) {
        const dp_qj_job *j = dp_qj_job_of(o);
        if (j && j->plain_pod) return j->n_ps && j->ps[0].tmpl ? queue_of(&j->ps[0].tmpl->meta) : NULL;
        return queue_of(dp_object_meta_of(o));
}

/* The kind of its workloads: a Sandbox's pod is a plain Pod to Kueue. */
static const char *workload_kind(dp_object o, const dp_qj_job *j) {
        return j->plain_pod ? "Pod" : dp_object_kind_name(o);
}

/* The template Kueue takes the priority class from: the first pod set's
 * with one (Kubeflow's rule), else the first. */
static const dp_pod *priority_template(const dp_qj_job *j) {
        for (size_t i = 0; i < j->n_ps; i++)
                if (j->ps[i].tmpl && (j->ps[i].tmpl->has_priority || j->ps[i].tmpl->priority_class_name))
                        return j->ps[i].tmpl;
        return j->ps[0].tmpl;
}

static int job_priority(dp_queue *q, const dp_object_list *l, const dp_object_meta *m, const dp_qj_job *j,
                        dp_queue_workload *w) {
        w->priority = q_priority_of(q, m, priority_template(j), &w->note);
        if (j->priority_class && !dp_kv_get(m->labels, m->n_labels, DP_KUEUE_PRIORITY_LABEL)) {
                const dp_priority_class *pc = q_index_get(q, "K\x1f%s", j->priority_class);
                w->priority = pc ? pc->value : 0;
        }
        return 0;
}

/* The workload name of group g (LeaderWorkerSet) or the object's own. */
static void group_name(const dp_object_meta *m, const dp_qj_job *j, int32_t g, char *buf, size_t size) {
        if (j && j->pod_based)
                snprintf(buf, size, "%s-%d", m->name ? m->name : "", g);
        else
                snprintf(buf, size, "%s", m->name ? m->name : "");
}

static int from_job(dp_queue *q, const dp_object_list *l, dp_object o, const dp_qj_job *j, const char *queue) {
        const dp_object_meta *m = &o.ext->meta;
        int32_t n = j->pod_based ? j->groups : 1;
        if (j->cron || !j->n_ps) return 0; /* a CronJob's Jobs come later; a RayJob on an existing cluster */
        for (int32_t g = 0; g < n; g++) {
                char name[320];
                group_name(m, j, g, name, sizeof(name));
                dp_object_meta mm = *m;
                mm.name = name;
                dp_queue_workload *w = q_new_workload(q, workload_kind(o, j), &mm, queue);
                if (!w || job_priority(q, l, m, j, w) < 0) return -ENOMEM;
                for (size_t i = 0; i < j->n_ps; i++) {
                        int r = q_add_podset(q, l, w, j->ps[i].name, j->ps[i].count, j->ps[i].tmpl);
                        if (r < 0) return r;
                }
        }
        return 0;
}

/* Kueue's pod integration for a Deployment: each replica a workload of one
 * pod; a StatefulSet: one pod group of all replicas. */
static int from_apps(dp_queue *q, const dp_object_list *l, const dp_deployment *d, const char *queue) {
        bool sts = d->hdr.kind == DP_KIND_STATEFUL_SET;
        if (d->replicas > DP_WORKLOAD_PODS_MAX) return 0; /* the model's expansion refuses it */
        int32_t n = sts ? 1 : DP_MAX(d->replicas, 0);
        for (int32_t i = 0; i < n; i++) {
                char name[320];
                snprintf(name, sizeof(name), "%s-%d", d->meta.name ? d->meta.name : "", i);
                dp_object_meta mm = d->meta;
                if (!sts) mm.name = name;
                dp_queue_workload *w = q_new_workload(q, sts ? "StatefulSet" : "Pod", &mm, queue);
                if (!w) return -ENOMEM;
                w->priority = q_priority_of(q, &d->meta, d->template_, &w->note);
                int r = q_add_podset(q, l, w, "main", sts ? DP_MAX(d->replicas, 0) : 1, d->template_);
                if (r < 0) return r;
        }
        return 0;
}

int q_integration_workloads(dp_queue *q, const dp_object_list *l, dp_object o) {
        const char *queue = object_queue(o);
        if (!queue) return 0;
        if (o.hdr->kind == DP_KIND_DEPLOYMENT || o.hdr->kind == DP_KIND_STATEFUL_SET)
                return o.deployment->template_ ? from_apps(q, l, o.deployment, queue) : 0;
        const dp_qj_job *j = dp_qj_job_of(o);
        return j ? from_job(q, l, o, j, queue) : 0;
}

/* ---- pods ---- */

/* One pod to stand up: its name, owner (kind NULL: none), the template as
 * JSON, and the workload and pod set it belongs to. */
typedef struct qj_pod {
        const char *name, *ns, *owner_api, *owner_kind, *owner_name, *tmpl_json, *source;
        size_t doc_index;
        const dp_queue_workload *w;
        size_t ps;
        bool gate; /* pod-based: gated while pending (else held: not created before it starts) */
        bool role; /* a LeaderWorkerSet's or StatefulSet's: Kueue's webhook annotates its pod set */
} qj_pod;

static dp_doc_node *pod_root(dp_doc_builder *b, const qj_pod *p, const dp_doc_node *tmpl) {
        dp_doc_node *root = dp_doc_b_map(b), *md = dp_doc_b_map(b);
        dp_doc_b_put_str(b, root, "apiVersion", "v1");
        dp_doc_b_put_str(b, root, "kind", "Pod");
        dp_doc_b_put_str(b, md, "name", p->name);
        dp_doc_b_put_str(b, md, "namespace", p->ns);
        const dp_doc_node *tmd = dp_doc_get(tmpl, "metadata");
        for (size_t k = 0; tmd && tmd->type == DP_DOC_MAP && k < tmd->n; k++) {
                const char *key = tmd->pairs[k].key;
                if (!streq(key, "name") && !streq(key, "namespace") && !streq(key, "generateName") &&
                    !streq(key, "ownerReferences"))
                        dp_doc_b_put(b, md, key, tmd->pairs[k].value);
        }
        if (p->owner_kind) {
                dp_doc_node *owners = dp_doc_b_seq(b), *owner = dp_doc_b_map(b);
                dp_doc_b_put_str(b, owner, "apiVersion", p->owner_api);
                dp_doc_b_put_str(b, owner, "kind", p->owner_kind);
                dp_doc_b_put_str(b, owner, "name", p->owner_name);
                dp_doc_b_put_bool(b, owner, "controller", true);
                dp_doc_b_push(b, owners, owner);
                dp_doc_b_put(b, md, "ownerReferences", owners);
        }
        dp_doc_b_put(b, root, "metadata", md);
        const dp_doc_node *spec = dp_doc_get(tmpl, "spec");
        if (spec) dp_doc_b_put(b, root, "spec", (dp_doc_node *)spec);
        return b->r < 0 ? NULL : root;
}

/* Decode the pod into l (the Pod decoder's own checks), then give it its
 * pod set's flavors (admitted), Kueue's gate (pending, pod-based), or (over
 * time, pending, suspend-based: held until Kueue starts it, then
 * dp_queue_apply_pod gives it the flavors) the kueue.x-k8s.io/podset label
 * Kueue's start puts on its template. */
static int stand_up(const dp_queue *q, dp_object_list *l, const qj_pod *p, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, p->tmpl_json, strlen(p->tmpl_json), "template", err);
        if (r < 0) return r;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *root = pod_root(&b, p, dp_doc_root(s, 0));
        if (!root) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t before = l->n;
        if ((r = dp_model_decode(root, p->source, p->doc_index, l, err)) < 0) return r;
        if (l->n != before + 1 || l->items[before].hdr->kind != DP_KIND_POD) return 0;
        dp_pod *pod = l->items[before].pod;
        const char *ps = p->w->podsets[p->ps].name;
        r = p->role ? q_annotate_role(pod, ps) : 0;
        if (r >= 0)
                r = dp_queue_workload_runs(p->w) ? q_inject_podset(q, p->w, p->ps, pod)
                    : p->gate                    ? q_gate_pod(pod)
                                                 : q_label_podset(pod, ps);
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

static const dp_queue_workload *find_wl(const dp_queue *q, const char *kind, const char *ns, const char *name) {
        ssize_t i = dp_queue_index(q, kind, ns, name);
        return i < 0 ? NULL : &q->wl[i];
}

/* The operator's name for pod i of pod set ps (group g of a LeaderWorkerSet:
 * the leader <lws>-<g>, its workers <lws>-<g>-<k>). */
static void pod_name(const dp_qj_job *j, const dp_qj_podset *ps, int32_t g, int32_t i, char *buf, size_t size) {
        int32_t k = ps->first + i;
        if (j->pod_based && k)
                snprintf(buf, size, "%s-%d-%d", ps->pod_prefix, g, k);
        else if (j->pod_based)
                snprintf(buf, size, "%s-%d", ps->pod_prefix, g);
        else if (ps->single)
                snprintf(buf, size, "%s", ps->pod_prefix);
        else
                snprintf(buf, size, "%s-%d", ps->pod_prefix, k);
}

static int job_pods(const dp_queue *q, dp_object_list *l, dp_object o, const dp_qj_job *j, dp_error *err) {
        const dp_object_meta *m = &o.ext->meta;
        const char *ns = m->namespace && m->namespace[0] ? m->namespace : "default";
        int32_t n = j->pod_based ? j->groups : 1;
        int64_t total = 0;
        for (size_t s = 0; s < j->n_ps; s++)
                total += (int64_t)n * j->ps[s].count;
        if (total > DP_WORKLOAD_PODS_MAX)
                return dp_error_set(err, -E2BIG, "%s: %s %s: stands up %lld pods, more than %d", o.hdr->source,
                                    dp_object_kind_name(o), m->name, (long long)total, DP_WORKLOAD_PODS_MAX);
        for (int32_t g = 0; g < n && !j->cron; g++) {
                char wname[320];
                group_name(m, j, g, wname, sizeof(wname));
                const dp_queue_workload *w = find_wl(q, workload_kind(o, j), ns, wname);
                bool pods = j->pod_based || j->plain_pod; /* pod-based: they stand up gated */
                /* suspended: no pods, but over time held until admitted (the caller holds them) */
                if (!w || (!dp_queue_workload_runs(w) && !pods && !q->over_time)) continue;
                for (size_t s = 0; s < j->n_ps; s++)
                        for (int32_t i = 0; i < j->ps[s].count; i++) {
                                char name[400];
                                pod_name(j, &j->ps[s], g, i, name, sizeof(name));
                                qj_pod p = {name, ns, o.hdr->api_version, j->plain_pod ? NULL : dp_object_kind_name(o), wname,
                                            j->ps[s].tmpl_json, o.hdr->source, o.hdr->doc_index, w, s, pods,
                                            j->pod_based};
                                int r = stand_up(q, l, &p, err);
                                if (r < 0) return r;
                        }
        }
        return 0;
}

/* A Deployment's pods have no owner here (each is its own workload, as
 * Kueue's pod integration sees it), a StatefulSet's are its own; the model
 * then stands none up for either. */
static int apps_pods(const dp_queue *q, dp_object_list *l, dp_deployment *d, dp_error *err) {
        bool sts = d->hdr.kind == DP_KIND_STATEFUL_SET;
        const char *ns = d->meta.namespace && d->meta.namespace[0] ? d->meta.namespace : "default";
        const char *dn = d->meta.name ? d->meta.name : "";
        if (!d->template_json || (sts && !find_wl(q, "StatefulSet", ns, dn))) return 0;
        for (int32_t i = 0; i < d->replicas; i++) {
                char name[320];
                snprintf(name, sizeof(name), "%s-%d", dn, i);
                const dp_queue_workload *w = find_wl(q, sts ? "StatefulSet" : "Pod", ns, sts ? dn : name);
                if (!w) return 0;
                qj_pod p = {name, ns, "apps/v1", sts ? "StatefulSet" : NULL, dn, d->template_json, d->hdr.source,
                            d->hdr.doc_index, w, 0, true, sts};
                int r = stand_up(q, l, &p, err);
                if (r < 0) return r;
        }
        d->replicas = 0; /* its pods are standing: the model adds none */
        return 0;
}

int q_integrations_stand_up(const dp_queue *q, dp_object_list *l, dp_error *err) {
        size_t n = l->n;
        for (size_t i = 0; i < n; i++) {
                dp_object o = l->items[i];
                if (!object_queue(o)) continue;
                const dp_qj_job *j = dp_qj_job_of(o);
                int r = 0;
                if (o.hdr->kind == DP_KIND_DEPLOYMENT || o.hdr->kind == DP_KIND_STATEFUL_SET)
                        r = apps_pods(q, l, o.deployment, err);
                else if (j)
                        r = job_pods(q, l, o, j, err);
                if (r < 0) return r;
        }
        return 0;
}
