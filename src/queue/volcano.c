/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano.c — a dp_volcano: the objects it was given (borrowed), the resource
 * dimensions, the tasks (pods of schedulerName volcano), the jobs (Volcano
 * PodGroups, and the one-pod group Volcano's PodGroup controller makes for a
 * pod without one) and the queues, then Volcano's sessions until one changes
 * nothing (queue/volcano-session.c), and the pods of Running jobs handed to
 * kube-scheduler.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "base/hashmap.h"
#include "base/strv.h"
#include "queue/queue-internal.h"
#include "queue/volcano-internal.h"

int dp_volcano_warn_input(dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        size_t n = 0;
        for (size_t i = 0; i < l->n; i++)
                n += dp_volcano_is_queue(l->items[i]);
        if (!n) return 0;
        int r = dp_object_list_warn(
                l,
                "%zu Volcano Queue(s) in the input: Volcano's admission runs only with --queue-policy "
                "volcano (without it the pods of schedulerName volcano stay Pending: no scheduler "
                "of that name)",
                n);
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

int dp_volcano_new(const dp_volcano_options *o, dp_volcano **ret) {
        assert_return(ret, -EINVAL);
        dp_volcano *v = calloc(1, sizeof(*v));
        if (!v) return -ENOMEM;
        if (o) v->opts = *o;
        *ret = v;
        return 0;
}

static void job_done(dp_vc_job *j) {
        dp_free_many(j->ns, j->name, j->queue, j->created, j->tasks, j->min_res, j->reason, j->message, j->note);
}

dp_volcano *dp_volcano_free(dp_volcano *v) {
        if (!v) return NULL;
        vc_dra_done(v);
        dp_hashmap_free(v->task_index);
        for (size_t i = 0; i < v->n_tasks; i++)
                dp_free_many(v->tasks[i].req, v->tasks[i].key);
        for (size_t i = 0; i < v->n_jobs; i++)
                job_done(&v->jobs[i]);
        dp_strv_free_n(v->dims, v->n_dims);
        dp_strv_free_n(v->other_keys, v->n_others);
        dp_free_many(v->nodes, v->pods, v->others, v->other_reqs, v->other_gone, v->other_used, v->groups, v->queues,
                     v->pcs, v->total, v->tasks, v->jobs, v->qs, v->qblock);
        free(v);
        return NULL;
}

/* Append p to an array of pointers grown one at a time. */
static int push_ptr(void *arr, size_t *n, const void *p) {
        const void ***a = arr;
        const void **x = realloc(*a, (*n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        x[(*n)++] = p;
        *a = x;
        return 0;
}

static bool volcano_pod(const dp_pod *p) {
        return p->scheduler_name && streq(p->scheduler_name, DP_VOLCANO_SCHEDULER_NAME);
}

int dp_volcano_add(dp_volcano *v, dp_object o, dp_error *err) {
        assert_return(v && o.hdr, -EINVAL);
        int r = 0;
        switch (o.hdr->kind) {
        case DP_KIND_NODE: r = push_ptr(&v->nodes, &v->n_nodes, o.node); break;
        case DP_KIND_POD:
                if (volcano_pod(o.pod))
                        r = push_ptr(&v->pods, &v->n_pods, o.pod);
                else if (o.pod->node_name)
                        r = push_ptr(&v->others, &v->n_others, o.pod);
                break;
        case DP_KIND_POD_GROUP:
                if (dp_pod_group_api_of(o.pod_group) == DP_POD_GROUP_VOLCANO)
                        r = push_ptr(&v->groups, &v->n_groups, o.pod_group);
                break;
        case DP_KIND_PRIORITY_CLASS: r = push_ptr(&v->pcs, &v->n_pcs, o.priority_class); break;
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: r = push_ptr(&v->templates, &v->n_templates, o.claim_template); break;
        case DP_KIND_RESOURCE_CLAIM: r = push_ptr(&v->rclaims, &v->n_rclaims, o.claim); break;
        case DP_KIND_EXT:
                if (dp_volcano_is_queue(o)) r = push_ptr(&v->queues, &v->n_queues, o.ext);
                break;
        default: break;
        }
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

/* ---- dimensions ---- */

/* What Volcano counts as a dimension: cpu, memory and scalar resources
 * (extended resources, hugepages-*); pods and ephemeral-storage are left out
 * here (docs/queues-volcano.md). */
static bool counted(const char *name) {
        if (vc_dra_key(name)) return false; /* the capacity plugin's DRA quota (volcano-dra.c) */
        return streq(name, "cpu") || streq(name, "memory") || startswith(name, "hugepages-") ||
               dp_is_extended_resource_name(name);
}

ssize_t dp_volcano_dim(const dp_volcano *v, const char *resource) {
        for (size_t i = 0; i < v->n_dims; i++)
                if (streq(v->dims[i], resource)) return (ssize_t)i;
        return -1;
}

static int add_dims(dp_volcano *v, const dp_named_quantity *q, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (counted(q[i].name) && dp_volcano_dim(v, q[i].name) < 0 &&
                    dp_strv_push_n(&v->dims, &v->n_dims, q[i].name) < 0)
                        return -ENOMEM;
        return 0;
}

static int add_container_dims(dp_volcano *v, const dp_container *c, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (add_dims(v, c[i].requests, c[i].n_requests) < 0 || add_dims(v, c[i].limits, c[i].n_limits) < 0)
                        return -ENOMEM;
        return 0;
}

static int cmp_dim(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int collect_dims(dp_volcano *v) {
        if (dp_strv_push_n(&v->dims, &v->n_dims, "cpu") < 0 || dp_strv_push_n(&v->dims, &v->n_dims, "memory") < 0)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < v->n_nodes; i++)
                r = add_dims(v, v->nodes[i]->allocatable, v->nodes[i]->n_allocatable);
        for (size_t i = 0; r >= 0 && i < v->n_pods; i++) {
                const dp_pod *p = v->pods[i];
                r = add_container_dims(v, p->containers, p->n_containers);
                if (r >= 0) r = add_container_dims(v, p->init_containers, p->n_init_containers);
        }
        for (size_t i = 0; r >= 0 && i < v->n_groups; i++)
                r = add_dims(v, v->groups[i]->min_resources, v->groups[i]->n_min_resources);
        for (size_t i = 0; r >= 0 && i < v->n_queues; i++) {
                const dp_vc_queue *q = v->queues[i];
                r = add_dims(v, q->capability, q->n_capability);
                if (r >= 0) r = add_dims(v, q->deserved, q->n_deserved);
                if (r >= 0) r = add_dims(v, q->guarantee, q->n_guarantee);
        }
        if (r >= 0 && v->n_dims > 2) qsort(v->dims + 2, v->n_dims - 2, sizeof(char *), cmp_dim);
        return r;
}

double *vc_vec_new(const dp_volcano *v) { return calloc(v->n_dims + 1, sizeof(double)); }

/* Volcano's unit of a value: millicores, bytes, milli-units. */
static double unit_value(const char *name, const dp_quantity *q) {
        if (streq(name, "memory")) return (double)dp_quantity_value(q);
        return (double)dp_quantity_milli_value(q);
}

void vc_vec_from(const dp_volcano *v, const dp_named_quantity *q, size_t n, double *out) {
        for (size_t i = 0; i < n; i++) {
                ssize_t d = dp_volcano_dim(v, q[i].name);
                if (d >= 0) out[d] = unit_value(q[i].name, &q[i].value);
        }
}

void dp_volcano_format(const dp_volcano *v, size_t dim, double value, char *buf, size_t size) {
        const char *name = v->dims[dim];
        if (!(fabs(value) < 9e18)) { /* beyond int64 (sums of huge quantities): no unit */
                snprintf(buf, size, "%g", value);
                return;
        }
        int64_t x = (int64_t)(value + (value < 0 ? -0.5 : 0.5));
        if (streq(name, "memory") || streq(name, "cpu"))
                q_format(name, x, buf, size); /* bytes; millicores as Kueue prints them */
        else if (x % 1000 == 0)
                q_format(name, x / 1000, buf, size); /* milli-units, whole */
        else
                snprintf(buf, size, "%" PRId64 "m", x);
}

/* ---- tasks, jobs, queues ---- */

static const char *ns_of(const dp_object_meta *m) { return m->namespace && m->namespace[0] ? m->namespace : "default"; }

static int32_t class_value(const dp_volcano *v, const char *name, bool *found) {
        for (size_t i = 0; i < v->n_pcs; i++)
                if (name ? streq(v->pcs[i]->meta.name, name) : v->pcs[i]->global_default) {
                        *found = true;
                        return v->pcs[i]->value;
                }
        *found = false;
        return 0;
}

/* A priorityClassName's value, else the global default's, else 0 (the API
 * server's Priority admission, which Volcano's priority plugin reads back). */
static int32_t priority_of(const dp_volcano *v, const char *class_name) {
        bool found = false;
        int32_t p = class_name ? class_value(v, class_name, &found) : 0;
        return found ? p : class_value(v, NULL, &found);
}

/* Volcano's api.GetPodPreemptable: the annotation volcano.sh/preemptable,
 * else the label, parsed as Go's strconv.ParseBool (a bad value is false);
 * neither: true. */
static bool pod_preemptable(const dp_pod *p) {
        const char *x = dp_kv_get(p->meta.annotations, p->meta.n_annotations, VC_PREEMPTABLE_KEY);
        if (!x) x = dp_kv_get(p->meta.labels, p->meta.n_labels, VC_PREEMPTABLE_KEY);
        if (!x) return true;
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (streq(x, yes[i])) return true;
        return false;
}

/* conformance's rule: no pod of kube-system, none of the two system
 * critical classes. */
static bool pod_critical(const dp_pod *p) {
        const char *c = p->priority_class_name;
        return streq(ns_of(&p->meta), "kube-system") ||
               (c && (streq(c, "system-cluster-critical") || streq(c, "system-node-critical")));
}

static int make_tasks(dp_volcano *v) {
        if (!(v->tasks = calloc(v->n_pods + 1, sizeof(*v->tasks))) || !(v->task_index = dp_hashmap_new()) ||
            dp_hashmap_reserve(v->task_index, v->n_pods) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_pods; i++) {
                vtask *t = &v->tasks[v->n_tasks++];
                t->pod = v->pods[i];
                t->job = t->evicted_for = -1;
                t->order = i;
                t->bound = t->allocated = t->pod->node_name != NULL;
                t->priority = t->pod->has_priority ? t->pod->priority : priority_of(v, t->pod->priority_class_name);
                t->preemptable = pod_preemptable(t->pod);
                t->critical = pod_critical(t->pod);
                t->never = streq_ptr(t->pod->preemption_policy, "Never");
                t->key = dp_asprintf("%s/%s", ns_of(&t->pod->meta), t->pod->meta.name ? t->pod->meta.name : "");
                if (!(t->req = vc_vec_new(v)) || !t->key) return -ENOMEM;
                /* the first pod of a key wins, as the linear search did */
                int r = dp_hashmap_put(v->task_index, t->key, (void *)(uintptr_t)v->n_tasks);
                if (r < 0 && r != -EEXIST) return r;
                for (size_t d = 0; d < v->n_dims; d++)
                        t->req[d] = (double)q_pod_value(t->pod, v->dims[d]) * (d < 2 ? 1 : 1000); /* milli-units */
        }
        return 0;
}

static dp_vc_job *new_job(dp_volcano *v, const dp_object_meta *m, const char *name, const char *queue) {
        dp_vc_job *j = &v->jobs[v->n_jobs];
        *j = (dp_vc_job){.q = -1, .order = v->n_jobs};
        v->n_jobs++;
        j->ns = dp_strdup(ns_of(m));
        j->name = dp_strdup(name);
        j->queue = dp_strdup(queue && queue[0] ? queue : DP_VOLCANO_DEFAULT_QUEUE);
        j->created = m->creation_timestamp ? dp_strdup(m->creation_timestamp) : NULL;
        j->min_res = vc_vec_new(v);
        if (!j->ns || !j->name || !j->queue || (m->creation_timestamp && !j->created) || !j->min_res) return NULL;
        return j;
}

static int add_task(dp_vc_job *j, vtask *t, size_t ti, ssize_t job) {
        size_t *x = realloc(j->tasks, (j->n_tasks + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        x[j->n_tasks++] = ti;
        j->tasks = x;
        t->job = job;
        return 0;
}

static int group_jobs(dp_volcano *v) {
        for (size_t g = 0; g < v->n_groups; g++) {
                const dp_pod_group *pg = v->groups[g];
                dp_vc_job *j = new_job(v, &pg->meta, pg->meta.name, pg->queue);
                if (!j) return -ENOMEM;
                j->min_member = pg->min_member;
                j->priority = priority_of(v, pg->priority_class_name);
                j->has_min_resources = pg->n_min_resources > 0;
                vc_vec_from(v, pg->min_resources, pg->n_min_resources, j->min_res);
                for (size_t i = 0; i < v->n_tasks; i++) {
                        vtask *t = &v->tasks[i];
                        if (t->job < 0 && streq(ns_of(&t->pod->meta), j->ns) && dp_pod_group_has_member(pg, t->pod) &&
                            add_task(j, t, i, (ssize_t)(v->n_jobs - 1)) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Volcano's PodGroup controller gives a pod of schedulerName volcano without
 * a group one of its own: minMember 1, the pod's requests as minResources,
 * its priority class, the queue of its annotation. Named "podgroup-<pod>"
 * here (Volcano: "podgroup-<pod UID>"; devplane has no UIDs). */
static int implicit_jobs(dp_volcano *v) {
        for (size_t i = 0; i < v->n_tasks; i++) {
                vtask *t = &v->tasks[i];
                if (t->job >= 0 || dp_pod_group_name(t->pod)) continue;
                const dp_object_meta *m = &t->pod->meta;
                _cleanup_free_ char *name = dp_asprintf("podgroup-%s", m->name ? m->name : "");
                if (!name) return -ENOMEM;
                dp_vc_job *j =
                        new_job(v, m, name, dp_kv_get(m->annotations, m->n_annotations, DP_VOLCANO_QUEUE_ANNOTATION));
                if (!j || add_task(j, t, i, (ssize_t)(v->n_jobs - 1)) < 0) return -ENOMEM;
                j->implicit = true;
                j->min_member = 1;
                j->priority = t->priority;
                j->has_min_resources = true;
                memcpy(j->min_res, t->req, v->n_dims * sizeof(double));
        }
        return 0;
}

static int cmp_queue_info(const void *a, const void *b) {
        return strcmp(((const dp_vc_queue_info *)a)->name, ((const dp_vc_queue_info *)b)->name);
}

ssize_t vc_queue_index(const dp_volcano *v, const char *name) {
        dp_vc_queue_info key = {.name = name};
        const dp_vc_queue_info *q = v->n_qs ? bsearch(&key, v->qs, v->n_qs, sizeof(key), cmp_queue_info) : NULL;
        return q ? q - v->qs : -1;
}

/* Every Queue of the input, and "default" (Volcano installs it, weight 1)
 * when the input does not have it. */
static int make_queues(dp_volcano *v, dp_error *err) {
        if (!(v->qs = calloc(v->n_queues + 2, sizeof(*v->qs)))) return -ENOMEM;
        bool has_default = false;
        for (size_t i = 0; i < v->n_queues; i++) {
                const char *name = v->queues[i]->x.meta.name;
                for (size_t k = 0; k < i; k++)
                        if (streq(v->queues[k]->x.meta.name, name))
                                return dp_error_set(err, -EINVAL, "%s: Queue %s: defined twice",
                                                    v->queues[i]->x.hdr.source ? v->queues[i]->x.hdr.source : "<input>",
                                                    name);
                v->qs[v->n_qs++] = (dp_vc_queue_info){.queue = v->queues[i], .name = name};
                has_default = has_default || streq(name, DP_VOLCANO_DEFAULT_QUEUE);
        }
        if (!has_default) v->qs[v->n_qs++] = (dp_vc_queue_info){.name = DP_VOLCANO_DEFAULT_QUEUE};
        qsort(v->qs, v->n_qs, sizeof(*v->qs), cmp_queue_info);
        size_t per = 6 * (v->n_dims + 1);
        if (!(v->qblock = calloc(v->n_qs * per + 1, sizeof(double)))) return -ENOMEM;
        for (size_t i = 0; i < v->n_qs; i++) {
                double *b = v->qblock + i * per;
                dp_vc_queue_info *q = &v->qs[i];
                q->deserved = b, q->allocated = b + per / 6, q->request = b + 2 * per / 6;
                q->real_capability = b + 3 * per / 6, q->guarantee = b + 4 * per / 6, q->inqueue = b + 5 * per / 6;
                if (q->queue) vc_vec_from(v, q->queue->guarantee, q->queue->n_guarantee, q->guarantee);
        }
        for (size_t j = 0; j < v->n_jobs; j++)
                v->jobs[j].q = vc_queue_index(v, v->jobs[j].queue);
        return vc_dra_setup(v) < 0 ? dp_error_set(err, -ENOMEM, "out of memory") : 0;
}

/* The bound pods of other schedulers: their keys and requests, kept for
 * dp_volcano_pod_deleted, and their sum. */
static int other_pods(dp_volcano *v) {
        size_t n = v->n_others;
        if (!(v->other_used = vc_vec_new(v)) || !(v->other_keys = calloc(n + 1, sizeof(char *))) ||
            !(v->other_reqs = calloc(n * v->n_dims + 1, sizeof(double))) ||
            !(v->other_gone = calloc(n + 1, sizeof(bool))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const dp_pod *p = v->others[i];
                if (!(v->other_keys[i] = dp_asprintf("%s/%s", ns_of(&p->meta), p->meta.name ? p->meta.name : "")))
                        return -ENOMEM;
                for (size_t d = 0; d < v->n_dims; d++) {
                        double x = (double)q_pod_value(p, v->dims[d]) * (d < 2 ? 1 : 1000);
                        v->other_reqs[i * v->n_dims + d] = x;
                        v->other_used[d] += x;
                }
        }
        return 0;
}

static int setup(dp_volcano *v, dp_error *err) {
        for (size_t i = 0; i < v->n_groups; i++)
                for (size_t k = 0; k < i; k++)
                        if (streq(ns_of(&v->groups[i]->meta), ns_of(&v->groups[k]->meta)) &&
                            streq_ptr(v->groups[i]->meta.name, v->groups[k]->meta.name))
                                return dp_error_set(err, -EINVAL, "PodGroup %s/%s: defined twice",
                                                    ns_of(&v->groups[i]->meta), v->groups[i]->meta.name);
        int r = collect_dims(v);
        if (r >= 0 && !(v->total = vc_vec_new(v))) r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < v->n_nodes; i++) {
                double *a = vc_vec_new(v);
                if (!a) return dp_error_set(err, -ENOMEM, "out of memory");
                vc_vec_from(v, v->nodes[i]->allocatable, v->nodes[i]->n_allocatable, a);
                for (size_t d = 0; d < v->n_dims; d++)
                        v->total[d] += a[d];
                free(a);
        }
        if (r >= 0) r = other_pods(v);
        if (r >= 0) r = make_tasks(v);
        if (r >= 0 && !(v->jobs = calloc(v->n_groups + v->n_tasks + 1, sizeof(*v->jobs)))) r = -ENOMEM;
        if (r >= 0) r = group_jobs(v);
        if (r >= 0) r = implicit_jobs(v);
        if (r < 0) return dp_error_set(err, r, "out of memory");
        /* a job whose bound pods already reach minMember runs (its PodGroup's
         * status, which devplane does not read, would say Running) */
        for (size_t j = 0; j < v->n_jobs; j++) {
                size_t bound = 0;
                for (size_t k = 0; k < v->jobs[j].n_tasks; k++)
                        bound += v->tasks[v->jobs[j].tasks[k]].bound;
                if (bound && bound >= (size_t)DP_MAX(v->jobs[j].min_member, 1)) v->jobs[j].phase = DP_VC_RUNNING;
        }
        return make_queues(v, err);
}

/* Sessions until one moves no job (a quiet cluster settles); each moves at
 * least one job a phase on, so jobs × 2 + 1 bound the loop; then the
 * queues' counts of their jobs' phases. */
static int sessions(dp_volcano *v, dp_error *err) {
        int r = 0;
        for (size_t s = 0; r >= 0 && s < 2 * v->n_jobs + 1; s++) {
                bool changed = false;
                v->sessions++;
                r = vc_session(v, &changed, err);
                if (!changed) break;
        }
        for (size_t q = 0; q < v->n_qs; q++)
                v->qs[q].running = v->qs[q].inqueued = v->qs[q].pending = 0;
        for (size_t j = 0; r >= 0 && j < v->n_jobs; j++) {
                if (v->jobs[j].q < 0) continue;
                dp_vc_queue_info *q = &v->qs[v->jobs[j].q];
                dp_vc_phase p = v->jobs[j].phase;
                size_t *n = p == DP_VC_RUNNING ? &q->running : p == DP_VC_INQUEUE ? &q->inqueued : &q->pending;
                (*n)++;
        }
        return r;
}

int dp_volcano_prepare(dp_volcano *v, dp_error *err) {
        assert_return(v && !v->jobs, -EINVAL);
        return setup(v, err);
}

int dp_volcano_run(dp_volcano *v, dp_error *err) {
        int r = dp_volcano_prepare(v, err);
        return r < 0 ? r : sessions(v, err);
}

int dp_volcano_resume(dp_volcano *v, dp_error *err) {
        assert_return(v && v->jobs, -EINVAL);
        return sessions(v, err);
}

int dp_volcano_apply(dp_volcano *v) {
        assert_return(v, -EINVAL);
        for (size_t j = 0; j < v->n_jobs; j++) {
                if (v->jobs[j].phase != DP_VC_RUNNING) continue;
                for (size_t k = 0; k < v->jobs[j].n_tasks; k++) {
                        if (!v->tasks[v->jobs[j].tasks[k]].allocated) continue; /* an elastic job's extra pods wait */
                        dp_pod *p = v->tasks[v->jobs[j].tasks[k]].pod;
                        free(p->scheduler_name);
                        p->scheduler_name = NULL;
                }
        }
        return 0;
}

size_t dp_volcano_n_jobs(const dp_volcano *v) { return v ? v->n_jobs : 0; }
const dp_vc_job *dp_volcano_job_at(const dp_volcano *v, size_t i) { return v && i < v->n_jobs ? &v->jobs[i] : NULL; }

const dp_vc_job *dp_volcano_find_job(const dp_volcano *v, const char *ns, const char *name) {
        for (size_t i = 0; v && i < v->n_jobs; i++)
                if (streq(v->jobs[i].ns, ns) && streq(v->jobs[i].name, name)) return &v->jobs[i];
        return NULL;
}

size_t dp_volcano_n_queues(const dp_volcano *v) { return v ? v->n_qs : 0; }
const dp_vc_queue_info *dp_volcano_queue_at(const dp_volcano *v, size_t i) {
        return v && i < v->n_qs ? &v->qs[i] : NULL;
}

const dp_vc_queue_info *dp_volcano_find_queue(const dp_volcano *v, const char *name) {
        ssize_t i = v ? vc_queue_index(v, name) : -1;
        return i >= 0 ? &v->qs[i] : NULL;
}

static const vtask *task_of(const dp_volcano *v, const char *ns, const char *name) {
        char key[600];
        snprintf(key, sizeof(key), "%s/%s", ns, name);
        uintptr_t i = v && v->task_index ? (uintptr_t)dp_hashmap_get(v->task_index, key) : 0;
        return i ? &v->tasks[i - 1] : NULL;
}

int dp_volcano_pod_deleted(dp_volcano *v, const char *ns, const char *name) {
        assert_return(v && ns && name, -EINVAL);
        vtask *t = (vtask *)task_of(v, ns, name);
        if (t) {
                if (t->gone) return 0;
                bool counted = t->allocated || vc_pending(t); /* an evicted task counts for nothing already */
                t->gone = true;
                t->allocated = false; /* what it held is free; the sessions count again */
                return counted;
        }
        char key[600];
        snprintf(key, sizeof(key), "%s/%s", ns, name);
        for (size_t i = 0; v->other_keys && i < v->n_others; i++) {
                if (v->other_gone[i] || !streq(v->other_keys[i], key)) continue;
                v->other_gone[i] = true;
                for (size_t d = 0; d < v->n_dims; d++)
                        v->other_used[d] -= v->other_reqs[i * v->n_dims + d];
                return 1;
        }
        return 0;
}

int dp_volcano_set_bound(dp_volcano *v, const dp_pod *const *pods, size_t n) {
        assert_return(v && (pods || !n), -EINVAL);
        if (!v->other_used) return 0;
        memset(v->other_used, 0, v->n_dims * sizeof(double));
        for (size_t i = 0; i < n; i++) {
                const dp_pod *p = pods[i];
                if (!p->node_name || task_of(v, ns_of(&p->meta), p->meta.name ? p->meta.name : "")) continue;
                for (size_t d = 0; d < v->n_dims; d++)
                        v->other_used[d] += (double)q_pod_value(p, v->dims[d]) * (d < 2 ? 1 : 1000);
        }
        return 0;
}

int dp_volcano_pod_created(dp_volcano *v, const char *ns, const char *name) {
        assert_return(v && ns && name, -EINVAL);
        vtask *t = (vtask *)task_of(v, ns, name);
        if (!t || !t->gone) return 0;
        t->gone = false;
        return 1;
}

bool dp_volcano_pod_allocated(const dp_volcano *v, const char *ns, const char *name) {
        const vtask *t = task_of(v, ns, name);
        return t && t->allocated;
}

const char *dp_volcano_pod_reason(const dp_volcano *v, const char *ns, const char *name, char *buf, size_t size) {
        const vtask *t = task_of(v, ns, name);
        if (!t || t->job < 0 || t->allocated) return NULL;
        if (t->evicted_for >= 0) return dp_volcano_pod_evicted(v, ns, name, buf, size);
        const dp_vc_job *j = &v->jobs[t->job];
        const char *why = j->message                  ? j->message
                          : j->note                   ? j->note
                          : j->phase == DP_VC_RUNNING ? "not allocated with its group"
                                                      : "waiting";
        snprintf(buf, size, "Volcano: PodGroup %s/%s %s: %s", j->ns, j->name,
                 j->phase == DP_VC_RUNNING   ? "Running"
                 : j->phase == DP_VC_INQUEUE ? "Inqueue"
                                             : "Pending",
                 why);
        return buf;
}

const char *dp_volcano_pod_evicted(const dp_volcano *v, const char *ns, const char *name, char *buf, size_t size) {
        const vtask *t = task_of(v, ns, name);
        if (!t || t->evicted_for < 0) return NULL;
        const dp_vc_job *by = &v->jobs[t->evicted_for], *own = &v->jobs[t->job];
        if (t->by_preempt)
                snprintf(buf, size,
                         "Volcano preempt: evicted for PodGroup %s/%s of queue %s (priority %d over PodGroup %s/%s's "
                         "%d)",
                         by->ns, by->name, by->queue, by->priority, own->ns, own->name, own->priority);
        else
                snprintf(buf, size,
                         "Volcano reclaim: evicted for PodGroup %s/%s of queue %s (queue %s above its deserved)",
                         by->ns, by->name, by->queue, own->queue);
        return buf;
}

int dp_volcano_options_actions(dp_volcano_options *o, const char *list, dp_error *err) {
        bool allocate = false, reclaim = false, preempt = false;
        for (const char *p = list; *p;) {
                p += strspn(p, " ,");
                size_t n = strcspn(p, " ,");
                if (!n) break;
                char w[32];
                snprintf(w, sizeof(w), "%.*s", (int)DP_MIN(n, sizeof(w) - 1), p);
                if (streq(w, "allocate"))
                        allocate = true;
                else if (streq(w, "reclaim"))
                        reclaim = true;
                else if (streq(w, "preempt"))
                        preempt = true;
                else if (!streq(w, "enqueue") && !streq(w, "backfill"))
                        return dp_error_set(err, -EINVAL,
                                            "--volcano-actions: action \"%s\" is not simulated (enqueue, allocate, "
                                            "backfill, preempt, reclaim)",
                                            w);
                p += n;
        }
        if (!allocate) return dp_error_set(err, -EINVAL, "--volcano-actions %s: allocate is required", list);
        o->reclaim = reclaim;
        o->preempt = preempt;
        return 0;
}

const char *dp_volcano_plugin_name(const dp_volcano *v) {
        return v->opts.plugin == DP_VC_CAPACITY ? "capacity" : "proportion";
}
