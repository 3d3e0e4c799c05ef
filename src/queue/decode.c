/* SPDX-License-Identifier: Apache-2.0
 *
 * decode.c — Kueue's kinds through the model's extension table: the field
 * walk (model/decode-internal.h's context and getters, so paths and messages
 * read as the model's), the API rules Kueue's webhooks and CRD markers check,
 * and a warning instead of an error for a field devplane does not know.
 */
#include <stdio.h>

#include "model/decode-internal.h"
#include "queue/decode-kq.h"
#include "queue/integrations.h"
#include "queue/jobset.h"
#include "queue/kai.h"
#include "queue/queue-internal.h"
#include "queue/volcano.h"

/* A field Kueue may define (a newer release's) that devplane does not read:
 * one warning naming it, and decoding goes on. */
int kq_unknown(kq *q, size_t mark, const dp_doc_node *key_node, const char *key) {
        dp_error *saved = q->c->err, w = DP_ERROR_INIT;
        q->c->err = &w;
        (void)dunknown(q->c, mark, key_node, key);
        q->c->err = saved;
        char who[640];
        dp_object_describe(q->o, who, sizeof(who));
        int r = dp_object_list_warn(q->out, "%s: %s: %s: not a field devplane reads, ignored",
                                    q->o.hdr->source ? q->o.hdr->source : "<input>", who, w.msg);
        return r < 0 ? dp_error_set(q->c->err, r, "out of memory") : 0;
}

/* A field of Kueue's that devplane does not model, set in the input: one
 * warning naming it (what it would change is not simulated). */
static int kq_not_modelled(kq *q, const dp_doc_node *v, const char *key, const char *what) {
        if (dp_doc_is_null(v)) return 0;
        char who[640];
        dp_object_describe(q->o, who, sizeof(who));
        int r = dp_object_list_warn(q->out, "%s: %s: spec.%s: Kueue's field, not modelled: %s (line %u)",
                                    q->o.hdr->source ? q->o.hdr->source : "<input>", who, key, what, v->line);
        return r < 0 ? dp_error_set(q->c->err, r, "out of memory") : 0;
}

/* Every Kueue object is named (metadata.name, or generateName for the API
 * server to complete). */
int kq_need_name(dctx *c, const dp_doc_node *root, dp_object o) {
        const dp_object_meta *m = &o.ext->meta;
        if ((m->name && m->name[0]) || (m->generate_name && m->generate_name[0])) return 0;
        return dfail(c, root, -EINVAL, "metadata.name: required");
}

/* A list of at most `max` structs (Kueue's maxItems), each decoded by fn. */
int kq_seq(kq *q, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, kq_elem_fn fn, size_t max) {
        int r = expect_seq(q->c, n);
        if (r <= 0) return r;
        if (n->n > max) return dfail(q->c, n, -E2BIG, "must have at most %zu items, has %zu", max, n->n);
        char *v = n->n ? calloc(n->n, elem_size) : NULL;
        if (n->n && !v) return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        *ret = v; /* owned by the caller's struct from here on: its done frees what was filled */
        *ret_n = 0;
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(q->c, i);
                r = fn(q, n->items[i], v + i * elem_size);
                *ret_n = i + 1;
                if (r < 0) return r;
                path_pop(q->c, m);
        }
        return 0;
}

static bool one_of(const char *s, const char *const *names) {
        for (; *names; names++)
                if (streq(s, *names)) return true;
        return false;
}

/* An enumerated string: NULL stays unset; a value outside names fails. */
static int get_enum(kq *q, const dp_doc_node *v, const char *const *names, char **ret) {
        int r = get_str(q->c, v, ret);
        if (r < 0 || !*ret || one_of(*ret, names)) return r;
        char list[256] = "";
        size_t len = 0;
        for (const char *const *p = names; *p && len < sizeof(list); p++)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", p == names ? "" : ", ", *p);
        return dfail(q->c, v, -EINVAL, "unsupported value \"%.60s\": supported values: %s", *ret, list);
}

