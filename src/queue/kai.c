/* SPDX-License-Identifier: Apache-2.0
 *
 * kai.c — KAI-Scheduler's view of the input: its Queues (taken out of the
 * list), the queue tree, its PodGroups (scheduling.run.ai/v2alpha2, pods
 * joining with DP_KAI_GROUP_KEY) and bare pods labelled kai.scheduler/queue
 * with schedulerName kai-scheduler, each group's requests in KAI's units,
 * priority and preemptibility (KAI:docs/priority/README.md), and the
 * cluster's capacity (the allocatable of the input's Node objects).
 */
#include <stdio.h>

#include "base/hashmap.h"
#include "base/strv.h"
#include "queue/kai-internal.h"
#include "queue/queue-internal.h"

dp_kai *dp_kai_free(dp_kai *k) {
        if (!k) return NULL;
        for (size_t i = 0; i < k->n_q; i++)
                dp_free_many(k->q[i].name, k->q[i].running);
        for (size_t i = 0; i < k->n_pods; i++)
                free(k->pods[i].key);
        free(k->pods);
        dp_hashmap_free(k->pod_index);
        for (size_t i = 0; i < k->n_g; i++)
                dp_free_many(k->g[i].ns, k->g[i].name, k->g[i].queue, k->g[i].reason, k->g[i].message, k->g[i].by);
        for (size_t i = 0; i < k->n_queue_objs; i++)
                dp_object_free(k->queue_objs[i]);
        dp_free_many(k->q, k->g, k->queue_objs, k->nodes, k->fit_tree);
        free(k);
        return NULL;
}

bool dp_kai_input_has_queues(const dp_object_list *l) {
        for (size_t i = 0; l && i < l->n; i++)
                if (dp_kai_queue_of(l->items[i])) return true;
        return false;
}

int dp_kai_warn_input(dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        size_t n = 0;
        bool kueue = false;
        for (size_t i = 0; i < l->n; i++) {
                n += dp_kai_queue_of(l->items[i]) != NULL;
                kueue = kueue || dp_queue_kind(l->items[i]) != DP_KQ_NONE;
        }
        if (!n) return 0;
        int r = kueue ? dp_object_list_warn(l,
                                            "%zu KAI-Scheduler Queue(s) and Kueue objects in the input: Kueue's "
                                            "admission is used unless --queue-policy kai (KAI-Scheduler's fair share)",
                                            n)
                      : dp_object_list_warn(l,
                                            "%zu KAI-Scheduler Queue(s) in the input: KAI-Scheduler's fair share "
                                            "admits the pods of kai-scheduler unless --queue-policy says otherwise",
                                            n);
        return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
}

const dp_kai_group *dp_kai_group_of_pod(const dp_kai *k, const char *ns, const char *name) {
        char key[512];
        snprintf(key, sizeof(key), "%s/%s", ns && ns[0] ? ns : "default", name ? name : "");
        uintptr_t v = (uintptr_t)dp_hashmap_get(k->pod_index, key);
        return v ? &k->g[k->pods[v - 1].group] : NULL;
}

const dp_kai_queue *dp_kai_find_queue(const dp_kai *k, const char *name) {
        for (size_t i = 0; name && i < k->n_q; i++)
                if (streq(k->q[i].name, name)) return &k->q[i];
        return NULL;
}

const dp_kai_group *dp_kai_find(const dp_kai *k, const char *ns, const char *name) {
        for (size_t i = 0; i < k->n_g; i++)
                if (streq(k->g[i].ns, ns) && streq(k->g[i].name, name)) return &k->g[i];
        return NULL;
}

/* ---- queues ---- */

