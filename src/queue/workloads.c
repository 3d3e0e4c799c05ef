/* SPDX-License-Identifier: Apache-2.0
 *
 * workloads.c — workloads as Kueue's integrations derive them: a labelled
 * batch/v1 Job (pod set "main", min(parallelism, completions) pods, at
 * least kueue.x-k8s.io/job-min-parallelism under partial admission), a
 * labelled Pod (pod set "main", one pod), a labelled JobSet (a pod set per
 * replicatedJob), a Workload as written, pod groups (podgroup.c); their
 * per-pod requests (containers summed, init containers and sidecars as the
 * API computes a pod's requests, overhead on top, a missing request taken
 * from its limit), their priority (WorkloadPriorityClass label, else the
 * pods' PriorityClass) and where they queue.
 */
#include <stdio.h>

#include "queue/jobset.h"
#include "queue/queue-internal.h"

static const char *ps_ns(const dp_object_meta *m) { return m->namespace && m->namespace[0] ? m->namespace : "default"; }

int64_t q_value(const char *resource, const dp_quantity *v) {
        return streq(resource, "cpu") ? dp_quantity_milli_value(v) : dp_quantity_value(v);
}

void q_format(const char *resource, int64_t v, char *buf, size_t size) {
        dp_quantity x;
        bool binary = streq(resource, "memory") || streq(resource, "ephemeral-storage") ||
                      startswith(resource, "hugepages-");
        if (streq(resource, "cpu"))
                x = (dp_quantity){(__int128)v * 1000000, DP_QUANTITY_DECIMAL_SI};
        else
                x = dp_quantity_from_int(v, binary ? DP_QUANTITY_BINARY_SI : DP_QUANTITY_DECIMAL_SI);
        char tmp[DP_QUANTITY_MAX_LEN];
        dp_quantity_format(&x, tmp, sizeof(tmp));
        snprintf(buf, size, "%s", tmp);
}

/* ---- requests ---- */

static int64_t container_value(const dp_container *c, const char *name) {
        for (size_t i = 0; i < c->n_requests; i++)
                if (streq(c->requests[i].name, name)) return q_value(name, &c->requests[i].value);
        for (size_t i = 0; i < c->n_limits; i++)
                if (streq(c->limits[i].name, name)) return q_value(name, &c->limits[i].value);
        return 0;
}

int64_t q_pod_value(const dp_pod *p, const char *name) {
        int64_t reqs = 0, sidecars = 0, init = 0;
        for (size_t c = 0; c < p->n_containers; c++)
                reqs += container_value(&p->containers[c], name);
        for (size_t c = 0; c < p->n_init_containers; c++) {
                const dp_container *ic = &p->init_containers[c];
                int64_t v = container_value(ic, name);
                if (ic->restart_policy && streq(ic->restart_policy, "Always")) {
                        reqs += v;
                        sidecars += v;
                        v = sidecars;
                } else
                        v += sidecars;
                init = DP_MAX(init, v);
        }
        int64_t v = DP_MAX(reqs, init);
        for (size_t i = 0; i < p->n_overhead; i++)
                if (streq(p->overhead[i].name, name)) v += q_value(name, &p->overhead[i].value);
        return v;
}