static int get_nonneg_quantity(kq *q, const dp_doc_node *v, dp_quantity *ret, bool *has) {
        if (dp_doc_is_null(v)) return 0;
        int r = get_quantity(q->c, v, ret);
        if (r < 0) return r;
        if (ret->nanos < 0) return dfail(q->c, v, -EINVAL, "must be greater than or equal to 0");
        if (has) *has = true;
        return 0;
}

/* ---- resource groups (ClusterQueue and Cohort) ---- */

static int quota_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_quota *x = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &x->name);
                  else if (streq(k, "nominalQuota")) r = get_nonneg_quantity(q, v, &x->nominal, NULL);
                  else if (streq(k, "borrowingLimit")) r =
                          get_nonneg_quantity(q, v, &x->borrowing_limit, &x->has_borrowing_limit);
                  else if (streq(k, "lendingLimit")) r =
                          get_nonneg_quantity(q, v, &x->lending_limit, &x->has_lending_limit););
        if (!x->name) return dfail(q->c, n, -EINVAL, "name: required");
        if (x->has_lending_limit && dp_quantity_cmp(&x->lending_limit, &x->nominal) > 0)
                return dfail(q->c, n, -EINVAL, "lendingLimit: must be less than or equal to the nominalQuota");
        return 0;
}

static int flavor_quotas_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_flavor_quotas *x = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &x->name);
                  else if (streq(k, "resources")) r = kq_seq(q, v, (void **)&x->resources, &x->n_resources,
                                                             sizeof(dp_kq_quota), quota_elem, DP_KUEUE_MAX_RESOURCES););
        if (!x->name) return dfail(q->c, n, -EINVAL, "name: required");
        return 0;
}

static int group_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_resource_group *g = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "coveredResources")) {
                r = get_strv(q->c, v, &g->covered, &g->n_covered);
                if (r >= 0 && g->n_covered > DP_KUEUE_MAX_RESOURCES)
                        r = dfail(q->c, v, -E2BIG, "must have at most %d items", DP_KUEUE_MAX_RESOURCES);
        } else if (streq(k, "flavors")) r = kq_seq(q, v, (void **)&g->flavors, &g->n_flavors,
                                                   sizeof(dp_kq_flavor_quotas), flavor_quotas_elem,
                                                   DP_KUEUE_MAX_FLAVORS););
        if (!g->n_covered) return dfail(q->c, n, -EINVAL, "coveredResources: required");
        /* the CRD's rule: every flavor lists the covered resources, in their order */
        for (size_t f = 0; f < g->n_flavors; f++) {
                const dp_kq_flavor_quotas *fq = &g->flavors[f];
                bool same = fq->n_resources == g->n_covered;
                for (size_t i = 0; same && i < g->n_covered; i++)
                        same = streq(fq->resources[i].name, g->covered[i]);
                if (!same) {
                        size_t m = path_key(q->c, "flavors");
                        path_index(q->c, f);
                        path_key(q->c, "resources");
                        int r = dfail(q->c, n, -EINVAL, "must have the same names as coveredResources, in the same "
                                                        "order");
                        path_pop(q->c, m);
                        return r;
                }
        }
        return 0;
}

/* Across the groups: a resource and a flavor each in one group only. */
static int check_groups(kq *q, const dp_doc_node *n, const dp_kq_resource_group *g, size_t ng) {
        for (size_t a = 0; a < ng; a++)
                for (size_t b = a + 1; b < ng; b++) {
                        for (size_t i = 0; i < g[a].n_covered; i++)
                                for (size_t j = 0; j < g[b].n_covered; j++)
                                        if (streq(g[a].covered[i], g[b].covered[j]))
                                                return dfail(q->c, n, -EINVAL,
                                                             "resource %.100s is covered by groups %zu and %zu: a "
                                                             "resource belongs to one group",
                                                             g[a].covered[i], a, b);
                        for (size_t i = 0; i < g[a].n_flavors; i++)
                                for (size_t j = 0; j < g[b].n_flavors; j++)
                                        if (streq(g[a].flavors[i].name, g[b].flavors[j].name))
                                                return dfail(q->c, n, -EINVAL,
                                                             "flavor %.100s is in groups %zu and %zu: a flavor "
                                                             "belongs to one group",
                                                             g[a].flavors[i].name, a, b);
                }
        return 0;
}

