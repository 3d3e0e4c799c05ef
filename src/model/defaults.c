/* SPDX-License-Identifier: Apache-2.0
 *
 * defaults.c — the defaults the API server applies to Nodes and Pods before
 * any scheduler reads them (SetObjectDefaults_Node/_Pod of core/v1, the
 * Priority and DefaultTolerationSeconds admission plugins), so that a dump
 * or a hand-written manifest is scheduled as the API server would have
 * stored it (model.h, docs/api-defaults.md).
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "model/model.h"
#include "model/validate.h"

#define DEFAULT_MAX_PODS 110           /* the kubelet's --max-pods default */
#define DEFAULT_TOLERATION_SECONDS 300 /* DefaultTolerationSeconds' default */
#define TAINT_NOT_READY "node.kubernetes.io/not-ready"
#define TAINT_UNREACHABLE "node.kubernetes.io/unreachable"

int dp_object_list_warn(dp_object_list *l, const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return dp_strv_push_n(&l->warnings, &l->n_warnings, buf);
}

static const dp_named_quantity *nq_find(const dp_named_quantity *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].name, name)) return &v[i];
        return NULL;
}

/* Append (name, value) to an array of named quantities. */
static int nq_append(dp_named_quantity **v, size_t *n, const char *name, dp_quantity value) {
        dp_named_quantity *x = realloc(*v, (*n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        *v = x;
        if (!(x[*n].name = dp_strdup(name))) return -ENOMEM;
        x[*n].value = value;
        (*n)++;
        return 0;
}

/* ---- Node ---- */

static int node_defaults(dp_object_list *l, dp_node *n) {
        int r = 0;
        if (n->n_allocatable == 0) /* SetDefaults_NodeStatus: allocatable = capacity */
                for (size_t i = 0; i < n->n_capacity && r >= 0; i++)
                        r = nq_append(&n->allocatable, &n->n_allocatable, n->capacity[i].name, n->capacity[i].value);
        if (r < 0 || nq_find(n->allocatable, n->n_allocatable, "pods")) return r;
        dp_quantity q;
        if (dp_quantity_parse("110", &q, NULL) < 0) return -EINVAL;
        if ((r = nq_append(&n->allocatable, &n->n_allocatable, "pods", q)) < 0) return r;
        return dp_object_list_warn(l, "%s: node %s has no pods in status.allocatable: %d assumed (the kubelet's default)",
                    n->hdr.source ? n->hdr.source : "<input>", n->meta.name, DEFAULT_MAX_PODS);
}

/* ---- Pod ---- */

/* SetDefaults_Container (via the pod): a resource in limits and not in
 * requests is requested at its limit. */
static int container_defaults(dp_container *c) {
        for (size_t i = 0; i < c->n_limits; i++) {
                if (nq_find(c->requests, c->n_requests, c->limits[i].name)) continue;
                int r = nq_append(&c->requests, &c->n_requests, c->limits[i].name, c->limits[i].value);
                if (r < 0) return r;
        }
        return 0;
}

bool dp_model_is_default_toleration(const dp_toleration *t) {
        return t->key && (streq(t->key, TAINT_NOT_READY) || streq(t->key, TAINT_UNREACHABLE)) && t->op &&
               streq(t->op, "Exists") && t->effect && streq(t->effect, "NoExecute") && t->has_toleration_seconds &&
               t->toleration_seconds == DEFAULT_TOLERATION_SECONDS;
}

/* DefaultTolerationSeconds: unless the pod already tolerates the taint key
 * (or every key) for NoExecute (or every effect). */
static int toleration_defaults(dp_pod *p) {
        static const char *const keys[] = {TAINT_NOT_READY, TAINT_UNREACHABLE};
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                bool has = false;
                for (size_t i = 0; i < p->n_tolerations && !has; i++) {
                        const dp_toleration *t = &p->tolerations[i];
                        has = (!t->key || !t->key[0] || streq(t->key, keys[k])) &&
                              (!t->effect || !t->effect[0] || streq(t->effect, "NoExecute"));
                }
                if (has) continue;
                dp_toleration *v = realloc(p->tolerations, (p->n_tolerations + 1) * sizeof(*v));
                if (!v) return -ENOMEM;
                p->tolerations = v;
                dp_toleration *t = &v[p->n_tolerations];
                *t = (dp_toleration){.has_toleration_seconds = true, .toleration_seconds = DEFAULT_TOLERATION_SECONDS};
                t->key = dp_strdup(keys[k]);
                t->op = dp_strdup("Exists");
                t->effect = dp_strdup("NoExecute");
                p->n_tolerations++;
                if (!t->key || !t->op || !t->effect) return -ENOMEM;
        }
        return 0;
}

/* The input's PriorityClasses sorted by name (the first of a name in input
 * order first), so a pod's class is a binary search: a scan of the list per
 * pod made 50,000 pods on a 60,000-object input quadratic (90 % of the
 * time, issue 25's bench). */
typedef struct class_at {
        const dp_priority_class *pc;
        size_t at; /* its index in the list: input order among equal names */
} class_at;

typedef struct classes {
        class_at *by_name;
        size_t n;
        const dp_priority_class *global_default; /* the highest globalDefault class */
} classes;

static const char *class_name(const dp_priority_class *pc) {
        return pc->meta.name ? pc->meta.name : "";
}

static int cmp_class(const void *a, const void *b) {
        const class_at *x = a, *y = b;
        int c = strcmp(class_name(x->pc), class_name(y->pc));
        return c ? c : (x->at > y->at) - (x->at < y->at);
}

static const dp_priority_class *class_find(const classes *cs, const char *name) {
        size_t lo = 0, hi = cs->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(class_name(cs->by_name[mid].pc), name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < cs->n && streq(class_name(cs->by_name[lo].pc), name) ? cs->by_name[lo].pc : NULL;
}

/* The Priority admission plugin. The two system classes exist in every
 * cluster; a class the input defines under their names wins. */
static int priority_defaults(dp_object_list *l, const classes *cs, dp_pod *p) {
        if (p->has_priority) return 0;
        int32_t value = 0;
        const char *policy = NULL;
        if (p->priority_class_name) {
                const dp_priority_class *pc = class_find(cs, p->priority_class_name);
                if (pc) {
                        value = pc->value;
                        policy = pc->preemption_policy;
                } else if (streq(p->priority_class_name, "system-cluster-critical"))
                        value = DP_PRIORITY_SYSTEM_CLUSTER_CRITICAL;
                else if (streq(p->priority_class_name, "system-node-critical"))
                        value = DP_PRIORITY_SYSTEM_NODE_CRITICAL;
                else {
                        int r = dp_object_list_warn(l,
                                     "%s: pod %s/%s: no PriorityClass \"%s\" (the API server would reject the pod): "
                                     "priority 0",
                                     p->hdr.source ? p->hdr.source : "<input>",
                                     p->meta.namespace ? p->meta.namespace : "default", p->meta.name,
                                     p->priority_class_name);
                        if (r < 0) return r;
                }
        } else if (cs->global_default) {
                value = cs->global_default->value;
                policy = cs->global_default->preemption_policy;
                if (!(p->priority_class_name = dp_strdup(cs->global_default->meta.name))) return -ENOMEM;
        }
        p->priority = value;
        p->has_priority = true;
        if (!p->preemption_policy && policy && !(p->preemption_policy = dp_strdup(policy))) return -ENOMEM;
        return 0;
}

/* Requests NodeResourcesFit checks that the scheduler does not count
 * (hugepages-*): named for a warning. */
static int unmodelled_resources(dp_pod *p) {
        for (int pass = 0; pass < 2; pass++) {
                const dp_container *v = pass ? p->init_containers : p->containers;
                size_t n = pass ? p->n_init_containers : p->n_containers;
                for (size_t i = 0; i < n; i++)
                        for (size_t k = 0; k < v[i].n_requests; k++) {
                                const char *name = v[i].requests[k].name;
                                if (!startswith(name, "hugepages-")) continue;
                                char what[300];
                                snprintf(what, sizeof(what), "spec.%s[%zu].resources.requests[%s]",
                                         pass ? "initContainers" : "containers", i, name);
                                if (dp_strv_push_n(&p->unmodelled, &p->n_unmodelled, what) < 0) return -ENOMEM;
                        }
        }
        return 0;
}

static int pod_defaults(dp_object_list *l, const classes *cs, dp_pod *p) {
        if (!p->scheduler_name && !(p->scheduler_name = dp_strdup("default-scheduler"))) return -ENOMEM;
        for (int pass = 0; pass < 2; pass++) {
                dp_container *v = pass ? p->init_containers : p->containers;
                size_t n = pass ? p->n_init_containers : p->n_containers;
                for (size_t i = 0; i < n; i++) {
                        int r = container_defaults(&v[i]);
                        if (r < 0) return r;
                }
        }
        /* pod-level resources (PodLevelResources) are defaulted the same way */
        for (size_t i = 0; i < p->n_pod_limits; i++) {
                if (nq_find(p->pod_requests, p->n_pod_requests, p->pod_limits[i].name)) continue;
                int r = nq_append(&p->pod_requests, &p->n_pod_requests, p->pod_limits[i].name, p->pod_limits[i].value);
                if (r < 0) return r;
        }
        int r = priority_defaults(l, cs, p);
        if (r >= 0) r = unmodelled_resources(p);
        if (r < 0) return r;
        if (!p->preemption_policy && !(p->preemption_policy = dp_strdup("PreemptLowerPriority"))) return -ENOMEM;
        return toleration_defaults(p);
}

#define UNMODELLED_WARNINGS_MAX 10 /* pods named; the others are counted */

/* One line per pod whose fields the scheduler does not model. */
static int unmodelled_warnings(dp_object_list *l) {
        size_t shown = 0, more = 0;
        for (size_t i = 0; i < l->n; i++) {
                const dp_pod *p = l->items[i].hdr->kind == DP_KIND_POD ? l->items[i].pod : NULL;
                if (!p || !p->n_unmodelled) continue;
                if (shown == UNMODELLED_WARNINGS_MAX) {
                        more++;
                        continue;
                }
                char fields[512] = "";
                for (size_t k = 0; k < p->n_unmodelled; k++)
                        snprintf(fields + strlen(fields), sizeof(fields) - strlen(fields), "%s%s", k ? ", " : "",
                                 p->unmodelled[k]);
                int r = dp_object_list_warn(l,
                             "%s: pod %s/%s: %s: not modelled (volumes: VolumeBinding, VolumeRestrictions, "
                             "VolumeZone, NodeVolumeLimits; hugepages: NodeResourcesFit): "
                             "placed as if they were not there",
                             p->hdr.source ? p->hdr.source : "<input>",
                             p->meta.namespace ? p->meta.namespace : "default", p->meta.name, fields);
                if (r < 0) return r;
                shown++;
        }
        return more ? dp_object_list_warn(l, "%zu more pods with fields that are not modelled", more) : 0;
}

int dp_model_apply_defaults(dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        classes cs = {0};
        _cleanup_free_ class_at *by_name = NULL;
        size_t cap = 0;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_PRIORITY_CLASS) continue;
                const dp_priority_class *pc = l->items[i].priority_class;
                if (DP_GROW(by_name, cap, cs.n + 1) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory while applying the API server's defaults");
                by_name[cs.n++] = (class_at){pc, i};
                if (pc->global_default && (!cs.global_default || pc->value > cs.global_default->value))
                        cs.global_default = pc;
        }
        if (cs.n) qsort(by_name, cs.n, sizeof(*by_name), cmp_class);
        cs.by_name = by_name;
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                int r = 0;
                if (o.hdr->kind == DP_KIND_NODE)
                        r = node_defaults(l, o.node);
                else if (o.hdr->kind == DP_KIND_POD)
                        r = pod_defaults(l, &cs, o.pod);
                if (r < 0) return dp_error_set(err, r, "out of memory while applying the API server's defaults");
        }
        if (unmodelled_warnings(l) < 0)
                return dp_error_set(err, -ENOMEM, "out of memory while applying the API server's defaults");
        return 0;
}
