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

static bool same_group(const dp_object_meta *a, const dp_object_meta *b) {
        return streq(ns_of(a), ns_of(b)) && streq(dp_kv_get(a->labels, a->n_labels, DP_KUEUE_POD_GROUP_LABEL),
                                                  dp_kv_get(b->labels, b->n_labels, DP_KUEUE_POD_GROUP_LABEL));
}

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

/* The group's pods l->items[first..] (those of its name) as one workload. */
static int group_workload(dp_queue *q, const dp_object_list *l, size_t first, size_t n_pods) {
        const dp_pod *p0 = l->items[first].pod;
        dp_object_meta m = p0->meta;
        m.name = (char *)dp_kv_get(p0->meta.labels, p0->meta.n_labels, DP_KUEUE_POD_GROUP_LABEL);
        dp_queue_workload *w = q_new_workload(q, "PodGroup", &m, dp_kv_get(m.labels, m.n_labels, DP_KUEUE_QUEUE_LABEL));
        if (!w) return -ENOMEM;
        w->priority = q_priority_of(q, &p0->meta, p0, &w->note);
        size_t wi = q->n_wl - 1;
        int r = 0;
        for (size_t i = first, seen = 0; i < l->n && seen < n_pods && r >= 0; i++) {
                if (!q_is_group_pod(l->items[i]) || !same_group(&l->items[i].pod->meta, &p0->meta)) continue;
                seen++;
                const dp_pod *p = l->items[i].pod;
                char role[64];
                q_pod_role(p, role);
                size_t k = 0;
                while (k < w->n_podsets && !streq(w->podsets[k].name, role))
                        k++;
                if (k < w->n_podsets)
                        w->podsets[k].count++;
                else
                        r = q_add_podset(q, l, w, role, 1, p);
                if (r >= 0) r = q_index_put(q, (void *)(uintptr_t)(wi + 1), "W\x1fPod\x1f%s\x1f%s", ns_of(&p->meta), p->meta.name);
        }
        return r;
}

/* The group of pod l->items[i]: its pods marked done, how many there are
 * and the total count they give (-EINVAL: a bad or differing one). */
static int group_scan(const dp_object_list *l, size_t i, bool *done, int32_t *ret_want, int32_t *ret_have,
                      dp_error *err) {
        const dp_object_meta *m = &l->items[i].pod->meta;
        int32_t want = 0, have = 0;
        int r = total_count(l->items[i].pod, &want, err);
        for (size_t k = i; k < l->n && r >= 0; k++) {
                if (!q_is_group_pod(l->items[k]) || !same_group(&l->items[k].pod->meta, m)) continue;
                done[k] = true;
                have++;
                int32_t n = 0;
                r = total_count(l->items[k].pod, &n, err);
                if (r >= 0 && n != want)
                        r = dp_error_set(err, -EINVAL,
                                         "%s: Pod %s/%s: metadata.annotations[%s]: %d: the group's other pods say %d "
                                         "(Kueue requires one total count per group)",
                                         l->items[k].hdr->source ? l->items[k].hdr->source : "<input>", ns_of(m),
                                         l->items[k].pod->meta.name, DP_KUEUE_POD_GROUP_TOTAL_COUNT, n, want);
        }
        *ret_want = want;
        *ret_have = have;
        return r;
}

int q_pod_groups(dp_queue *q, const dp_object_list *l, dp_error *err) {
        _cleanup_free_ bool *done = calloc(l->n + 1, sizeof(bool));
        if (!done) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n; i++) {
                if (done[i] || !q_is_group_pod(l->items[i])) continue;
                int32_t want = 0, have = 0;
                int r = group_scan(l, i, done, &want, &have, err);
                if (r < 0) return r;
                /* Kueue creates the workload once all the group's pods exist */
                if (have >= want && group_workload(q, l, i, (size_t)have) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
        }
        return 0;
}

int q_pod_group_warnings(dp_object_list *l, dp_error *err) {
        _cleanup_free_ bool *done = calloc(l->n + 1, sizeof(bool));
        if (!done) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n; i++) {
                if (done[i] || !q_is_group_pod(l->items[i])) continue;
                int32_t want = 0, have = 0;
                const dp_object_meta *m = &l->items[i].pod->meta;
                dp_error ignored = DP_ERROR_INIT; /* a bad count is dp_queue_new's error */
                if (group_scan(l, i, done, &want, &have, &ignored) < 0 || have >= want) continue;
                if (dp_object_list_warn(l,
                                        "pod group %s/%s: %d of its %d pods (%s) in the input: Kueue creates no "
                                        "workload until all exist, its pods stay gated",
                                        ns_of(m), dp_kv_get(m->labels, m->n_labels, DP_KUEUE_POD_GROUP_LABEL), have,
                                        want, DP_KUEUE_POD_GROUP_TOTAL_COUNT) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
        }
        return 0;
}