static int get_groups(kq *q, const dp_doc_node *v, dp_kq_resource_group **ret, size_t *ret_n) {
        int r = kq_seq(q, v, (void **)ret, ret_n, sizeof(dp_kq_resource_group), group_elem,
                       DP_KUEUE_MAX_RESOURCE_GROUPS);
        return r < 0 ? r : check_groups(q, v, *ret, *ret_n);
}

static int fair_sharing(kq *q, const dp_doc_node *n, dp_quantity *w, bool *has) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "weight")) r = get_nonneg_quantity(q, v, w, has););
        return 0;
}

/* ---- ClusterQueue ---- */

const char *const q_within_values[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority", NULL};
const char *const q_reclaim_values[] = {"Never", "LowerPriority", "Any", NULL};
const char *const q_borrow_values[] = {"Never", "LowerPriority", NULL};

static int borrow_within(kq *q, const dp_doc_node *n, dp_kq_preemption *p) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "policy")) r = get_enum(q, v, q_borrow_values, &p->borrow_within_cohort);
                  else if (streq(k, "maxPriorityThreshold")) {
                          r = get_int32(q->c, v, &p->max_priority_threshold);
                          p->has_max_priority_threshold = r >= 0 && !dp_doc_is_null(v);
                  });
        return 0;
}

static int preemption(kq *q, const dp_doc_node *n, dp_kq_preemption *p) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "withinClusterQueue")) r =
                                      get_enum(q, v, q_within_values, &p->within_cluster_queue);
                  else if (streq(k, "reclaimWithinCohort")) r = get_enum(q, v, q_reclaim_values, &p->reclaim_within_cohort);
                  else if (streq(k, "borrowWithinCohort")) r = borrow_within(q, v, p););
        bool reclaim_never = !p->reclaim_within_cohort || streq(p->reclaim_within_cohort, "Never");
        if (reclaim_never && p->borrow_within_cohort && !streq(p->borrow_within_cohort, "Never"))
                return dfail(q->c, n, -EINVAL,
                             "borrowWithinCohort: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
        return 0;
}

static const char *const borrow_fungibility[] = {"Borrow", "MayStopSearch", "TryNextFlavor", NULL};
static const char *const preempt_fungibility[] = {"Preempt", "MayStopSearch", "TryNextFlavor", NULL};
static const char *const preference_values[] = {"BorrowingOverPreemption", "PreemptionOverBorrowing", NULL};

static int fungibility(kq *q, const dp_doc_node *n, dp_cluster_queue *cq) {
        _cleanup_free_ char *b = NULL, *p = NULL, *pref = NULL;
        KQ_FIELDS(q, n, k, v, if (streq(k, "whenCanBorrow")) r = get_enum(q, v, borrow_fungibility, &b);
                  else if (streq(k, "whenCanPreempt")) r = get_enum(q, v, preempt_fungibility, &p);
                  else if (streq(k, "preference")) r = get_enum(q, v, preference_values, &pref););
        if (b) cq->when_can_borrow = streq(b, "TryNextFlavor") ? DP_KQ_TRY_NEXT_FLAVOR : DP_KQ_MAY_STOP_SEARCH;
        if (p) cq->when_can_preempt = streq(p, "TryNextFlavor") ? DP_KQ_TRY_NEXT_FLAVOR : DP_KQ_MAY_STOP_SEARCH;
        cq->preemption_over_borrowing = pref && streq(pref, "PreemptionOverBorrowing");
        return 0;
}

/* Known to Kueue, read by the API server, not modelled here (docs/queues.md). */
static const char *const cq_not_modelled[] = {"concurrentAdmissionPolicy", NULL};
static const char *cq_not_modelled_why(const char *key) {
        if (streq(key, "concurrentAdmissionPolicy"))
                return "workloads are not migrated to more preferred flavors after admission";
        return "admission goes on as without it";
}

static const char *const admission_modes[] = {"UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing", NULL};