static int take_queues(dp_kai *k, dp_object_list *l, dp_error *err) {
        size_t n = 0, w = 0;
        for (size_t i = 0; i < l->n; i++)
                n += dp_kai_queue_of(l->items[i]) != NULL;
        if (n > DP_KAI_MAX_QUEUES) return dp_error_set(err, -E2BIG, "%zu KAI Queues: at most %d", n, DP_KAI_MAX_QUEUES);
        if (n && (!(k->queue_objs = calloc(n, sizeof(dp_object))) || !(k->q = calloc(n, sizeof(dp_kai_queue)))))
                return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n; i++) {
                const dp_kai_queue_obj *o = dp_kai_queue_of(l->items[i]);
                if (!o) {
                        l->items[w++] = l->items[i];
                        continue;
                }
                k->queue_objs[k->n_queue_objs++] = l->items[i];
                dp_kai_queue *q = &k->q[k->n_q++];
                if (!(q->name = strdup(o->ext.meta.name ? o->ext.meta.name : "")))
                        return dp_error_set(err, -ENOMEM, "out of memory");
                q->priority = o->priority;
                q->order = k->n_q - 1;
                q->leaf = true;
                for (int r = 0; r < DP_KAI_NRES; r++) {
                        q->deserved[r] = o->res[r].quota;
                        q->limit[r] = o->res[r].limit;
                        q->weight[r] = o->res[r].over_quota_weight;
                }
        }
        l->n = w;
        return 0;
}

static ssize_t queue_index(const dp_kai *k, const char *name) {
        for (size_t i = 0; name && i < k->n_q; i++)
                if (streq(k->q[i].name, name)) return (ssize_t)i;
        return -1;
}

/* Parents by name; a parent that does not exist makes a top queue (KAI
 * would not schedule under it: a warning says so); a cycle is an error. */
