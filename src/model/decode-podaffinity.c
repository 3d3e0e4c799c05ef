/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-podaffinity.c — a Pod's affinity.podAffinity, affinity.podAntiAffinity
 * and spec.topologySpreadConstraints (core/v1), with the API server's defaults
 * and the validation rules the scheduler relies on (the rest of the Pod is in
 * decode-core.c). Label selectors here are metav1.LabelSelector: In, NotIn,
 * Exists and DoesNotExist only.
 */
#include "model/decode-internal.h"

static int decode_ls_requirement(dctx *c, const dp_doc_node *n, void *elem) {
        dp_node_selector_requirement *q = elem;
        bool have_op = false;
        int r = decode_requirement_fields(c, n, q, true, &have_op);
        if (r < 0) return r;
        if (!q->key || !q->key[0]) return dfail(c, n, -EINVAL, "key: required");
        if (!have_op) return dfail(c, n, -EINVAL, "operator: required");
        bool set_op = q->op == DP_NS_OP_IN || q->op == DP_NS_OP_NOT_IN;
        if (set_op && q->n_values == 0)
                return dfail(c, n, -EINVAL, "values: must be specified when `operator` is 'In' or 'NotIn'");
        if (!set_op && q->n_values)
                return dfail(c, n, -EINVAL, "values: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        return 0;
}

/* A null selector stays NULL (it matches nothing); {} matches everything. */
int decode_pod_label_selector(dctx *c, const dp_doc_node *n, dp_label_selector **ret) {
        if (dp_doc_is_null(n)) return 0;
        _cleanup_(dp_label_selector_freep) dp_label_selector *ls = calloc(1, sizeof(*ls));
        if (!ls) return dp_error_set(c->err, -ENOMEM, "out of memory");
        DECODE_FIELDS(c, n, k, v, if (streq(k, "matchLabels")) r =
                                          get_kv_map(c, v, &ls->match_labels, &ls->n_match_labels);
                      else if (streq(k, "matchExpressions")) r =
                              get_seq(c, v, (void **)&ls->match_expressions, &ls->n_match_expressions,
                                      sizeof(dp_node_selector_requirement), decode_ls_requirement););
        dp_label_selector_free(*ret);
        *ret = TAKE_PTR(ls);
        return 0;
}

static bool strv_has(char *const *v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i], s)) return true;
        return false;
}

static int decode_affinity_term(dctx *c, const dp_doc_node *n, void *elem) {
        dp_pod_affinity_term *t = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "labelSelector")) r = decode_pod_label_selector(c, v, &t->label_selector);
                      else if (streq(k, "namespaces")) r = get_strv(c, v, &t->namespaces, &t->n_namespaces);
                      else if (streq(k, "namespaceSelector")) r =
                              decode_pod_label_selector(c, v, &t->namespace_selector);
                      else if (streq(k, "topologyKey")) r = get_str(c, v, &t->topology_key);
                      else if (streq(k, "matchLabelKeys")) r =
                              get_strv(c, v, &t->match_label_keys, &t->n_match_label_keys);
                      else if (streq(k, "mismatchLabelKeys")) r =
                              get_strv(c, v, &t->mismatch_label_keys, &t->n_mismatch_label_keys););
        if (!t->topology_key || !t->topology_key[0]) return dfail(c, n, -EINVAL, "topologyKey: required");
        for (size_t i = 0; i < t->n_match_label_keys; i++)
                if (strv_has(t->mismatch_label_keys, t->n_mismatch_label_keys, t->match_label_keys[i]))
                        return dfail(c, n, -EINVAL,
                                     "matchLabelKeys: \"%.100s\" is also in mismatchLabelKeys (a key may be in one)",
                                     t->match_label_keys[i]);
        return 0;
}

static int decode_weighted_term(dctx *c, const dp_doc_node *n, void *elem) {
        dp_pod_affinity_term *t = elem;
        bool have_term = false;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "weight")) r = get_int32(c, v, &t->weight);
                      else if (streq(k, "podAffinityTerm")) {
                              have_term = !dp_doc_is_null(v);
                              r = have_term ? decode_affinity_term(c, v, t) : 0;
                      });
        if (!have_term) return dfail(c, n, -EINVAL, "podAffinityTerm: required");
        if (t->weight < 1 || t->weight > 100) return dfail(c, n, -EINVAL, "weight: must be in the range 1-100");
        return 0;
}