static int admission_scope(kq *q, const dp_doc_node *n, dp_cluster_queue *cq) {
        _cleanup_free_ char *mode = NULL;
        KQ_FIELDS(q, n, k, v, if (streq(k, "admissionMode")) r = get_enum(q, v, admission_modes, &mode););
        cq->usage_based_afs = mode && streq(mode, "UsageBasedAdmissionFairSharing");
        return 0;
}
static const char *const queueing_values[] = {"StrictFIFO", "BestEffortFIFO", NULL};
static const char *const stop_values[] = {"None", "Hold", "HoldAndDrain", NULL};

static int cq_spec(kq *q, const dp_doc_node *n, dp_cluster_queue *cq) {
        bool v1beta1 = q->c->version == DP_API_V1BETA1;
        _cleanup_free_ char *strategy = NULL;
        KQ_FIELDS(q, n, k, v, if (streq(k, "namespaceSelector")) r =
                                      decode_pod_label_selector(q->c, v, &cq->namespace_selector);
                  else if (streq(k, "resourceGroups")) r = get_groups(q, v, &cq->groups, &cq->n_groups);
                  else if (streq(k, v1beta1 ? "cohort" : "cohortName")) r = get_str(q->c, v, &cq->cohort);
                  else if (streq(k, "queueingStrategy")) r = get_enum(q, v, queueing_values, &strategy);
                  else if (streq(k, "flavorFungibility")) r = fungibility(q, v, cq);
                  else if (streq(k, "preemption")) r = preemption(q, v, &cq->preemption);
                  else if (streq(k, "fairSharing")) r = fair_sharing(q, v, &cq->weight, &cq->has_weight);
                  else if (streq(k, "stopPolicy")) r = get_enum(q, v, stop_values, &cq->stop_policy);
                  else if (streq(k, "admissionScope")) r = admission_scope(q, v, cq);
                  else if (streq(k, "admissionChecksStrategy")) r = kq_cq_checks(q, v, true, cq); /* checks.c */
                  else if (v1beta1 && streq(k, "admissionChecks")) r = kq_cq_checks(q, v, false, cq);
                  else if (in_list(k, cq_not_modelled)) r = kq_not_modelled(q, v, k, cq_not_modelled_why(k)););
        if (v1beta1 && kq_cq_checks_both(q, n) < 0) return -EINVAL;
        cq->queueing = strategy && streq(strategy, "StrictFIFO") ? DP_KQ_STRICT_FIFO : DP_KQ_BEST_EFFORT_FIFO;
        for (size_t g = 0; g < cq->n_groups; g++)
                for (size_t f = 0; f < cq->groups[g].n_flavors; f++)
                        for (size_t i = 0; i < cq->groups[g].flavors[f].n_resources; i++) {
                                if (!cq->groups[g].flavors[f].resources[i].has_borrowing_limit || cq->cohort) continue;
                                size_t m = path_key(q->c, "resourceGroups");
                                path_index(q->c, g);
                                path_key(q->c, "flavors");
                                path_index(q->c, f);
                                path_key(q->c, "resources");
                                path_index(q->c, i);
                                path_key(q->c, "borrowingLimit");
                                int r = dfail(q->c, dp_doc_get(n, "resourceGroups"), -EINVAL,
                                              "must be nil when cohort is empty");
                                path_pop(q->c, m);
                                return r;
                        }
        return 0;
}

static const char *const top_level[] = {"apiVersion", "kind", "metadata", "status", NULL};

static int decode_cluster_queue(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_cluster_queue *cq = (dp_cluster_queue *)o.ext;
        cq->when_can_preempt = DP_KQ_TRY_NEXT_FLAVOR;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = cq_spec(&q, v, cq););
        return 0;
}

static void groups_free(dp_kq_resource_group *g, size_t n) {
        for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < g[i].n_covered; j++)
                        free(g[i].covered[j]);
                free(g[i].covered);
                for (size_t f = 0; f < g[i].n_flavors; f++) {
                        for (size_t r = 0; r < g[i].flavors[f].n_resources; r++)
                                free(g[i].flavors[f].resources[r].name);
                        free(g[i].flavors[f].resources);
                        free(g[i].flavors[f].name);
                }
                free(g[i].flavors);
        }
        free(g);
}