static int link_queues(dp_kai *k, dp_object_list *l, dp_error *err) {
        for (size_t i = 0; i < k->n_q; i++) {
                const dp_kai_queue_obj *o = dp_kai_queue_of(k->queue_objs[i]);
                ssize_t p = o->parent_queue && o->parent_queue[0] ? queue_index(k, o->parent_queue) : -1;
                if (p < 0 && o->parent_queue && o->parent_queue[0] &&
                    dp_object_list_warn(l, "KAI Queue %s: spec.parentQueue %s does not exist: taken as a top queue",
                                        k->q[i].name, o->parent_queue) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
                k->q[i].parent = p < 0 ? KAI_NONE : (size_t)p;
                if (p >= 0) k->q[p].leaf = false;
        }
        for (size_t i = 0; i < k->n_q; i++) {
                size_t steps = 0;
                for (size_t a = k->q[i].parent; a != KAI_NONE; a = k->q[a].parent)
                        if (++steps > k->n_q)
                                return dp_error_set(err, -EINVAL,
                                                    "KAI Queue %s: spec.parentQueue: the parents form a cycle",
                                                    k->q[i].name);
        }
        return 0;
}

/* ---- groups ---- */

/* The input's PriorityClasses, looked up per group (collected once). */
typedef struct classes {
        const dp_priority_class **v;
        size_t n;
} classes;

/* KAI's default priority classes (KAI:docs/priority/README.md), unless the
 * input has a PriorityClass of that name; none named: train. */
static int32_t class_value(const classes *pcs, const char *name) {
        if (!name || !name[0]) return 50;
        for (size_t i = 0; i < pcs->n; i++)
                if (streq_ptr(pcs->v[i]->meta.name, name)) return pcs->v[i]->value;
        static const struct {
                const char *name;
                int32_t value;
        } kai[] = {{"train", 50}, {"build-preemptible", 75}, {"build", 100}, {"inference", 125}};
        for (size_t i = 0; i < ELEMENTSOF(kai); i++)
                if (streq(kai[i].name, name)) return kai[i].value;
        return 50;
}

static dp_kai_group *new_group(dp_kai *k, const dp_object_meta *m, const char *queue) {
        if (DP_GROW(k->g, k->cap_g, k->n_g + 1) < 0) return NULL;
        dp_kai_group *g = &k->g[k->n_g];
        *g = (dp_kai_group){.order = k->n_g, .qi = KAI_NONE, .min_member = 1, .first_pod = KAI_NONE};
        g->ns = strdup(m->namespace && m->namespace[0] ? m->namespace : "default");
        g->name = strdup(m->name ? m->name : "");
        g->queue = queue ? strdup(queue) : NULL;
        k->n_g++;
        if (!g->ns || !g->name || (queue && !g->queue)) return NULL;
        ssize_t qi = queue_index(k, queue);
        g->qi = qi < 0 ? KAI_NONE : (size_t)qi;
        return g;
}

static void set_priority(dp_kai_group *g, const classes *pcs, const char *class, const char *preemptibility) {
        g->priority = class_value(pcs, class);
        if (preemptibility && streq(preemptibility, "non-preemptible"))
                g->preemptible = false;
        else if (preemptibility && (streq(preemptibility, "preemptible") || streq(preemptibility, "semi-preemptible")))
                g->preemptible = true;
        else
                g->preemptible = g->priority < DP_KAI_NON_PREEMPTIBLE_PRIORITY;
}

static int from_pod_group(dp_kai *k, const classes *pcs, const dp_pod_group *pg) {
        const char *queue = pg->queue ? pg->queue : dp_kv_get(pg->meta.labels, pg->meta.n_labels, DP_KAI_QUEUE_LABEL);
        dp_kai_group *g = new_group(k, &pg->meta, queue);
        if (!g) return -ENOMEM;
        g->min_member = pg->min_member > 0 ? pg->min_member : 1;
        g->pg = pg;
        set_priority(g, pcs, pg->priority_class_name, pg->preemptibility);
        return 0;
}

static bool kai_pod(const dp_pod *p) {
        return p->scheduler_name && streq(p->scheduler_name, DP_KAI_SCHEDULER_NAME) &&
               dp_kv_get(p->meta.labels, p->meta.n_labels, DP_KAI_QUEUE_LABEL);
}

void kai_pod_request(const dp_pod *p, double v[DP_KAI_NRES]) {
        v[DP_KAI_CPU] = (double)q_pod_value(p, "cpu");
        v[DP_KAI_MEMORY] = (double)q_pod_value(p, "memory") / 1e6;
        v[DP_KAI_GPU] = (double)q_pod_value(p, DP_KAI_GPU_RESOURCE);
}

void kai_node_allocatable(const dp_node *n, double v[DP_KAI_NRES]) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                v[r] = 0;
        for (size_t a = 0; a < n->n_allocatable; a++) {
                const dp_named_quantity *x = &n->allocatable[a];
                if (streq(x->name, "cpu"))
                        v[DP_KAI_CPU] = (double)dp_quantity_milli_value(&x->value);
                else if (streq(x->name, "memory"))
                        v[DP_KAI_MEMORY] = (double)dp_quantity_value(&x->value) / 1e6;
                else if (streq(x->name, DP_KAI_GPU_RESOURCE))
                        v[DP_KAI_GPU] = (double)dp_quantity_value(&x->value);
        }
}

static void add_pod(dp_kai_group *g, dp_kai_pod *kp) {
        kai_pod_request(kp->pod, kp->req);
        kp->running = kp->pod->node_name && kp->pod->node_name[0];
        for (int r = 0; r < DP_KAI_NRES; r++)
                (kp->running ? g->running : g->pending)[r] += kp->req[r];
        g->n_pods++;
        g->n_running += kp->running;
}

/* Objects by "ns/name" (the map's keys owned by keys[]): the PodGroups'
 * groups, the Jobs, the Jobs' groups, while the groups are read. */
typedef struct name_index {
        dp_hashmap *m;
        char **keys;
        size_t n, cap;
} name_index;

static void name_index_done(name_index *x) {
        dp_hashmap_free(x->m);
        dp_strv_free_n(x->keys, x->n);
}

static const char *ns_or_default(const char *ns) { return ns && ns[0] ? ns : "default"; }

