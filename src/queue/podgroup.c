/* SPDX-License-Identifier: Apache-2.0
 *
 * podgroup.c — Kueue's pod groups (pod integration, KEP-976 "groups of Pods
 * created beforehand"; pkg/controller/jobs/pod): plain Pods labelled
 * kueue.x-k8s.io/queue-name and kueue.x-k8s.io/pod-group-name, each
 * annotated kueue.x-k8s.io/pod-group-total-count, are one workload named
 * after the group. Kueue creates it once total-count pods exist; its pod
 * sets are the pods' roles (pods whose admission-relevant fields are equal
 * share one, counted), named by the role hash. Admitted, every pod is
 * ungated with its pod set's flavors; until then every pod keeps the
 * scheduling gate.
 *
 * Kueue's role hash is the first 8 hex digits of a sha256 over the pod's
 * role as JSON; devplane's is its own 8 hex digits (FNV-1a) over the same
 * fields as it reads them (containers' and init containers' names, images,
 * requests and limits; nodeSelector, required node affinity, tolerations,
 * priority, overhead), so the names differ from Kueue's and
 * the grouping is the same. A kueue.x-k8s.io/role-hash annotation is used
 * as written, as Kueue does.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

/* ---- roles ---- */

static void mix(uint32_t *h, const char *s) {
        for (const unsigned char *p = (const unsigned char *)(s ? s : "\x01"); *p; p++)
                *h = (*h ^ *p) * 16777619u;
        *h = (*h ^ 0x1f) * 16777619u; /* a separator: "ab","c" is not "a","bc" */
}

static void mix_quantities(uint32_t *h, const dp_named_quantity *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char q[DP_QUANTITY_MAX_LEN];
                dp_quantity_format(&v[i].value, q, sizeof(q));
                mix(h, v[i].name);
                mix(h, q);
        }
        mix(h, "\x02");
}

static void mix_containers(uint32_t *h, const dp_container *cs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                mix(h, cs[i].name);
                mix(h, cs[i].image);
                mix(h, cs[i].restart_policy);
                mix_quantities(h, cs[i].requests, cs[i].n_requests);
                mix_quantities(h, cs[i].limits, cs[i].n_limits);
        }
        mix(h, "\x03");
}

static void mix_affinity(uint32_t *h, const dp_node_selector *ns) {
        for (size_t t = 0; ns && t < ns->n_terms; t++) {
                for (size_t e = 0; e < ns->terms[t].n_match_expressions; e++) {
                        const dp_node_selector_requirement *r = &ns->terms[t].match_expressions[e];
                        char op[16];
                        snprintf(op, sizeof(op), "%d", (int)r->op);
                        mix(h, r->key);
                        mix(h, op);
                        for (size_t v = 0; v < r->n_values; v++)
                                mix(h, r->values[v]);
                }
                mix(h, "\x04");
        }
}

void q_pod_role(const dp_pod *p, char buf[static 64]) {
        const char *given = dp_kv_get(p->meta.annotations, p->meta.n_annotations, DP_KUEUE_ROLE_HASH);
        if (given) {
                snprintf(buf, 64, "%s", given);
                return;
        }
        uint32_t h = 2166136261u;
        mix_containers(&h, p->init_containers, p->n_init_containers);
        mix_containers(&h, p->containers, p->n_containers);
        for (size_t i = 0; i < p->n_node_selector; i++) {
                mix(&h, p->node_selector[i].key);
                mix(&h, p->node_selector[i].value);
        }
        mix_affinity(&h, p->required_node_affinity);
        for (size_t i = 0; i < p->n_tolerations; i++) {
                const dp_toleration *t = &p->tolerations[i];
                mix(&h, t->key);
                mix(&h, t->op);
                mix(&h, t->value);
                mix(&h, t->effect);
        }
        char prio[24];
        snprintf(prio, sizeof(prio), "%d", p->has_priority ? p->priority : 0);
        mix(&h, p->has_priority ? prio : NULL);
        mix_quantities(&h, p->overhead, p->n_overhead);
        snprintf(buf, 64, "%08x", h);
}

/* ---- groups ---- */