static void cluster_queue_done(dp_object o) {
        dp_cluster_queue *cq = (dp_cluster_queue *)o.ext;
        dp_label_selector_free(cq->namespace_selector);
        groups_free(cq->groups, cq->n_groups);
        free(cq->cohort);
        free(cq->preemption.within_cluster_queue);
        free(cq->preemption.reclaim_within_cohort);
        free(cq->preemption.borrow_within_cohort);
        free(cq->stop_policy);
        kq_cq_checks_free(cq);
}

/* ---- LocalQueue ---- */

static int lq_spec(kq *q, const dp_doc_node *n, dp_local_queue *lq) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "clusterQueue")) r = get_str(q->c, v, &lq->cluster_queue);
                  else if (streq(k, "stopPolicy")) r = get_enum(q, v, stop_values, &lq->stop_policy);
                  else if (streq(k, "fairSharing")) r = fair_sharing(q, v, &lq->weight, &lq->has_weight););
        return 0;
}

/* status.fairSharing.admissionFairSharingStatus.consumedResources (the
 * rest of the status is the controllers' record, not read). */
static int lq_consumed(kq *q, const dp_doc_node *status, dp_local_queue *lq) {
        static const char *const path[] = {"status", "fairSharing", "admissionFairSharingStatus", "consumedResources"};
        const dp_doc_node *n = status;
        size_t mark = path_key(q->c, path[0]);
        for (size_t i = 1; n && i < ELEMENTSOF(path); i++) {
                n = n->type == DP_DOC_MAP ? dp_doc_get(n, path[i]) : NULL;
                path_key(q->c, path[i]);
        }
        int r = n && !dp_doc_is_null(n) ? get_quantity_map(q->c, n, &lq->consumed, &lq->n_consumed) : 0;
        for (size_t i = 0; r >= 0 && i < lq->n_consumed; i++)
                if (dp_quantity_as_double(&lq->consumed[i].value) < 0) {
                        path_key(q->c, lq->consumed[i].name);
                        r = dfail(q->c, n, -EINVAL, "must not be negative");
                }
        if (r >= 0) path_pop(q->c, mark);
        return r;
}

static int decode_local_queue(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_local_queue *lq = (dp_local_queue *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = lq_spec(&q, v, lq););
        const dp_doc_node *status = dp_doc_get(root, "status");
        if (status && lq_consumed(&q, status, lq) < 0) return -EINVAL;
        if (!lq->cluster_queue || !lq->cluster_queue[0]) return dfail(c, root, -EINVAL, "spec.clusterQueue: required");
        return 0;
}

static void local_queue_done(dp_object o) {
        dp_local_queue *lq = (dp_local_queue *)o.ext;
        free(lq->cluster_queue);
        free(lq->stop_policy);
        for (size_t i = 0; i < lq->n_consumed; i++)
                free(lq->consumed[i].name);
        free(lq->consumed);
}

/* ---- ResourceFlavor ---- */

static int taint_elem(kq *q, const dp_doc_node *n, void *elem) {
        int r = decode_taint(q->c, n, elem);
        const dp_taint *t = elem;
        if (r >= 0 && !t->key) return dfail(q->c, n, -EINVAL, "key: required");
        static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
        if (r >= 0 && (!t->effect || !one_of(t->effect, effects)))
                return dfail(q->c, n, -EINVAL, "effect: must be NoSchedule, PreferNoSchedule or NoExecute");
        return r;
}

static int toleration_elem(kq *q, const dp_doc_node *n, void *elem) { return decode_toleration(q->c, n, elem); }