/* v (not 0) under ns/name, unless that key has one already. */
static int name_put(name_index *x, const char *ns, const char *name, uintptr_t v) {
        if (!x->m && !(x->m = dp_hashmap_new())) return -ENOMEM;
        if (DP_GROW(x->keys, x->cap, x->n + 1) < 0) return -ENOMEM;
        char *key = dp_asprintf("%s/%s", ns_or_default(ns), name ? name : "");
        if (!key) return -ENOMEM;
        x->keys[x->n++] = key;
        return dp_hashmap_get(x->m, key) ? 0 : dp_hashmap_replace(x->m, key, (void *)v);
}

static uintptr_t name_get(const name_index *x, const char *ns, const char *name) {
        char key[512];
        if (!x->m || !name || (size_t)snprintf(key, sizeof(key), "%s/%s", ns_or_default(ns), name) >= sizeof(key))
                return 0;
        return (uintptr_t)dp_hashmap_get(x->m, key);
}

typedef struct groups_in {
        const classes *pcs;
        dp_object_list *l;
        name_index pod_groups, jobs, job_groups;
        dp_error *err;
} groups_in;

/* The KAI group a pod joins by its group's rule (dp_pod_group_has_member). */
static dp_kai_group *group_of(dp_kai *k, const groups_in *in, const dp_pod *p) {
        uintptr_t j = name_get(&in->pod_groups, p->meta.namespace, dp_pod_group_name(p));
        return j && dp_pod_group_has_member(k->g[j - 1].pg, p) ? &k->g[j - 1] : NULL;
}

/* The batch/v1 Job that controls p, when it is in the input. */
static const dp_deployment *job_of(const dp_object_list *l, const groups_in *in, const dp_pod *p) {
        for (size_t i = 0; i < p->meta.n_owner_references; i++) {
                const dp_owner_ref *o = &p->meta.owner_references[i];
                if (!o->controller || !streq_ptr(o->kind, "Job") || !streq_ptr(o->api_version, "batch/v1")) continue;
                uintptr_t at = name_get(&in->jobs, p->meta.namespace, o->name);
                return at ? l->items[at - 1].deployment : NULL;
        }
        return NULL;
}

/* KAI's podgrouper for a batch/v1 Job: one group for all its pods, its
 * queue the Job's label (else the pod's), minMember the Job's annotation
 * kai.scheduler/batch-min-member (else 1: the pods start independently);
 * a Job annotated kai.scheduler/skip-podgrouper "true" gets none (1: its
 * pods, naming no PodGroup, belong to no group and KAI starts none of
 * them). NULL with 0: p is not a Job's pod. */
static int job_group(dp_kai *k, groups_in *in, const dp_pod *p, dp_kai_group **ret) {
        const dp_deployment *job = job_of(in->l, in, p);
        const dp_object_meta *m = job ? &job->meta : NULL;
        const char *skip = m ? dp_kv_get(m->annotations, m->n_annotations, DP_KAI_SKIP_PODGROUPER) : NULL;
        const char *queue = m ? dp_kv_get(m->labels, m->n_labels, DP_KAI_QUEUE_LABEL) : NULL;
        if (!queue) queue = dp_kv_get(p->meta.labels, p->meta.n_labels, DP_KAI_QUEUE_LABEL);
        *ret = NULL;
        if (m && skip && streq(skip, "true")) return 1; /* no PodGroup, so KAI schedules none of its pods */
        if (!m || !queue) return 0;
        uintptr_t j = name_get(&in->job_groups, m->namespace, m->name);
        if (j) {
                *ret = &k->g[j - 1];
                return 0;
        }
        dp_kai_group *g = new_group(k, m, queue);
        if (!g || name_put(&in->job_groups, m->namespace, m->name, (uintptr_t)k->n_g) < 0) return -ENOMEM;
        g->from_job = true;
        set_priority(g, in->pcs, p->priority_class_name, NULL);
        const char *mm = dp_kv_get(m->annotations, m->n_annotations, DP_KAI_BATCH_MIN_MEMBER);
        char *end = NULL;
        long v = mm ? strtol(mm, &end, 10) : 1;
        if (mm && (!mm[0] || *end || v < 1 || v > INT32_MAX))
                return dp_error_set(in->err, -EINVAL,
                                    "%s: Job %s/%s: metadata.annotations[%s]: \"%s\": must be a positive integer",
                                    job->hdr.source ? job->hdr.source : "<input>", ns_or_default(m->namespace), m->name,
                                    DP_KAI_BATCH_MIN_MEMBER, mm);
        g->min_member = (int32_t)v;
        *ret = g;
        return 0;
}