bool q_is_group_pod(dp_object o) {
        if (o.hdr->kind != DP_KIND_POD) return false;
        const dp_object_meta *m = &o.pod->meta;
        return !m->n_owner_references && dp_kv_get(m->labels, m->n_labels, DP_KUEUE_QUEUE_LABEL) &&
               dp_kv_get(m->labels, m->n_labels, DP_KUEUE_POD_GROUP_LABEL);
}

static const char *ns_of(const dp_object_meta *m) { return m->namespace && m->namespace[0] ? m->namespace : "default"; }

/* kueue.x-k8s.io/pod-group-total-count: an integer >= 1 (Kueue's webhook
 * refuses the pod otherwise). */
static int total_count(const dp_pod *p, int32_t *ret, dp_error *err) {
        const char *v = dp_kv_get(p->meta.annotations, p->meta.n_annotations, DP_KUEUE_POD_GROUP_TOTAL_COUNT);
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && *v && !*end && n >= 1 && n <= INT32_MAX) {
                *ret = (int32_t)n;
                return 0;
        }
        const char *src = p->hdr.source ? p->hdr.source : "<input>";
        if (!v)
                return dp_error_set(err, -EINVAL,
                                    "%s: Pod %s/%s: metadata.annotations[%s]: Required value: both the '%s' annotation "
                                    "and the '%s' label should be set (Kueue's webhook refuses the pod)",
                                    src, ns_of(&p->meta), p->meta.name, DP_KUEUE_POD_GROUP_TOTAL_COUNT,
                                    DP_KUEUE_POD_GROUP_TOTAL_COUNT, DP_KUEUE_POD_GROUP_LABEL);
        return dp_error_set(err, -EINVAL,
                            "%s: Pod %s/%s: metadata.annotations[%s]: \"%s\": must be an integer greater than zero "
                            "(a pod group's size; Kueue's webhook refuses the pod)",
                            src, ns_of(&p->meta), p->meta.name, DP_KUEUE_POD_GROUP_TOTAL_COUNT, v);
}

/* The input's pod groups: for each (namespace, group name), its pods'
 * indexes in l, in input order. One pass with a map, so inputs of many
 * groups stay linear. */
typedef struct pgroup {
        size_t *pods;
        size_t n;
} pgroup;

typedef struct pgroups {
        pgroup *v;
        size_t n;
} pgroups;

static void pgroups_done(pgroups *g) {
        for (size_t i = 0; i < g->n; i++)
                free(g->v[i].pods);
        free(g->v);
        *g = (pgroups){0};
}