static int rf_spec(kq *q, const dp_doc_node *n, dp_resource_flavor *rf) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "nodeLabels")) {
                r = get_kv_map(q->c, v, &rf->node_labels, &rf->n_node_labels);
                if (r >= 0 && rf->n_node_labels > DP_KUEUE_MAX_FLAVOR_LABELS)
                        r = dfail(q->c, v, -E2BIG, "must have at most %d items", DP_KUEUE_MAX_FLAVOR_LABELS);
        } else if (streq(k, "nodeTaints")) r = kq_seq(q, v, (void **)&rf->node_taints, &rf->n_node_taints,
                                                      sizeof(dp_taint), taint_elem, DP_KUEUE_MAX_FLAVOR_LABELS);
                  else if (streq(k, "tolerations")) r = kq_seq(q, v, (void **)&rf->tolerations, &rf->n_tolerations,
                                                               sizeof(dp_toleration), toleration_elem,
                                                               DP_KUEUE_MAX_FLAVOR_LABELS);
                  else if (streq(k, "topologyName")) r = get_str(q->c, v, &rf->topology_name););
        if (rf->topology_name && !rf->n_node_labels)
                return dfail(q->c, n, -EINVAL, "nodeLabels: at least one nodeLabel is required when topology is set");
        return 0;
}

static int decode_resource_flavor(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_resource_flavor *rf = (dp_resource_flavor *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = rf_spec(&q, v, rf););
        return 0;
}

static void resource_flavor_done(dp_object o) {
        dp_resource_flavor *rf = (dp_resource_flavor *)o.ext;
        for (size_t i = 0; i < rf->n_node_labels; i++) {
                free(rf->node_labels[i].key);
                free(rf->node_labels[i].value);
        }
        free(rf->node_labels);
        for (size_t i = 0; i < rf->n_node_taints; i++) {
                free(rf->node_taints[i].key);
                free(rf->node_taints[i].value);
                free(rf->node_taints[i].effect);
                free(rf->node_taints[i].time_added);
        }
        free(rf->node_taints);
        for (size_t i = 0; i < rf->n_tolerations; i++)
                dp_toleration_done(&rf->tolerations[i]);
        free(rf->tolerations);
        free(rf->topology_name);
}

/* ---- Cohort ---- */

static int cohort_spec(kq *q, const dp_doc_node *n, dp_kq_cohort *co) {
        bool v1beta1 = q->c->version == DP_API_V1BETA1;
        KQ_FIELDS(q, n, k, v, if (streq(k, v1beta1 ? "parent" : "parentName")) r = get_str(q->c, v, &co->parent);
                  else if (streq(k, "resourceGroups")) r = get_groups(q, v, &co->groups, &co->n_groups);
                  else if (streq(k, "fairSharing")) r = fair_sharing(q, v, &co->weight, &co->has_weight););
        return 0;
}

static int decode_cohort(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_kq_cohort *co = (dp_kq_cohort *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0;
                  else if (streq(k, "spec")) r = cohort_spec(&q, v, co););
        if (co->parent && o.ext->meta.name && streq(co->parent, o.ext->meta.name))
                return dfail(c, root, -EINVAL, "spec.parentName: a Cohort cannot be its own parent");
        return 0;
}

static void cohort_done(dp_object o) {
        dp_kq_cohort *co = (dp_kq_cohort *)o.ext;
        free(co->parent);
        groups_free(co->groups, co->n_groups);
}

/* ---- WorkloadPriorityClass ---- */

static int decode_wpc(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_workload_priority_class *pc = (dp_workload_priority_class *)o.ext;
        bool has_value = false;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "value")) {
                r = get_int32(c, v, &pc->value);
                has_value = r >= 0 && !dp_doc_is_null(v);
        } else if (streq(k, "description")) r = get_str(c, v, &pc->description););
        if (!has_value) return dfail(c, root, -EINVAL, "value: required");
        return 0;
}

static void wpc_done(dp_object o) { free(((dp_workload_priority_class *)o.ext)->description); }

/* ---- Workload ---- */

static int podset_template(kq *q, const dp_doc_node *n, dp_kq_podset *ps) {
        dp_pod *p = calloc(1, sizeof(*p));
        if (!p) return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        ps->template_ = p;
        p->hdr.kind = DP_KIND_POD;
        p->hdr.line = n ? n->line : 0;
        int r = decode_meta(q->c, dp_doc_get(n, "metadata"), &p->meta);
        return r < 0 ? r : decode_pod(q->c, n, p);
}