/* A pod joins the KAI PodGroup it names; a labelled kai-scheduler pod
 * without one joins its Job's group (job_group), else is a group of its
 * own (what KAI's podgrouper makes for a bare pod). */
static int add_pods(dp_kai *k, groups_in *in) {
        const dp_object_list *l = in->l;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                const dp_pod *p = l->items[i].pod;
                dp_kai_group *g = group_of(k, in, p);
                bool kai = p->scheduler_name && streq(p->scheduler_name, DP_KAI_SCHEDULER_NAME);
                int r = !g && kai && !dp_pod_group_name(p) ? job_group(k, in, p, &g) : 0;
                if (r < 0) return r;
                if (r > 0) continue;
                if (!g && kai_pod(p) && !dp_pod_group_name(p)) {
                        if (!(g = new_group(k, &p->meta,
                                            dp_kv_get(p->meta.labels, p->meta.n_labels, DP_KAI_QUEUE_LABEL))))
                                return -ENOMEM;
                        g->bare_pod = true;
                        set_priority(g, in->pcs, p->priority_class_name, NULL);
                }
                if (!g) continue;
                if (DP_GROW(k->pods, k->cap_pods, k->n_pods + 1) < 0) return -ENOMEM;
                char *key =
                        dp_asprintf("%s/%s", p->meta.namespace && p->meta.namespace[0] ? p->meta.namespace : "default",
                                    p->meta.name ? p->meta.name : "");
                if (!key) return -ENOMEM;
                k->pods[k->n_pods] = (dp_kai_pod){.pod = l->items[i].pod,
                                                  .group = (size_t)(g - k->g),
                                                  .key = key,
                                                  .node = KAI_NONE,
                                                  .next = KAI_NONE};
                add_pod(g, &k->pods[k->n_pods++]);
                if (dp_hashmap_replace(k->pod_index, key, (void *)(uintptr_t)k->n_pods) < 0) return -ENOMEM;
        }
        for (size_t j = 0; j < k->n_g; j++) {
                dp_kai_group *g = &k->g[j];
                size_t n_pending = g->n_pods - g->n_running;
                for (int r = 0; r < DP_KAI_NRES; r++)
                        g->req[r] = n_pending ? g->pending[r] / (double)n_pending : 0;
                g->state = g->n_running ? DP_KAI_RUNNING : DP_KAI_PENDING;
        }
        return 0;
}