int decode_pod_affinity(dctx *c, const dp_doc_node *n, dp_pod *p, bool anti) {
        dp_pod_affinity_term **req = anti ? &p->pod_anti_affinity : &p->pod_affinity;
        size_t *n_req = anti ? &p->n_pod_anti_affinity : &p->n_pod_affinity;
        dp_pod_affinity_term **pref = anti ? &p->preferred_pod_anti_affinity : &p->preferred_pod_affinity;
        size_t *n_pref = anti ? &p->n_preferred_pod_anti_affinity : &p->n_preferred_pod_affinity;
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "requiredDuringSchedulingIgnoredDuringExecution")) r =
                              get_seq(c, v, (void **)req, n_req, sizeof(**req), decode_affinity_term);
                      else if (streq(k, "preferredDuringSchedulingIgnoredDuringExecution")) r =
                              get_seq(c, v, (void **)pref, n_pref, sizeof(**pref), decode_weighted_term););
        return 0;
}

static int get_policy(dctx *c, const dp_doc_node *v, bool honor_default, bool *ret_flip) {
        _cleanup_free_ char *s = NULL;
        int r = get_str(c, v, &s);
        if (r < 0 || !s) return r;
        if (!streq(s, "Honor") && !streq(s, "Ignore"))
                return dfail(c, v, -EINVAL, "unsupported value \"%.60s\" (Honor, Ignore)", s);
        *ret_flip = streq(s, honor_default ? "Ignore" : "Honor");
        return 0;
}

static int get_when(dctx *c, const dp_doc_node *v, dp_spread_constraint *sc, bool *have) {
        _cleanup_free_ char *s = NULL;
        int r = get_str(c, v, &s);
        if (r < 0 || !s) return r;
        if (!streq(s, "DoNotSchedule") && !streq(s, "ScheduleAnyway"))
                return dfail(c, v, -EINVAL, "unsupported value \"%.60s\" (DoNotSchedule, ScheduleAnyway)", s);
        sc->schedule_anyway = streq(s, "ScheduleAnyway");
        *have = true;
        return 0;
}

static int decode_spread_constraint(dctx *c, const dp_doc_node *n, void *elem) {
        dp_spread_constraint *sc = elem;
        bool have_when = false, have_min = false;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "maxSkew")) r = get_int32(c, v, &sc->max_skew);
                      else if (streq(k, "topologyKey")) r = get_str(c, v, &sc->topology_key);
                      else if (streq(k, "whenUnsatisfiable")) r = get_when(c, v, sc, &have_when);
                      else if (streq(k, "labelSelector")) r = decode_pod_label_selector(c, v, &sc->label_selector);
                      else if (streq(k, "minDomains")) {
                              r = get_int32(c, v, &sc->min_domains);
                              have_min = r >= 0 && !dp_doc_is_null(v);
                      } else if (streq(k, "nodeAffinityPolicy")) r = get_policy(c, v, true, &sc->node_affinity_ignore);
                      else if (streq(k, "nodeTaintsPolicy")) r = get_policy(c, v, false, &sc->node_taints_honor);
                      else if (streq(k, "matchLabelKeys")) r =
                              get_strv(c, v, &sc->match_label_keys, &sc->n_match_label_keys););
        if (sc->max_skew <= 0) return dfail(c, n, -EINVAL, "maxSkew: must be greater than zero");
        if (!sc->topology_key || !sc->topology_key[0]) return dfail(c, n, -EINVAL, "topologyKey: required");
        if (!have_when) return dfail(c, n, -EINVAL, "whenUnsatisfiable: required (DoNotSchedule, ScheduleAnyway)");
        if (have_min && sc->min_domains <= 0) return dfail(c, n, -EINVAL, "minDomains: must be greater than zero");
        if (have_min && sc->schedule_anyway)
                return dfail(c, n, -EINVAL, "minDomains: may only be set when whenUnsatisfiable is DoNotSchedule");
        if (!have_min) sc->min_domains = 1;
        if (sc->n_match_label_keys && !sc->label_selector)
                return dfail(c, n, -EINVAL, "matchLabelKeys: may not be set when labelSelector is not set");
        return 0;
}

int decode_topology_spread(dctx *c, const dp_doc_node *n, dp_pod *p) {
        int r = get_seq(c, n, (void **)&p->spread, &p->n_spread, sizeof(*p->spread), decode_spread_constraint);
        if (r < 0) return r;
        /* the API server refuses two constraints with the same key and action */
        for (size_t i = 0; i < p->n_spread; i++)
                for (size_t j = 0; j < i; j++)
                        if (streq(p->spread[i].topology_key, p->spread[j].topology_key) &&
                            p->spread[i].schedule_anyway == p->spread[j].schedule_anyway) {
                                size_t m = path_index(c, i);
                                r = dfail(c, n, -EINVAL,
                                          "duplicate {topologyKey: %.100s, whenUnsatisfiable: %s} (also item %zu)",
                                          p->spread[i].topology_key,
                                          p->spread[i].schedule_anyway ? "ScheduleAnyway" : "DoNotSchedule", j);
                                path_pop(c, m);
                                return r;
                        }
        return 0;
}