static int podset_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_podset *ps = elem;
        bool has_count = false;
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &ps->name); else if (streq(k, "count")) {
                r = get_int32(q->c, v, &ps->count);
                has_count = r >= 0 && !dp_doc_is_null(v);
        } else if (streq(k, "template")) r = podset_template(q, v, ps);
                  else if (streq(k, "minCount")) {
                          r = get_int32(q->c, v, &ps->min_count);
                          ps->has_min_count = r >= 0 && !dp_doc_is_null(v);
                  } else if (streq(k, "topologyRequest")) r = 0;);
        if (!ps->name) return dfail(q->c, n, -EINVAL, "name: required");
        if (!has_count) ps->count = 1;
        if (ps->count < 0) return dfail(q->c, n, -EINVAL, "count: must be greater than or equal to 0");
        if (ps->has_min_count && (ps->min_count < 0 || ps->min_count > ps->count))
                return dfail(q->c, n, -EINVAL, "minCount: must be between 0 and count (%d)", ps->count);
        if (!ps->template_) return dfail(q->c, n, -EINVAL, "template: required");
        return 0;
}

static int wl_spec(kq *q, const dp_doc_node *n, dp_kq_workload *w) {
        bool active = true;
        KQ_FIELDS(q, n, k, v, if (streq(k, "queueName")) r = get_str(q->c, v, &w->queue_name);
                  else if (streq(k, "podSets")) r = kq_seq(q, v, (void **)&w->podsets, &w->n_podsets,
                                                           sizeof(dp_kq_podset), podset_elem, DP_KUEUE_MAX_PODSETS);
                  else if (streq(k, "priorityClassName")) r = get_str(q->c, v, &w->priority_class_name);
                  else if (streq(k, "priority")) {
                          r = get_int32(q->c, v, &w->priority);
                          w->has_priority = r >= 0 && !dp_doc_is_null(v);
                  } else if (streq(k, "active")) r = get_bool(q->c, v, &active);
                  else if (streq(k, "priorityClassSource") || streq(k, "priorityClassRef") ||
                           streq(k, "maximumExecutionTimeSeconds")) r = 0;);
        w->inactive = !active;
        if (!w->n_podsets) return dfail(q->c, n, -EINVAL, "podSets: required");
        return 0;
}

static int assignment_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_podset_assignment *a = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &a->name);
                  else if (streq(k, "flavors")) r = get_kv_map(q->c, v, &a->flavors, &a->n_flavors);
                  else if (streq(k, "count")) {
                          r = get_int32(q->c, v, &a->count);
                          a->has_count = r >= 0 && !dp_doc_is_null(v);
                  } else if (streq(k, "topologyAssignment")) r = kq_topology_assignment(q, v, a);
                  else if (streq(k, "resourceUsage") || streq(k, "delayedTopologyRequest")) r = 0;);
        if (!a->name) return dfail(q->c, n, -EINVAL, "name: required");
        return 0;
}

static int admission(kq *q, const dp_doc_node *n, dp_kq_workload *w) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "clusterQueue")) r = get_str(q->c, v, &w->admitted_cq);
                  else if (streq(k, "podSetAssignments")) r =
                          kq_seq(q, v, (void **)&w->assignments, &w->n_assignments, sizeof(dp_kq_podset_assignment),
                                 assignment_elem, DP_KUEUE_MAX_PODSETS););
        return 0;
}

/* When the quota was reserved (QuotaReserved True): preemption takes the
 * most recently admitted first. Conditions are not validated: a record. */
static int reserved_at(const dp_doc_node *conds, dp_kq_workload *w) {
        for (size_t i = 0; conds && conds->type == DP_DOC_SEQ && i < conds->n; i++) {
                const dp_doc_node *c = conds->items[i], *t = dp_doc_get(c, "type"), *st = dp_doc_get(c, "status");
                const dp_doc_node *at = dp_doc_get(c, "lastTransitionTime");
                if (!t || t->type != DP_DOC_SCALAR || !streq(t->str, "QuotaReserved") || !st ||
                    st->type != DP_DOC_SCALAR || !streq(st->str, "True") || !at || at->type != DP_DOC_SCALAR)
                        continue;
                free(w->reserved_at);
                if (!(w->reserved_at = strdup(at->str))) return -ENOMEM;
        }
        return 0;
}