static int pgroup_add(pgroup *g, size_t pod) {
        size_t *v = realloc(g->pods, (g->n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        g->pods = v;
        v[g->n++] = pod;
        return 0;
}

static int collect(const dp_object_list *l, pgroups *ret) {
        _cleanup_(dp_hashmap_freep) dp_hashmap *seen = dp_hashmap_new();
        pgroups g = {0};
        char **keys = NULL;
        size_t n_keys = 0;
        int r = seen ? 0 : -ENOMEM;
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                if (!q_is_group_pod(l->items[i])) continue;
                const dp_object_meta *m = &l->items[i].pod->meta;
                char *key =
                        dp_asprintf("%s\x1f%s", ns_of(m), dp_kv_get(m->labels, m->n_labels, DP_KUEUE_POD_GROUP_LABEL));
                char **kv = key ? realloc(keys, (n_keys + 1) * sizeof(*kv)) : NULL;
                if (!kv) {
                        free(key);
                        r = -ENOMEM;
                        break;
                }
                keys = kv;
                keys[n_keys++] = key;
                uintptr_t at = (uintptr_t)dp_hashmap_get(seen, key);
                if (!at) {
                        pgroup *v = realloc(g.v, (g.n + 1) * sizeof(*v));
                        r = v ? dp_hashmap_put(seen, key, (void *)(uintptr_t)(g.n + 1)) : -ENOMEM;
                        if (v) g.v = v;
                        if (r < 0) break;
                        g.v[g.n++] = (pgroup){0};
                        at = g.n;
                }
                r = pgroup_add(&g.v[at - 1], i);
        }
        for (size_t i = 0; i < n_keys; i++)
                free(keys[i]);
        free(keys);
        if (r < 0)
                pgroups_done(&g);
        else
                *ret = g;
        return r;
}

/* The group's total count (-EINVAL: a bad or differing one). */
static int group_count(const dp_object_list *l, const pgroup *g, int32_t *ret, dp_error *err) {
        int32_t want = 0;
        int r = total_count(l->items[g->pods[0]].pod, &want, err);
        for (size_t k = 1; k < g->n && r >= 0; k++) {
                const dp_pod *p = l->items[g->pods[k]].pod;
                int32_t n = 0;
                r = total_count(p, &n, err);
                if (r >= 0 && n != want)
                        r = dp_error_set(err, -EINVAL,
                                         "%s: Pod %s/%s: metadata.annotations[%s]: %d: the group's other pods say %d "
                                         "(Kueue requires one total count per group)",
                                         p->hdr.source ? p->hdr.source : "<input>", ns_of(&p->meta), p->meta.name,
                                         DP_KUEUE_POD_GROUP_TOTAL_COUNT, n, want);
        }
        *ret = want;
        return r;
}

/* The group's pods as one workload: a pod set per role, counted. */
static int group_workload(dp_queue *q, const dp_object_list *l, const pgroup *g) {
        const dp_pod *p0 = l->items[g->pods[0]].pod;
        dp_object_meta m = p0->meta;
        m.name = (char *)dp_kv_get(p0->meta.labels, p0->meta.n_labels, DP_KUEUE_POD_GROUP_LABEL);
        dp_queue_workload *w = q_new_workload(q, "PodGroup", &m, dp_kv_get(m.labels, m.n_labels, DP_KUEUE_QUEUE_LABEL));
        if (!w) return -ENOMEM;
        w->priority = q_priority_of(q, &p0->meta, p0, &w->note);
        size_t wi = q->n_wl - 1;
        int r = 0;
        for (size_t i = 0; i < g->n && r >= 0; i++) {
                const dp_pod *p = l->items[g->pods[i]].pod;
                char role[64];
                q_pod_role(p, role);
                size_t k = 0;
                while (k < w->n_podsets && !streq(w->podsets[k].name, role))
                        k++;
                if (k < w->n_podsets)
                        w->podsets[k].count++;
                else
                        r = q_add_podset(q, l, w, role, 1, p);
                if (r >= 0)
                        r = q_index_put(q, (void *)(uintptr_t)(wi + 1), "W\x1fPod\x1f%s\x1f%s", ns_of(&p->meta),
                                        p->meta.name);
        }
        return r;
}

int q_pod_groups(dp_queue *q, const dp_object_list *l, dp_error *err) {
        pgroups g = {0};
        if (collect(l, &g) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = 0;
        for (size_t i = 0; i < g.n && r >= 0; i++) {
                int32_t want = 0;
                r = group_count(l, &g.v[i], &want, err);
                /* Kueue creates the workload once all the group's pods exist */
                if (r >= 0 && g.v[i].n >= (size_t)want && group_workload(q, l, &g.v[i]) < 0)
                        r = dp_error_set(err, -ENOMEM, "out of memory");
        }
        pgroups_done(&g);
        return r;
}

int q_pod_group_warnings(dp_object_list *l, dp_error *err) {
        pgroups g = {0};
        if (collect(l, &g) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = 0;
        for (size_t i = 0; i < g.n && r >= 0; i++) {
                int32_t want = 0;
                dp_error ignored = DP_ERROR_INIT; /* a bad count is dp_queue_new's error */
                if (group_count(l, &g.v[i], &want, &ignored) < 0 || g.v[i].n >= (size_t)want) continue;
                const dp_object_meta *m = &l->items[g.v[i].pods[0]].pod->meta;
                if (dp_object_list_warn(l,
                                        "pod group %s/%s: %zu of its %d pods (%s) in the input: Kueue creates no "
                                        "workload until all exist, its pods stay gated",
                                        ns_of(m), dp_kv_get(m->labels, m->n_labels, DP_KUEUE_POD_GROUP_LABEL), g.v[i].n,
                                        want, DP_KUEUE_POD_GROUP_TOTAL_COUNT) < 0)
                        r = dp_error_set(err, -ENOMEM, "out of memory");
        }
        pgroups_done(&g);
        return r;
}