int q_request_add(dp_queue_request **v, size_t *n, const char *name, int64_t value) {
        for (size_t i = 0; i < *n; i++)
                if (streq((*v)[i].name, name)) {
                        if (__builtin_add_overflow((*v)[i].value, value, &(*v)[i].value)) (*v)[i].value = INT64_MAX;
                        return 0;
                }
        dp_queue_request *x = realloc(*v, (*n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        *v = x;
        if (!(x[*n].name = strdup(name))) return -ENOMEM;
        x[(*n)++].value = value;
        return 0;
}

static int add_name(dp_queue_request **v, size_t *n, const char *name) { return q_request_add(v, n, name, 0); }

static int cmp_request(const void *a, const void *b) {
        return strcmp(((const dp_queue_request *)a)->name, ((const dp_queue_request *)b)->name);
}

/* Kueue's resources.excludeResourcePrefixes: such requests are not quota. */
static bool excluded(const dp_queue *q, const char *name) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        for (size_t i = 0; cfg && i < cfg->n_exclude_prefixes; i++)
                if (startswith(name, cfg->exclude_prefixes[i])) return true;
        return false;
}

static int container_names(const dp_pod *p, dp_queue_podset *ps) {
        int r = 0;
        for (int pass = 0; pass < 2 && r >= 0; pass++) {
                const dp_container *cs = pass ? p->init_containers : p->containers;
                size_t nc = pass ? p->n_init_containers : p->n_containers;
                for (size_t c = 0; c < nc && r >= 0; c++) {
                        for (size_t i = 0; i < cs[c].n_requests && r >= 0; i++)
                                r = add_name(&ps->requests, &ps->n_requests, cs[c].requests[i].name);
                        for (size_t i = 0; i < cs[c].n_limits && r >= 0; i++)
                                r = add_name(&ps->requests, &ps->n_requests, cs[c].limits[i].name);
                }
        }
        for (size_t i = 0; i < p->n_overhead && r >= 0; i++)
                r = add_name(&ps->requests, &ps->n_requests, p->overhead[i].name);
        return r;
}

/* Pod set i's per-pod requests: the containers', then what its claims are
 * charged (dra.c), less the excluded prefixes, sorted by name. */
static int pod_requests(const dp_queue *q, const dp_object_list *l, dp_queue_workload *w, size_t i) {
        dp_queue_podset *ps = &w->podsets[i];
        const dp_pod *p = ps->tmpl;
        int r = container_names(p, ps);
        if (r < 0) return r;
        for (size_t k = 0; k < ps->n_requests; k++)
                ps->requests[k].value = q_pod_value(p, ps->requests[k].name);
        if ((r = q_transform_requests(q, ps)) < 0) return r;
        if ((r = q_dra_requests(q, l, w, i)) < 0) return r;
        size_t k = 0;
        for (size_t j = 0; j < ps->n_requests; j++) {
                if (excluded(q, ps->requests[j].name)) {
                        free(ps->requests[j].name);
                        continue;
                }
                ps->requests[k++] = ps->requests[j];
        }
        ps->n_requests = k;
        if (ps->n_requests) qsort(ps->requests, ps->n_requests, sizeof(*ps->requests), cmp_request);
        ps->flavors = calloc(ps->n_requests + 1, sizeof(char *));
        return ps->flavors ? 0 : -ENOMEM;
}

int q_add_podset(dp_queue *q, const dp_object_list *l, dp_queue_workload *w, const char *name, int32_t count,
                 const dp_pod *tmpl) {
        dp_queue_podset *v = realloc(w->podsets, (w->n_podsets + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        w->podsets = v;
        dp_queue_podset *ps = &v[w->n_podsets++];
        /* a plain Pod's template is the pod, which simulate mutates and may
         * delete: not kept */
        bool pod = streq(w->kind, "Pod") || streq(w->kind, "PodGroup");
        *ps = (dp_queue_podset){.count = count, .tmpl = tmpl, .tmpl_kept = pod ? NULL : tmpl};
        if (!(ps->name = strdup(name))) return -ENOMEM;
        return pod_requests(q, l, w, w->n_podsets - 1);
}

/* ---- priority ---- */

static const dp_workload_priority_class *find_wpc(const dp_queue *q, const char *name) {
        return q_index_get(q, "P\x1f%s", name);
}

/* The pods' priority as the API server's Priority admission gives it. */
static int32_t pod_priority(const dp_queue *q, const dp_pod *p) {
        if (p->has_priority) return p->priority;
        const dp_priority_class *pc = q_index_get(q, "K\x1f%s", p->priority_class_name ? p->priority_class_name : "");
        return pc ? pc->value : 0;
}

int32_t q_priority_of(const dp_queue *q, const dp_object_meta *m, const dp_pod *tmpl, char **ret_note) {
        const char *wpc = dp_kv_get(m->labels, m->n_labels, DP_KUEUE_PRIORITY_LABEL);
        if (wpc) {
                const dp_workload_priority_class *pc = find_wpc(q, wpc);
                if (pc) return pc->value;
                *ret_note = dp_asprintf("WorkloadPriorityClass %s (label %s) is not in the input: priority 0",
                                        wpc, DP_KUEUE_PRIORITY_LABEL);
        }
        return pod_priority(q, tmpl);
}

/* ---- the workloads ---- */

dp_queue_workload *q_new_workload(dp_queue *q, const char *kind, const dp_object_meta *m, const char *queue) {
        dp_queue_workload *v = realloc(q->wl, (q->n_wl + 1) * sizeof(*v));
        if (!v) return NULL;
        q->wl = v;
        dp_queue_workload *w = &v[q->n_wl];
        *w = (dp_queue_workload){.order = q->n_wl};
        q->n_wl++;
        w->kind = strdup(kind);
        w->ns = strdup(m->namespace && m->namespace[0] ? m->namespace : "default");
        w->name = strdup(m->name ? m->name : "");
        w->local_queue = queue ? strdup(queue) : NULL;
        w->created = m->creation_timestamp ? strdup(m->creation_timestamp) : NULL;
        if (!w->kind || !w->ns || !w->name || (queue && !w->local_queue) ||
            (m->creation_timestamp && !w->created))
                return NULL;
        return w;
}

/* kueue.x-k8s.io/job-min-parallelism: the Job's pod set may be admitted
 * with as few pods (partial admission). Kueue's webhook refuses a value
 * that is not an integer in [0, parallelism). */
static int min_parallelism(const dp_deployment *d, dp_queue_podset *ps, dp_error *err) {
        const char *v = dp_kv_get(d->meta.annotations, d->meta.n_annotations, DP_KUEUE_JOB_MIN_PARALLELISM);
        if (!v) return 0;
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 0 || n >= ps->count)
                return dp_error_set(err, -EINVAL,
                                    "%s: Job %s/%s: metadata.annotations[%s]: \"%s\": should be between 0 and %d "
                                    "(Kueue's webhook refuses the Job)",
                                    d->hdr.source ? d->hdr.source : "<input>", ps_ns(&d->meta), d->meta.name,
                                    DP_KUEUE_JOB_MIN_PARALLELISM, v, ps->count - 1);
        ps->has_min_count = true;
        ps->min_count = (int32_t)n;
        return 0;
}

static int from_job_or_pod(dp_queue *q, const dp_object_list *l, dp_object o, dp_error *err) {
        const dp_object_meta *m = dp_object_meta_of(o);
        const char *queue = dp_kv_get(m->labels, m->n_labels, DP_KUEUE_QUEUE_LABEL);
        /* a pod owned by something else (a Job's) is its owner's business,
         * as Kueue's pod integration leaves it; a pod group's pods are one
         * workload (podgroup.c) */
        if (!queue || (o.hdr->kind == DP_KIND_POD && (m->n_owner_references || q_is_group_pod(o)))) return 0;
        bool job = o.hdr->kind == DP_KIND_JOB;
        const dp_pod *tmpl = job ? o.deployment->template_ : o.pod;
        dp_queue_workload *w = q_new_workload(q, dp_kind_name(o.hdr->kind), m, queue);
        if (!w) return -ENOMEM;
        w->priority = q_priority_of(q, m, tmpl, &w->note);
        int r = q_add_podset(q, l, w, "main", job ? o.deployment->job_pods : 1, tmpl);
        return r >= 0 && job ? min_parallelism(o.deployment, &w->podsets[0], err) : r;
}

/* A JobSet (Kueue's jobset integration): one pod set per replicatedJob,
 * replicas × min(parallelism, completions) pods; each of its Jobs' names
 * indexed to it ("W\x1fJob\x1fns\x1f<jobset>-<rjob>-<i>"), so their pods
 * find it. */
static int from_jobset(dp_queue *q, const dp_object_list *l, const dp_jobset *js) {
        const dp_object_meta *m = &js->x.meta;
        const char *queue = dp_kv_get(m->labels, m->n_labels, DP_KUEUE_QUEUE_LABEL);
        if (!queue) return 0;
        dp_queue_workload *w = q_new_workload(q, "JobSet", m, queue);
        if (!w) return -ENOMEM;
        size_t wi = q->n_wl - 1;
        int r = 0;
        for (size_t k = 0; k < js->n_rjobs && r >= 0; k++) {
                const dp_jobset_rjob *rj = &js->rjobs[k];
                int64_t n = (int64_t)rj->replicas * rj->job->job_pods;
                r = q_add_podset(q, l, w, rj->name, (int32_t)DP_MIN(n, INT32_MAX), rj->job->template_);
                for (int32_t i = 0; i < rj->replicas && r >= 0; i++) {
                        char name[400];
                        q_jobset_job_name(js, rj, (size_t)i, name, sizeof(name));
                        r = q_index_put(q, (void *)(uintptr_t)(wi + 1), "W\x1fJob\x1f%s\x1f%s", w->ns, name);
                }
        }
        if (r >= 0) w->priority = q_priority_of(q, m, js->rjobs[0].job->template_, &w->note);
        return r;
}

static int from_workload(dp_queue *q, const dp_object_list *l, const dp_kq_workload *kw) {
        dp_queue_workload *w = q_new_workload(q, "Workload", &kw->x.meta, kw->queue_name);
        if (!w) return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < kw->n_podsets && r >= 0; i++)
                r = q_add_podset(q, l, w, kw->podsets[i].name, kw->podsets[i].count, kw->podsets[i].template_);
        for (size_t i = 0; i < kw->n_podsets && r >= 0; i++) {
                w->podsets[i].has_min_count = kw->podsets[i].has_min_count;
                w->podsets[i].min_count = kw->podsets[i].min_count;
        }
        if (r < 0) return r;
        if (kw->has_priority)
                w->priority = kw->priority;
        else if (kw->priority_class_name) {
                const dp_workload_priority_class *pc = find_wpc(q, kw->priority_class_name);
                w->priority = pc ? pc->value : 0;
        } else
                w->priority = kw->n_podsets ? pod_priority(q, kw->podsets[0].template_) : 0;
        return 0;
}

int q_workloads(dp_queue *q, const dp_object_list *l, dp_error *err) {
        int r = 0;
        for (size_t i = 0; i < l->n && r >= 0; i++)
                if (l->items[i].hdr->kind == DP_KIND_JOB || l->items[i].hdr->kind == DP_KIND_POD)
                        r = from_job_or_pod(q, l, l->items[i], err);
                else if (dp_is_jobset(l->items[i]))
                        r = from_jobset(q, l, (const dp_jobset *)l->items[i].ext);
                else
                        r = q_integration_workloads(q, l, l->items[i]);
        if (r == -EINVAL) return r;
        for (size_t i = 0; i < q->n_owned && r >= 0; i++)
                if (dp_queue_kind(q->owned[i]) == DP_KQ_WORKLOAD)
                        r = from_workload(q, l, (const dp_kq_workload *)q->owned[i].ext);
        if (r >= 0) r = q_pod_groups(q, l, err);
        if (r == -EINVAL) return r;
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