/* status is the controllers' record: only the admission and when the
 * quota was reserved are read. */
static int wl_status(kq *q, const dp_doc_node *n, dp_kq_workload *w) {
        int e = expect_map(q->c, n);
        if (e <= 0) return e;
        const dp_doc_node *a = dp_doc_get(n, "admission");
        size_t m = path_key(q->c, "admission");
        int r = a ? admission(q, a, w) : 0;
        path_pop(q->c, m);
        const dp_doc_node *checks = dp_doc_get(n, "admissionChecks");
        m = path_key(q->c, "admissionChecks");
        if (r >= 0 && checks) r = kq_wl_checks(q, checks, w); /* checks.c */
        path_pop(q->c, m);
        if (r >= 0 && reserved_at(dp_doc_get(n, "conditions"), w) < 0)
                r = dp_error_set(q->c->err, -ENOMEM, "out of memory");
        return r;
}

static int decode_workload(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_kq_workload *w = (dp_kq_workload *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (streq(k, "apiVersion") || streq(k, "kind") || streq(k, "metadata")) r = 0;
                  else if (streq(k, "spec")) r = wl_spec(&q, v, w);
                  else if (streq(k, "status")) r = wl_status(&q, v, w););
        if (!w->n_podsets) return dfail(c, root, -EINVAL, "spec.podSets: required");
        return 0;
}

static void workload_done(dp_object o) {
        dp_kq_workload *w = (dp_kq_workload *)o.ext;
        free(w->queue_name);
        free(w->priority_class_name);
        for (size_t i = 0; i < w->n_podsets; i++) {
                free(w->podsets[i].name);
                dp_pod_free(w->podsets[i].template_);
        }
        free(w->podsets);
        free(w->admitted_cq);
        for (size_t i = 0; i < w->n_assignments; i++) {
                free(w->assignments[i].name);
                for (size_t j = 0; j < w->assignments[i].n_flavors; j++) {
                        free(w->assignments[i].flavors[j].key);
                        free(w->assignments[i].flavors[j].value);
                }
                free(w->assignments[i].flavors);
                kq_topology_assignment_done(&w->assignments[i]);
        }
        free(w->assignments);
        free(w->reserved_at);
        kq_wl_checks_free(w);
}

/* ---- the table ---- */

static const char *const kueue_versions[] = {"kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1", NULL};

static const dp_model_ext_kind kinds[] = {
        {"ClusterQueue", kueue_versions, sizeof(dp_cluster_queue), false, decode_cluster_queue, cluster_queue_done},
        {"LocalQueue", kueue_versions, sizeof(dp_local_queue), true, decode_local_queue, local_queue_done},
        {"ResourceFlavor", kueue_versions, sizeof(dp_resource_flavor), false, decode_resource_flavor,
         resource_flavor_done},
        {"Cohort", kueue_versions, sizeof(dp_kq_cohort), false, decode_cohort, cohort_done},
        {"WorkloadPriorityClass", kueue_versions, sizeof(dp_workload_priority_class), false, decode_wpc, wpc_done},
        {"Workload", kueue_versions, sizeof(dp_kq_workload), true, decode_workload, workload_done},
        {"Topology", kueue_versions, sizeof(dp_kq_topology), false, kq_decode_topology, kq_topology_done},
        {"AdmissionCheck", kueue_versions, sizeof(dp_kq_admission_check), false, kq_decode_admission_check,
         kq_admission_check_done},
};

/* The job integrations' kinds (queue/integrations-decode.c), JobSet's (queue/jobset.c),
 * Volcano's Queue (queue/volcano-decode.c), then KAI-Scheduler's (queue/kai-decode.c) are
 * chained behind these. */
const dp_model_ext dp_queue_model_ext = {kinds, ELEMENTSOF(kinds), &dp_queue_integrations_ext};

dp_kq_kind dp_queue_kind(dp_object o) {
        if (!o.hdr || o.hdr->kind != DP_KIND_EXT) return DP_KQ_NONE;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (o.ext->ext == &kinds[i]) return (dp_kq_kind)(i + 1);
        return DP_KQ_NONE;
}