static int index_inputs(dp_kai *k, groups_in *in) {
        for (size_t j = 0; j < k->n_g; j++)
                if (name_put(&in->pod_groups, k->g[j].ns, k->g[j].name, j + 1) < 0) return -ENOMEM;
        for (size_t i = 0; i < in->l->n; i++) {
                const dp_object o = in->l->items[i];
                if (o.hdr->kind == DP_KIND_JOB &&
                    name_put(&in->jobs, o.deployment->meta.namespace, o.deployment->meta.name, i + 1) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int take_groups(dp_kai *k, dp_object_list *l, dp_error *err) {
        classes pcs = {NULL, 0};
        _cleanup_free_ const dp_priority_class **v = calloc(l->n + 1, sizeof(*v));
        if (!v) return dp_error_set(err, -ENOMEM, "out of memory");
        pcs.v = v;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_PRIORITY_CLASS) v[pcs.n++] = l->items[i].priority_class;
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind != DP_KIND_POD_GROUP || dp_pod_group_api_of(o.pod_group) != DP_POD_GROUP_KAI) continue;
                if (from_pod_group(k, &pcs, o.pod_group) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        }
        groups_in in = {.pcs = &pcs, .l = l, .err = err};
        int r = index_inputs(k, &in);
        if (r >= 0) r = add_pods(k, &in);
        name_index_done(&in.pod_groups);
        name_index_done(&in.jobs);
        name_index_done(&in.job_groups);
        return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : r; /* else err is set */
}

/* Capacity: the Node objects' allocatable; in use: every bound pod's
 * requests (KAI's groups' and any other pod's). */
static void capacity(dp_kai *k, const dp_object_list *l) {
        for (size_t i = 0; i < l->n; i++) {
                double v[DP_KAI_NRES];
                if (l->items[i].hdr->kind == DP_KIND_POD && l->items[i].pod->node_name)
                        kai_pod_request(l->items[i].pod, v);
                else if (l->items[i].hdr->kind == DP_KIND_NODE)
                        kai_node_allocatable(l->items[i].node, v);
                else
                        continue;
                for (int r = 0; r < DP_KAI_NRES; r++)
                        (l->items[i].hdr->kind == DP_KIND_NODE ? k->capacity : k->used)[r] += v[r];
        }
}

/* ---- accounting ---- */

void kai_charge(dp_kai *k, const dp_kai_group *g, const double v[DP_KAI_NRES], int sign) {
        for (int r = 0; r < DP_KAI_NRES; r++)
                k->used[r] += sign * v[r];
        for (size_t a = g->qi; a != KAI_NONE; a = k->q[a].parent)
                for (int r = 0; r < DP_KAI_NRES; r++) {
                        k->q[a].allocated[r] += sign * v[r];
                        if (!g->preemptible) k->q[a].allocated_np[r] += sign * v[r];
                }
}

void kai_account(dp_kai *k) {
        for (size_t i = 0; i < k->n_q; i++)
                for (int r = 0; r < DP_KAI_NRES; r++)
                        k->q[i].request[r] = k->q[i].allocated[r] = k->q[i].allocated_np[r] = 0;
        for (size_t i = 0; i < k->n_g; i++) {
                const dp_kai_group *g = &k->g[i];
                if (g->qi == KAI_NONE || !k->q[g->qi].leaf) continue;
                for (size_t a = g->qi; a != KAI_NONE; a = k->q[a].parent)
                        for (int r = 0; r < DP_KAI_NRES; r++) {
                                k->q[a].request[r] += g->running[r] + g->pending[r];
                                k->q[a].allocated[r] += g->running[r];
                                if (!g->preemptible) k->q[a].allocated_np[r] += g->running[r];
                        }
        }
}

int dp_kai_new(dp_object_list *l, dp_kai **ret, dp_error *err) {
        assert_return(l && ret, -EINVAL);
        _cleanup_(dp_kai_freep) dp_kai *k = calloc(1, sizeof(*k));
        if (!k || !(k->pod_index = dp_hashmap_new())) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = take_queues(k, l, err);
        if (r >= 0) r = link_queues(k, l, err);
        if (r >= 0) r = take_groups(k, l, err);
        if (r >= 0) r = kai_nodes_init(k, l, err);
        if (r < 0) return r;
        capacity(k, l);
        kai_account(k);
        for (size_t i = 0; i < k->n_g; i++) {
                dp_kai_group *g = &k->g[i];
                g->pg = NULL;
                if (g->qi == KAI_NONE || !g->n_running) continue;
                dp_kai_queue *q = &k->q[g->qi];
                size_t *v = realloc(q->running, (q->n_running + 1) * sizeof(*v));
                if (!v) return dp_error_set(err, -ENOMEM, "out of memory");
                q->running = v;
                q->running[q->n_running++] = i;
        }
        *ret = TAKE_PTR(k);
        return 0;
}
