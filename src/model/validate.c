/* SPDX-License-Identifier: Apache-2.0
 *
 * validate.c — per-object Kubernetes validation: required fields, names,
 * the limits of validate.h (-E2BIG), one-of rules and references inside one
 * object. Cross-object rules (pools, duplicates) are in validate-pools.c.
 * Messages: "<path>: <rule>", prefixed by the file and object.
 */
#include <stdio.h>

#include "model/decode-internal.h"
#include "model/validate.h"

typedef int (*name_rule)(const char *s, dp_error *err);

/* Check s with a name rule; the rule's message goes under the current path. */
static int vname(dctx *c, const char *field, const char *s, name_rule rule) {
        dp_error e; /* not zeroed whole: a message is written only on failure */
        e.code = 0;
        e.msg[0] = 0;
        if (rule(s, &e) >= 0) return 0;
        size_t m = field ? path_key(c, field) : c->len;
        int r = dfail(c, NULL, -EINVAL, "%s", e.msg);
        path_pop(c, m);
        return r;
}

static int required(dctx *c, const char *field, const char *s) {
        if (s && *s) return 0;
        size_t m = path_key(c, field);
        int r = dfail(c, NULL, -EINVAL, "required");
        path_pop(c, m);
        return r;
}

/* -E2BIG naming the Kubernetes constant. */
static int vmax(dctx *c, const char *field, size_t n, size_t max, const char *constant) {
        if (n <= max) return 0;
        size_t m = field ? path_key(c, field) : c->len;
        int r = dfail(c, NULL, -E2BIG, "must have at most %zu entries, got %zu (%s)", max, n, constant);
        path_pop(c, m);
        return r;
}

static int vlen(dctx *c, const char *field, const char *s, size_t max, const char *constant) {
        size_t n = s ? strlen(s) : 0;
        if (n <= max) return 0;
        size_t m = field ? path_key(c, field) : c->len;
        int r = dfail(c, NULL, -E2BIG, "must be at most %zu characters, got %zu (%s)", max, n, constant);
        path_pop(c, m);
        return r;
}

static int vfail(dctx *c, const char *field, int code, const char *msg) {
        size_t m = field ? path_key(c, field) : c->len;
        int r = dfail(c, NULL, code, "%s", msg);
        path_pop(c, m);
        return r;
}

/* Semantic version 2.0.0 (resource.k8s.io version attributes). */
static bool numeric_ident(const char *s, size_t n) {
        if (n == 0 || (n > 1 && s[0] == '0')) return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < '0' || s[i] > '9') return false;
        return true;
}

static bool semver_idents(const char *s, size_t n, bool prerelease) {
        size_t start = 0;
        for (size_t i = 0; i <= n; i++)
                if (i == n || s[i] == '.') {
                        size_t l = i - start;
                        if (l == 0) return false;
                        bool all_digits = true;
                        for (size_t j = start; j < i; j++) {
                                char ch = s[j];
                                if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
                                      (ch >= 'A' && ch <= 'Z') || ch == '-'))
                                        return false;
                                if (ch < '0' || ch > '9') all_digits = false;
                        }
                        if (prerelease && all_digits && !numeric_ident(s + start, l)) return false;
                        start = i + 1;
                }
        return true;
}

static bool valid_semver(const char *s) {
        size_t n = strlen(s);
        const char *plus = memchr(s, '+', n);
        size_t core_end = plus ? (size_t)(plus - s) : n;
        const char *dash = memchr(s, '-', core_end);
        size_t ver_end = dash ? (size_t)(dash - s) : core_end;
        size_t start = 0;
        int parts = 0;
        for (size_t i = 0; i <= ver_end; i++)
                if (i == ver_end || s[i] == '.') {
                        if (!numeric_ident(s + start, i - start)) return false;
                        parts++;
                        start = i + 1;
                }
        if (parts != 3) return false;
        if (dash && !semver_idents(dash + 1, core_end - ver_end - 1, true)) return false;
        if (plus && !semver_idents(plus + 1, n - core_end - 1, false)) return false;
        return true;
}

/* ---- shared pieces ---- */

static int validate_meta(dctx *c, const dp_object_meta *m, bool namespaced, name_rule rule) {
        size_t mark = path_key(c, "metadata");
        int r = 0;
        if (!m->name && !m->generate_name) r = required(c, "name", m->name);
        if (r >= 0 && m->name) r = vname(c, "name", m->name, rule);
        if (r >= 0 && namespaced && m->namespace) r = vname(c, "namespace", m->namespace, dp_validate_dns_label);
        for (size_t i = 0; r >= 0 && i < m->n_labels; i++) {
                size_t lm = path_key(c, "labels");
                r = vname(c, NULL, m->labels[i].key, dp_validate_qualified_name);
                if (r >= 0) {
                        size_t km = path_key(c, m->labels[i].key);
                        r = vname(c, NULL, m->labels[i].value, dp_validate_label_value);
                        path_pop(c, km);
                }
                path_pop(c, lm);
        }
        for (size_t i = 0; r >= 0 && i < m->n_annotations; i++) {
                size_t am = path_key(c, "annotations");
                r = vname(c, NULL, m->annotations[i].key, dp_validate_qualified_name);
                path_pop(c, am);
        }
        if (r >= 0) path_pop(c, mark);
        return r;
}

static int validate_node_selector(dctx *c, const char *field, const dp_node_selector *ns) {
        if (!ns) return 0;
        size_t m = path_key(c, field);
        if (ns->n_terms == 0) return vfail(c, "nodeSelectorTerms", -EINVAL, "must have at least one term");
        for (size_t i = 0; i < ns->n_terms; i++) {
                size_t tm = path_key(c, "nodeSelectorTerms");
                path_index(c, i);
                const dp_node_selector_term *t = &ns->terms[i];
                for (int f = 0; f < 2; f++) {
                        const dp_node_selector_requirement *reqs = f ? t->match_fields : t->match_expressions;
                        size_t n = f ? t->n_match_fields : t->n_match_expressions;
                        for (size_t j = 0; j < n; j++) {
                                size_t rm = path_key(c, f ? "matchFields" : "matchExpressions");
                                path_index(c, j);
                                const dp_node_selector_requirement *q = &reqs[j];
                                int r = required(c, "key", q->key);
                                if (r >= 0 && !f) r = vname(c, "key", q->key, dp_validate_qualified_name);
                                if (r >= 0 && f && !streq(q->key, "metadata.name"))
                                        r = vfail(c, "key", -EINVAL, "matchFields supports only metadata.name");
                                if (r >= 0 && f && q->op != DP_NS_OP_IN && q->op != DP_NS_OP_NOT_IN)
                                        r = vfail(c, "operator", -EINVAL, "must be In or NotIn for a node field selector");
                                if (r >= 0 && f && q->n_values != 1)
                                        r = vfail(c, "values", -EINVAL,
                                                  "must have exactly one element for a node field selector");
                                if (r < 0) return r;
                                bool want_values = q->op == DP_NS_OP_IN || q->op == DP_NS_OP_NOT_IN ||
                                                   q->op == DP_NS_OP_GT || q->op == DP_NS_OP_LT;
                                if (want_values && q->n_values == 0)
                                        return vfail(c, "values", -EINVAL,
                                                     "must be specified for In, NotIn, Gt and Lt");
                                if (!want_values && q->n_values)
                                        return vfail(c, "values", -EINVAL,
                                                     "may not be specified for Exists and DoesNotExist");
                                if ((q->op == DP_NS_OP_GT || q->op == DP_NS_OP_LT) && q->n_values != 1)
                                        return vfail(c, "values", -EINVAL, "must have a single element for Gt and Lt");
                                path_pop(c, rm);
                        }
                }
                path_pop(c, tm);
        }
        path_pop(c, m);
        return 0;
}

static int validate_taint(dctx *c, const dp_taint *t, bool device) {
        int r = required(c, "key", t->key);
        if (r >= 0) r = vname(c, "key", t->key, dp_validate_qualified_name);
        if (r >= 0 && t->value) r = vname(c, "value", t->value, dp_validate_label_value);
        if (r >= 0) r = required(c, "effect", t->effect);
        if (r < 0) return r;
        bool ok = streq(t->effect, "NoSchedule") || streq(t->effect, "NoExecute") ||
                  (device ? streq(t->effect, "None") : streq(t->effect, "PreferNoSchedule"));
        if (!ok)
                return vfail(c, "effect", -EINVAL,
                             device ? "must be NoSchedule, NoExecute or None"
                                    : "must be NoSchedule, PreferNoSchedule or NoExecute");
        return 0;
}

static int validate_taints(dctx *c, const dp_taint *t, size_t n, bool device) {
        if (device) {
                int r = vmax(c, "taints", n, DP_DEVICE_TAINTS_MAX_LENGTH, "DeviceTaintsMaxLength");
                if (r < 0) return r;
        }
        for (size_t i = 0; i < n; i++) {
                size_t m = path_key(c, "taints");
                path_index(c, i);
                int r = validate_taint(c, &t[i], device);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int validate_tolerations(dctx *c, const dp_toleration *t, size_t n, bool device) {
        if (device) {
                int r = vmax(c, "tolerations", n, DP_DEVICE_TOLERATIONS_MAX_LENGTH, "DeviceTolerationsMaxLength");
                if (r < 0) return r;
        }
        for (size_t i = 0; i < n; i++) {
                size_t m = path_key(c, "tolerations");
                path_index(c, i);
                const dp_toleration *x = &t[i];
                int r = 0;
                if (x->key && *x->key) r = vname(c, "key", x->key, dp_validate_qualified_name);
                bool exists = x->op && streq(x->op, "Exists");
                if (r >= 0 && x->op && *x->op && !exists && !streq(x->op, "Equal"))
                        r = vfail(c, "operator", -EINVAL, "must be Exists or Equal");
                if (r >= 0 && exists && x->value && *x->value)
                        r = vfail(c, "value", -EINVAL, "must be empty when operator is Exists");
                if (r >= 0 && !exists && (!x->key || !*x->key))
                        r = vfail(c, "operator", -EINVAL, "must be Exists when key is empty");
                if (r >= 0 && x->value && *x->value) r = vname(c, "value", x->value, dp_validate_label_value);
                if (r >= 0 && x->effect && *x->effect) {
                        bool ok = streq(x->effect, "NoSchedule") || streq(x->effect, "NoExecute") ||
                                  (device ? streq(x->effect, "None") : streq(x->effect, "PreferNoSchedule"));
                        if (!ok)
                                r = vfail(c, "effect", -EINVAL,
                                          device ? "must be NoSchedule, NoExecute or None"
                                                 : "must be NoSchedule, PreferNoSchedule or NoExecute");
                }
                if (r >= 0 && x->has_toleration_seconds && !(x->effect && streq(x->effect, "NoExecute")))
                        r = vfail(c, "tolerationSeconds", -EINVAL, "may only be set when effect is NoExecute");
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int validate_condition_names(dctx *c, const char *field, char *const *v, size_t n, size_t max,
                                    const char *constant) {
        int r = vmax(c, field, n, max, constant);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                size_t m = path_key(c, field);
                path_index(c, i);
                r = vname(c, NULL, v[i], dp_validate_qualified_name);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(v[i], v[j])) r = vfail(c, NULL, -EINVAL, "duplicate entry");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_opaque(dctx *c, const dp_device_config *cfg) {
        size_t m = path_key(c, "opaque");
        int r = required(c, "driver", cfg->driver);
        if (r >= 0) r = vname(c, "driver", cfg->driver, dp_validate_dns_subdomain);
        if (r >= 0) r = vlen(c, "driver", cfg->driver, DP_DRIVER_NAME_MAX_LENGTH, "DriverNameMaxLength");
        if (r >= 0)
                r = vlen(c, "parameters", cfg->parameters_json, DP_OPAQUE_PARAMETERS_MAX_LENGTH,
                         "OpaqueParametersMaxLength");
        if (r >= 0 && (!cfg->parameters_json || cfg->parameters_json[0] != '{'))
                r = vfail(c, "parameters", -EINVAL, "must be an object");
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_selectors(dctx *c, const dp_device_selector *s, size_t n) {
        int r = vmax(c, "selectors", n, DP_DEVICE_SELECTORS_MAX_SIZE, "DeviceSelectorsMaxSize");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                size_t m = path_key(c, "selectors");
                path_index(c, i);
                path_key(c, "cel");
                r = required(c, "expression", s[i].cel_expression);
                if (r >= 0)
                        r = vlen(c, "expression", s[i].cel_expression, DP_CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
                                 "CELSelectorExpressionMaxLength");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

/* ---- ResourceSlice ---- */

static int validate_attribute(dctx *c, const dp_device_attribute *a, size_t *values) {
        size_t m = path_key(c, a->name);
        int r = 0;
        switch (a->type) {
        case DP_ATTR_STRING:
        case DP_ATTR_VERSION:
                r = vlen(c, NULL, a->s, DP_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH, "DeviceAttributeMaxValueLength");
                if (r >= 0 && a->type == DP_ATTR_VERSION && !valid_semver(a->s))
                        r = vfail(c, "version", -EINVAL, "must be a semantic version (semver.org 2.0.0)");
                (*values)++;
                break;
        case DP_ATTR_STRINGS:
        case DP_ATTR_VERSIONS:
                for (size_t i = 0; r >= 0 && i < a->n; i++) {
                        r = vlen(c, NULL, a->strs[i], DP_DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH,
                                 "DeviceAttributeMaxValueLength");
                        if (r >= 0 && a->type == DP_ATTR_VERSIONS && !valid_semver(a->strs[i]))
                                r = vfail(c, "versions", -EINVAL, "must hold semantic versions (semver.org 2.0.0)");
                }
                /* fall through */
        case DP_ATTR_INTS:
        case DP_ATTR_BOOLS:
                if (r >= 0 && a->n == 0) r = vfail(c, NULL, -EINVAL, "a list attribute must not be empty");
                *values += a->n;
                break;
        default: (*values)++; break;
        }
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_capacity(dctx *c, const dp_device_capacity *cap) {
        size_t m = path_key(c, cap->name);
        int r = 0;
        if (cap->value.nanos < 0) r = vfail(c, "value", -EINVAL, "must not be negative");
        if (r >= 0 && cap->has_request_policy) {
                size_t pm = path_key(c, "requestPolicy");
                if (cap->n_valid_values && cap->valid_range)
                        r = vfail(c, NULL, -EINVAL, "validValues and validRange are mutually exclusive");
                if (r >= 0)
                        r = vmax(c, "validValues", cap->n_valid_values, DP_CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS,
                                 "CapacityRequestPolicyDiscreteMaxOptions");
                for (size_t i = 1; r >= 0 && i < cap->n_valid_values; i++)
                        if (dp_quantity_cmp(&cap->valid_values[i - 1], &cap->valid_values[i]) >= 0)
                                r = vfail(c, "validValues", -EINVAL,
                                          "must be sorted in ascending order without duplicates");
                if (r >= 0 && cap->has_default && cap->n_valid_values) {
                        bool found = false;
                        for (size_t i = 0; i < cap->n_valid_values; i++)
                                found |= dp_quantity_cmp(&cap->valid_values[i], &cap->default_) == 0;
                        if (!found) r = vfail(c, "default", -EINVAL, "must be one of validValues");
                }
                if (r >= 0 && cap->valid_range) {
                        const dp_capacity_range *rg = cap->valid_range;
                        size_t rm = path_key(c, "validRange");
                        if (rg->min.nanos < 0) r = vfail(c, "min", -EINVAL, "must not be negative");
                        if (r >= 0 && rg->has_max && dp_quantity_cmp(&rg->min, &rg->max) > 0)
                                r = vfail(c, "max", -EINVAL, "must be greater than or equal to min");
                        if (r >= 0 && rg->has_step && rg->step.nanos <= 0)
                                r = vfail(c, "step", -EINVAL, "must be positive");
                        if (r >= 0) path_pop(c, rm);
                        if (r >= 0 && cap->has_default &&
                            (dp_quantity_cmp(&cap->default_, &rg->min) < 0 ||
                             (rg->has_max && dp_quantity_cmp(&cap->default_, &rg->max) > 0)))
                                r = vfail(c, "default", -EINVAL, "must lie within validRange");
                }
                if (r >= 0 && cap->has_default && dp_quantity_cmp(&cap->default_, &cap->value) > 0)
                        r = vfail(c, "default", -EINVAL, "must not exceed the capacity value");
                if (r >= 0) path_pop(c, pm);
        }
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_counters(dctx *c, const dp_named_quantity *v, size_t n, size_t max, const char *constant) {
        int r = vmax(c, "counters", n, max, constant);
        if (r >= 0 && n == 0) r = vfail(c, "counters", -EINVAL, "must have at least one counter");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                size_t m = path_key(c, "counters");
                path_key(c, v[i].name);
                r = vname(c, NULL, v[i].name, dp_validate_dns_label);
                if (r >= 0 && v[i].value.nanos < 0) r = vfail(c, "value", -EINVAL, "must not be negative");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_consumptions(dctx *c, const dp_device *d) {
        int r = vmax(c, "consumesCounters", d->n_consumes_counters,
                     DP_RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
                     "ResourceSliceMaxDeviceCounterConsumptionsPerDevice");
        for (size_t i = 0; r >= 0 && i < d->n_consumes_counters; i++) {
                const dp_counter_consumption *cc = &d->consumes_counters[i];
                size_t m = path_key(c, "consumesCounters");
                path_index(c, i);
                r = required(c, "counterSet", cc->counter_set);
                if (r >= 0) r = vname(c, "counterSet", cc->counter_set, dp_validate_dns_label);
                if (r >= 0)
                        r = validate_counters(c, cc->counters, cc->n_counters,
                                              DP_RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
                                              "ResourceSliceMaxCountersPerDeviceCounterConsumption");
                if (r >= 0)
                        r = vmax(c, "compatibilityGroups", cc->n_compatibility_groups,
                                 DP_DEVICE_COMPATIBILITY_GROUPS_MAX_SIZE, "compatibilityGroups (KEP-5963)");
                for (size_t j = 0; r >= 0 && j < cc->n_compatibility_groups; j++) {
                        if (!*cc->compatibility_groups[j] ||
                            strlen(cc->compatibility_groups[j]) > DP_DNS1123_LABEL_MAX_LENGTH)
                                r = vfail(c, "compatibilityGroups", -EINVAL, "group names must be 1 to 63 characters");
                        for (size_t k = 0; r >= 0 && k < j; k++)
                                if (streq(cc->compatibility_groups[j], cc->compatibility_groups[k]))
                                        r = vfail(c, "compatibilityGroups", -EINVAL, "group names must be unique");
                }
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq_ptr(d->consumes_counters[j].counter_set, cc->counter_set))
                                r = vfail(c, "counterSet", -EINVAL, "consumes from the same counter set twice");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_device(dctx *c, const dp_resource_slice *s, const dp_device *d) {
        int r = required(c, "name", d->name);
        if (r >= 0) r = vname(c, "name", d->name, dp_validate_dns_label);
        if (r < 0) return r;
        if (d->n_attributes + d->n_capacity > DP_RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE)
                return dfail(c, NULL, -E2BIG,
                             "must have at most %d attributes and capacities together, got %zu "
                             "(ResourceSliceMaxAttributesAndCapacitiesPerDevice)",
                             DP_RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
                             d->n_attributes + d->n_capacity);
        size_t values = 0;
        for (size_t i = 0; i < d->n_attributes; i++) {
                size_t m = path_key(c, "attributes");
                r = vname(c, NULL, d->attributes[i].name, dp_validate_device_qualified_name);
                if (r >= 0) r = validate_attribute(c, &d->attributes[i], &values);
                if (r < 0) return r;
                path_pop(c, m);
        }
        if (values > DP_RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE)
                return dfail(c, NULL, -E2BIG, "attributes: must hold at most %d values including list entries, got %zu",
                             DP_RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE, values);
        for (size_t i = 0; i < d->n_capacity; i++) {
                size_t m = path_key(c, "capacity");
                r = vname(c, NULL, d->capacity[i].name, dp_validate_device_qualified_name);
                if (r >= 0) r = validate_capacity(c, &d->capacity[i]);
                if (r < 0) return r;
                path_pop(c, m);
        }
        r = validate_consumptions(c, d);
        if (r < 0) return r;
        int placement = !!d->node_name + !!d->node_selector + d->all_nodes;
        if (s->per_device_node_selection && placement != 1)
                return dfail(c, NULL, -EINVAL,
                             "exactly one of nodeName, nodeSelector or allNodes must be set when "
                             "spec.perDeviceNodeSelection is true");
        if (!s->per_device_node_selection && placement)
                return dfail(c, NULL, -EINVAL,
                             "nodeName, nodeSelector and allNodes may only be set when "
                             "spec.perDeviceNodeSelection is true");
        if (d->node_name) r = vname(c, "nodeName", d->node_name, dp_validate_dns_subdomain);
        if (r >= 0) r = validate_node_selector(c, "nodeSelector", d->node_selector);
        if (r >= 0) r = validate_taints(c, d->taints, d->n_taints, true);
        if (r >= 0)
                r = validate_condition_names(c, "bindingConditions", d->binding_conditions, d->n_binding_conditions,
                                             DP_BINDING_CONDITIONS_MAX_SIZE, "BindingConditionsMaxSize");
        if (r >= 0)
                r = validate_condition_names(c, "bindingFailureConditions", d->binding_failure_conditions,
                                             d->n_binding_failure_conditions, DP_BINDING_FAILURE_CONDITIONS_MAX_SIZE,
                                             "BindingFailureConditionsMaxSize");
        if (r >= 0 && (d->n_binding_conditions > 0) != (d->n_binding_failure_conditions > 0))
                r = dfail(c, NULL, -EINVAL, "bindingConditions and bindingFailureConditions must be set together");
        return r;
}

/* A device's consumption against the counter set it names: every counter
 * must exist in the set and fit in it (a consumption above the set's value
 * can never be satisfied). Path: the consumption entry. */
int check_consumption(dctx *c, const dp_counter_consumption *cc, const dp_counter_set *set) {
        for (size_t k = 0; k < cc->n_counters; k++) {
                const dp_named_quantity *want = NULL;
                for (size_t j = 0; j < set->n_counters; j++)
                        if (streq(set->counters[j].name, cc->counters[k].name)) want = &set->counters[j];
                size_t m = path_key(c, "counters");
                path_key(c, cc->counters[k].name);
                if (!want)
                        return dfail(c, NULL, -EINVAL, "unknown counter: counter set %s has no counter %s", set->name,
                                     cc->counters[k].name);
                if (dp_quantity_cmp(&cc->counters[k].value, &want->value) > 0) {
                        char a[DP_QUANTITY_MAX_LEN], b[DP_QUANTITY_MAX_LEN];
                        dp_quantity_format(&cc->counters[k].value, a, sizeof(a));
                        dp_quantity_format(&want->value, b, sizeof(b));
                        return dfail(c, NULL, -EINVAL,
                                     "consumes %s, more than counter set %s holds (%s): the device can never be "
                                     "allocated",
                                     a, set->name, b);
                }
                path_pop(c, m);
        }
        return 0;
}

/* spec.pool at the current path ("spec"). */
static int validate_pool_ref(dctx *c, const dp_resource_slice *s) {
        size_t pm = path_key(c, "pool");
        int r = required(c, "name", s->pool_name);
        if (r >= 0) r = vlen(c, "name", s->pool_name, DP_POOL_NAME_MAX_LENGTH, "PoolNameMaxLength");
        if (r >= 0) {
                /* DNS subdomains separated by '/' */
                char *copy = strdup(s->pool_name);
                if (!copy) return dp_error_set(c->err, -ENOMEM, "out of memory");
                char *save = NULL;
                bool empty_part = s->pool_name[0] == '/' || s->pool_name[strlen(s->pool_name) - 1] == '/' ||
                                  strstr(s->pool_name, "//");
                for (char *p = strtok_r(copy, "/", &save); r >= 0 && p; p = strtok_r(NULL, "/", &save))
                        r = vname(c, "name", p, dp_validate_dns_subdomain);
                free(copy);
                if (r >= 0 && empty_part) r = vfail(c, "name", -EINVAL, "must not have empty '/'-separated parts");
        }
        if (r >= 0 && s->pool_generation < 0) r = vfail(c, "generation", -EINVAL, "must not be negative");
        if (r >= 0 && s->pool_resource_slice_count <= 0)
                r = vfail(c, "resourceSliceCount", -EINVAL, "must be positive");
        if (r >= 0) path_pop(c, pm);
        return r;
}

static int validate_counter_sets(dctx *c, const dp_counter_set *sets, size_t n) {
        int r = vmax(c, "sharedCounters", n, DP_RESOURCE_SLICE_MAX_COUNTER_SETS, "ResourceSliceMaxCounterSets");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const dp_counter_set *cs = &sets[i];
                size_t m = path_key(c, "sharedCounters");
                path_index(c, i);
                r = required(c, "name", cs->name);
                if (r >= 0) r = vname(c, "name", cs->name, dp_validate_dns_label);
                if (r >= 0)
                        r = validate_counters(c, cs->counters, cs->n_counters,
                                              DP_RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET,
                                              "ResourceSliceMaxCountersPerCounterSet");
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(cs->name, sets[j].name)) r = vfail(c, "name", -EINVAL, "duplicate counter set name");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

/* skipNodeOperations (1.37): a slice's, or an allocation result's copy. */
static int validate_skip_ops(dctx *c, char *const *ops, size_t n) {
        bool prepare = false, unprepare = false;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const char *op = ops[i];
                size_t m = path_key(c, "skipNodeOperations");
                path_index(c, i);
                if (streq(op, "*"))
                        prepare = unprepare = true;
                else if (streq(op, "NodePrepareResources"))
                        prepare = true;
                else if (streq(op, "NodeUnprepareResources"))
                        unprepare = true;
                else
                        r = vfail(c, NULL, -EINVAL, "must be NodePrepareResources, NodeUnprepareResources or \"*\"");
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(op, ops[j])) r = vfail(c, NULL, -EINVAL, "duplicate entry");
                if (r >= 0) path_pop(c, m);
        }
        if (r >= 0 && prepare && !unprepare)
                r = vfail(c, "skipNodeOperations", -EINVAL,
                          "skipping NodePrepareResources requires skipping NodeUnprepareResources too");
        return r;
}

static int validate_devices(dctx *c, const dp_resource_slice *s) {
        bool limited = false;
        int r;
        for (size_t i = 0; i < s->n_devices; i++)
                if (s->devices[i].n_taints || s->devices[i].n_consumes_counters) limited = true;
        if (limited)
                r = vmax(c, "devices", s->n_devices, DP_RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS,
                         "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters, the limit when a device uses taints "
                         "or counters");
        else
                r = vmax(c, "devices", s->n_devices, DP_RESOURCE_SLICE_MAX_DEVICES, "ResourceSliceMaxDevices");
        for (size_t i = 0; r >= 0 && i < s->n_devices; i++) {
                size_t m = path_key(c, "devices");
                path_index(c, i);
                r = validate_device(c, s, &s->devices[i]);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(s->devices[i].name, s->devices[j].name))
                                r = vfail(c, "name", -EINVAL, "duplicate device name in the slice");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_slice(dctx *c, const dp_resource_slice *s) {
        int r = validate_meta(c, &s->meta, false, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t sm = path_key(c, "spec");
        r = required(c, "driver", s->driver);
        if (r >= 0) r = vname(c, "driver", s->driver, dp_validate_dns_subdomain);
        if (r >= 0) r = vlen(c, "driver", s->driver, DP_DRIVER_NAME_MAX_LENGTH, "DriverNameMaxLength");
        if (r >= 0) r = validate_pool_ref(c, s);
        if (r < 0) return r;

        int placement = !!s->node_name + !!s->node_selector + s->all_nodes + s->per_device_node_selection;
        if (placement != 1)
                return dfail(c, NULL, -EINVAL,
                             "exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection must be set");
        if (s->node_name) r = vname(c, "nodeName", s->node_name, dp_validate_dns_subdomain);
        if (r >= 0) r = validate_node_selector(c, "nodeSelector", s->node_selector);
        if (r < 0) return r;

        /* resource.k8s.io/v1 slices keep counter sets apart (1.35+); beta
         * dumps from 1.34 clusters may still mix them, and pool checks find
         * the sets wherever they are. */
        if (s->n_devices && s->n_shared_counters && streq_ptr(s->hdr.api_version, "resource.k8s.io/v1"))
                return dfail(c, NULL, -EINVAL,
                             "devices and sharedCounters cannot both be set: since Kubernetes 1.35 counter sets are "
                             "published in their own ResourceSlice of the pool");
        r = validate_devices(c, s);
        if (r >= 0) r = validate_counter_sets(c, s->shared_counters, s->n_shared_counters);
        if (r >= 0) r = validate_skip_ops(c, s->skip_node_operations, s->n_skip_node_operations);
        if (r < 0) return r;
        path_pop(c, sm);
        return 0;
}

/* ---- DeviceClass ---- */

static int validate_configs(dctx *c, const dp_device_config *cfg, size_t n, const dp_resource_claim_spec *spec);

static int validate_class(dctx *c, const dp_device_class *dc) {
        int r = validate_meta(c, &dc->meta, false, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        r = validate_selectors(c, dc->selectors, dc->n_selectors);
        if (r >= 0) r = validate_configs(c, dc->config, dc->n_config, NULL);
        if (r >= 0 && dc->extended_resource_name)
                r = vname(c, "extendedResourceName", dc->extended_resource_name, dp_validate_extended_resource_name);
        if (r >= 0) path_pop(c, m);
        return r;
}

/* ---- claims ---- */

/* "req" or "req/sub" naming a request of spec. */
static bool request_ref_ok(const dp_resource_claim_spec *spec, const char *ref) {
        const char *slash = strchr(ref, '/');
        size_t rl = slash ? (size_t)(slash - ref) : strlen(ref);
        for (size_t i = 0; i < spec->n_requests; i++) {
                const dp_device_request *q = &spec->requests[i];
                if (!q->name || strlen(q->name) != rl || strncmp(q->name, ref, rl) != 0) continue;
                if (!slash) return true;
                for (size_t j = 0; j < q->n_first_available; j++)
                        if (streq_ptr(q->first_available[j].name, slash + 1)) return true;
        }
        return false;
}

static int validate_request_refs(dctx *c, char *const *refs, size_t n, const dp_resource_claim_spec *spec) {
        for (size_t i = 0; i < n; i++) {
                size_t m = path_key(c, "requests");
                path_index(c, i);
                if (!request_ref_ok(spec, refs[i]))
                        return dfail(c, NULL, -EINVAL, "\"%.100s\" names no request of this claim", refs[i]);
                for (size_t j = 0; j < i; j++)
                        if (streq(refs[i], refs[j])) return dfail(c, NULL, -EINVAL, "duplicate entry");
                path_pop(c, m);
        }
        return 0;
}

static int validate_configs(dctx *c, const dp_device_config *cfg, size_t n, const dp_resource_claim_spec *spec) {
        int r = vmax(c, "config", n, DP_DEVICE_CONFIG_MAX_SIZE, "DeviceConfigMaxSize");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                size_t m = path_key(c, "config");
                path_index(c, i);
                if (spec) r = validate_request_refs(c, cfg[i].requests, cfg[i].n_requests, spec);
                if (r >= 0) r = validate_opaque(c, &cfg[i]);
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_request_spec(dctx *c, const dp_device_request_spec *q) {
        int r = required(c, "deviceClassName", q->device_class_name);
        if (r >= 0) r = vname(c, "deviceClassName", q->device_class_name, dp_validate_dns_subdomain);
        if (r >= 0) r = validate_selectors(c, q->selectors, q->n_selectors);
        if (r >= 0 && q->allocation_mode == DP_ALLOCATION_MODE_EXACT_COUNT && q->count <= 0)
                r = vfail(c, "count", -EINVAL, "must be greater than zero");
        if (r >= 0 && q->allocation_mode == DP_ALLOCATION_MODE_ALL && q->count != 0)
                r = vfail(c, "count", -EINVAL, "must not be set when allocationMode is All");
        if (r >= 0) r = validate_tolerations(c, q->tolerations, q->n_tolerations, true);
        for (size_t i = 0; r >= 0 && i < q->n_capacity_requests; i++) {
                size_t m = path_key(c, "capacity");
                path_key(c, "requests");
                r = vname(c, NULL, q->capacity_requests[i].name, dp_validate_device_qualified_name);
                if (r >= 0 && q->capacity_requests[i].value.nanos < 0)
                        r = vfail(c, q->capacity_requests[i].name, -EINVAL, "must not be negative");
                if (r >= 0) path_pop(c, m);
        }
        return r;
}

static int validate_claim_spec(dctx *c, const dp_resource_claim_spec *s) {
        size_t dm = path_key(c, "devices");
        int r = vmax(c, "requests", s->n_requests, DP_DEVICE_REQUESTS_MAX_SIZE, "DeviceRequestsMaxSize");
        for (size_t i = 0; r >= 0 && i < s->n_requests; i++) {
                const dp_device_request *q = &s->requests[i];
                size_t m = path_key(c, "requests");
                path_index(c, i);
                r = required(c, "name", q->name);
                if (r >= 0) r = vname(c, "name", q->name, dp_validate_dns_label);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(q->name, s->requests[j].name))
                                r = vfail(c, "name", -EINVAL, "duplicate request name");
                if (r >= 0 && q->exactly) {
                        size_t em = path_key(c, "exactly");
                        r = validate_request_spec(c, q->exactly);
                        if (r >= 0) path_pop(c, em);
                }
                if (r >= 0)
                        r = vmax(c, "firstAvailable", q->n_first_available, DP_FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
                                 "FirstAvailableDeviceRequestMaxSize");
                for (size_t j = 0; r >= 0 && j < q->n_first_available; j++) {
                        const dp_device_sub_request *sub = &q->first_available[j];
                        size_t fm = path_key(c, "firstAvailable");
                        path_index(c, j);
                        r = required(c, "name", sub->name);
                        if (r >= 0) r = vname(c, "name", sub->name, dp_validate_dns_label);
                        for (size_t k = 0; r >= 0 && k < j; k++)
                                if (streq(sub->name, q->first_available[k].name))
                                        r = vfail(c, "name", -EINVAL, "duplicate subrequest name");
                        if (r >= 0) r = validate_request_spec(c, &sub->spec);
                        if (r >= 0) path_pop(c, fm);
                }
                if (r >= 0) path_pop(c, m);
        }
        if (r >= 0)
                r = vmax(c, "constraints", s->n_constraints, DP_DEVICE_CONSTRAINTS_MAX_SIZE,
                         "DeviceConstraintsMaxSize");
        for (size_t i = 0; r >= 0 && i < s->n_constraints; i++) {
                const dp_device_constraint *k = &s->constraints[i];
                size_t m = path_key(c, "constraints");
                path_index(c, i);
                r = validate_request_refs(c, k->requests, k->n_requests, s);
                if (r >= 0 && k->match_attribute)
                        r = vname(c, "matchAttribute", k->match_attribute, dp_validate_device_full_qualified_name);
                if (r >= 0 && k->distinct_attribute)
                        r = vname(c, "distinctAttribute", k->distinct_attribute,
                                  dp_validate_device_full_qualified_name);
                if (r >= 0) path_pop(c, m);
        }
        if (r >= 0) r = validate_configs(c, s->config, s->n_config, s);
        if (r >= 0) path_pop(c, dm);
        return r;
}

static int validate_allocation(dctx *c, const dp_allocation_result *a) {
        size_t am = path_key(c, "allocation");
        size_t dm = path_key(c, "devices");
        int r = vmax(c, "results", a->n_results, DP_ALLOCATION_RESULTS_MAX_SIZE, "AllocationResultsMaxSize");
        for (size_t i = 0; r >= 0 && i < a->n_results; i++) {
                const dp_device_allocation_result *x = &a->results[i];
                size_t m = path_key(c, "results");
                path_index(c, i);
                r = required(c, "request", x->request);
                if (r >= 0) r = required(c, "driver", x->driver);
                if (r >= 0) r = vname(c, "driver", x->driver, dp_validate_dns_subdomain);
                if (r >= 0) r = required(c, "pool", x->pool);
                if (r >= 0) r = required(c, "device", x->device);
                if (r >= 0) r = vname(c, "device", x->device, dp_validate_dns_label);
                if (r >= 0) r = validate_tolerations(c, x->tolerations, x->n_tolerations, true);
                if (r >= 0)
                        r = validate_condition_names(c, "bindingConditions", x->binding_conditions,
                                                     x->n_binding_conditions, DP_BINDING_CONDITIONS_MAX_SIZE,
                                                     "BindingConditionsMaxSize");
                if (r >= 0)
                        r = validate_condition_names(c, "bindingFailureConditions", x->binding_failure_conditions,
                                                     x->n_binding_failure_conditions,
                                                     DP_BINDING_FAILURE_CONDITIONS_MAX_SIZE,
                                                     "BindingFailureConditionsMaxSize");
                if (r >= 0) r = validate_skip_ops(c, x->skip_node_operations, x->n_skip_node_operations);
                if (r >= 0) path_pop(c, m);
        }
        for (size_t i = 0; r >= 0 && i < a->n_config; i++) {
                size_t m = path_key(c, "config");
                path_index(c, i);
                r = validate_opaque(c, &a->config[i].config);
                if (r >= 0) path_pop(c, m);
        }
        if (r >= 0) path_pop(c, dm);
        if (r >= 0) r = validate_node_selector(c, "nodeSelector", a->node_selector);
        if (r >= 0) path_pop(c, am);
        return r;
}

static int validate_claim(dctx *c, const dp_resource_claim *rc) {
        int r = validate_meta(c, &rc->meta, true, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        r = validate_claim_spec(c, &rc->spec);
        if (r < 0) return r;
        path_pop(c, m);
        m = path_key(c, "status");
        if (rc->allocation) r = validate_allocation(c, rc->allocation);
        if (r >= 0)
                r = vmax(c, "reservedFor", rc->n_reserved_for, DP_RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
                         "ResourceClaimReservedForMaxSize");
        for (size_t i = 0; r >= 0 && i < rc->n_devices; i++) {
                const dp_allocated_device_status *d = &rc->devices[i];
                size_t dm = path_key(c, "devices");
                path_index(c, i);
                r = vmax(c, "conditions", d->n_conditions, DP_ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS,
                         "AllocatedDeviceStatusMaxConditions");
                if (r >= 0)
                        r = vlen(c, "data", d->data_json, DP_ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH,
                                 "AllocatedDeviceStatusDataMaxLength");
                if (r >= 0 && d->network_data) {
                        size_t nm = path_key(c, "networkData");
                        r = vlen(c, "interfaceName", d->network_data->interface_name,
                                 DP_NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH,
                                 "NetworkDeviceDataInterfaceNameMaxLength");
                        if (r >= 0)
                                r = vmax(c, "ips", d->network_data->n_ips, DP_NETWORK_DEVICE_DATA_MAX_IPS,
                                         "NetworkDeviceDataMaxIPs");
                        if (r >= 0)
                                r = vlen(c, "hardwareAddress", d->network_data->hardware_address,
                                         DP_NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH,
                                         "NetworkDeviceDataHardwareAddressMaxLength");
                        if (r >= 0) path_pop(c, nm);
                }
                if (r >= 0) path_pop(c, dm);
        }
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_template(dctx *c, const dp_resource_claim_template *t) {
        int r = validate_meta(c, &t->meta, true, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        path_key(c, "spec");
        r = validate_claim_spec(c, &t->spec);
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_taint_rule(dctx *c, const dp_device_taint_rule *t) {
        int r = validate_meta(c, &t->meta, false, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        if (t->has_device_selector) {
                size_t sm = path_key(c, "deviceSelector");
                if (t->driver) r = vname(c, "driver", t->driver, dp_validate_dns_subdomain);
                if (r >= 0 && t->device) r = vname(c, "device", t->device, dp_validate_dns_label);
                if (r >= 0 && t->device_class_name)
                        r = vname(c, "deviceClassName", t->device_class_name, dp_validate_dns_subdomain);
                if (r >= 0) r = validate_selectors(c, t->selectors, t->n_selectors);
                if (r < 0) return r;
                path_pop(c, sm);
        }
        size_t tm = path_key(c, "taint");
        r = validate_taint(c, &t->taint, true);
        if (r >= 0) path_pop(c, tm);
        if (r >= 0) path_pop(c, m);
        return r;
}

/* ---- core ---- */

static int validate_node(dctx *c, const dp_node *n) {
        int r = validate_meta(c, &n->meta, false, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        r = validate_taints(c, n->taints, n->n_taints, false);
        if (r < 0) return r;
        path_pop(c, m);
        m = path_key(c, "status");
        for (int f = 0; f < 2 && r >= 0; f++) {
                const dp_named_quantity *v = f ? n->allocatable : n->capacity;
                size_t cnt = f ? n->n_allocatable : n->n_capacity;
                size_t fm = path_key(c, f ? "allocatable" : "capacity");
                for (size_t i = 0; r >= 0 && i < cnt; i++) {
                        r = vname(c, NULL, v[i].name, dp_validate_qualified_name);
                        if (r >= 0 && v[i].value.nanos < 0) r = vfail(c, v[i].name, -EINVAL, "must not be negative");
                }
                if (r >= 0) path_pop(c, fm);
        }
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_resource_list(dctx *c, const char *field, const dp_named_quantity *v, size_t n) {
        size_t m = path_key(c, field);
        for (size_t i = 0; i < n; i++) {
                size_t km = path_key(c, v[i].name);
                int r = vname(c, NULL, v[i].name, dp_validate_container_resource_name);
                if (r < 0) return r;
                if (v[i].value.nanos < 0) return dfail(c, NULL, -EINVAL, "must not be negative");
                if (strchr(v[i].name, '/') && !dp_quantity_is_integer(&v[i].value))
                        return dfail(c, NULL, -EINVAL, "an extended resource must be a whole number");
                path_pop(c, km);
        }
        path_pop(c, m);
        return 0;
}

static const dp_named_quantity *find_nq(const dp_named_quantity *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].name, name)) return &v[i];
        return NULL;
}

static int validate_containers(dctx *c, const char *field, const dp_container *v, size_t n, const dp_pod *p,
                               const dp_container *others, size_t n_others) {
        for (size_t i = 0; i < n; i++) {
                const dp_container *ct = &v[i];
                size_t m = path_key(c, field);
                path_index(c, i);
                int r = required(c, "name", ct->name);
                if (r >= 0) r = vname(c, "name", ct->name, dp_validate_dns_label);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(ct->name, v[j].name)) r = vfail(c, "name", -EINVAL, "duplicate container name");
                for (size_t j = 0; r >= 0 && j < n_others; j++)
                        if (streq_ptr(ct->name, others[j].name))
                                r = vfail(c, "name", -EINVAL, "duplicate container name");
                if (r < 0) return r;
                size_t rm = path_key(c, "resources");
                r = validate_resource_list(c, "limits", ct->limits, ct->n_limits);
                if (r >= 0) r = validate_resource_list(c, "requests", ct->requests, ct->n_requests);
                for (size_t j = 0; r >= 0 && j < ct->n_requests; j++) {
                        const dp_named_quantity *q = &ct->requests[j];
                        const dp_named_quantity *l = find_nq(ct->limits, ct->n_limits, q->name);
                        size_t km = path_key(c, "requests");
                        path_key(c, q->name);
                        if (l && dp_quantity_cmp(&q->value, &l->value) > 0)
                                r = vfail(c, NULL, -EINVAL, "must be less than or equal to the limit");
                        else if (strchr(q->name, '/') && l && dp_quantity_cmp(&q->value, &l->value) != 0)
                                r = vfail(c, NULL, -EINVAL, "an extended resource request must equal its limit");
                        else if (strchr(q->name, '/') && !l)
                                r = vfail(c, NULL, -EINVAL, "an extended resource needs a limit");
                        if (r >= 0) path_pop(c, km);
                }
                for (size_t j = 0; r >= 0 && j < ct->n_claims; j++) {
                        size_t cm = path_key(c, "claims");
                        path_index(c, j);
                        bool found = false;
                        for (size_t k = 0; k < p->n_resource_claims; k++)
                                found |= streq_ptr(p->resource_claims[k].name, ct->claims[j].name);
                        if (!found)
                                r = dfail(c, NULL, -EINVAL, "name: \"%.100s\" is not in spec.resourceClaims",
                                          ct->claims[j].name);
                        for (size_t k = 0; r >= 0 && k < j; k++)
                                if (streq(ct->claims[j].name, ct->claims[k].name) &&
                                    streq_ptr(ct->claims[j].request, ct->claims[k].request))
                                        r = vfail(c, NULL, -EINVAL, "duplicate claim");
                        if (r >= 0) path_pop(c, cm);
                }
                if (r < 0) return r;
                path_pop(c, rm);
                path_pop(c, m);
        }
        return 0;
}

static int validate_pod_claims(dctx *c, const dp_pod_resource_claim *v, size_t n) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const dp_pod_resource_claim *q = &v[i];
                size_t cm = path_key(c, "resourceClaims");
                path_index(c, i);
                r = required(c, "name", q->name);
                if (r >= 0) r = vname(c, "name", q->name, dp_validate_dns_label);
                if (r >= 0 && q->resource_claim_name)
                        r = vname(c, "resourceClaimName", q->resource_claim_name, dp_validate_dns_subdomain);
                if (r >= 0 && q->resource_claim_template_name)
                        r = vname(c, "resourceClaimTemplateName", q->resource_claim_template_name,
                                  dp_validate_dns_subdomain);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (streq(q->name, v[j].name)) r = vfail(c, "name", -EINVAL, "duplicate name");
                if (r >= 0) path_pop(c, cm);
        }
        return r;
}

/* The pod spec at the current path (a Pod's "spec", a template's). */
static int validate_pod_spec(dctx *c, const dp_pod *p) {
        size_t m = c->len;
        if (p->n_containers == 0) return vfail(c, "containers", -EINVAL, "must have at least one container");
        int r = validate_containers(c, "initContainers", p->init_containers, p->n_init_containers, p, NULL, 0);
        if (r >= 0)
                r = validate_containers(c, "containers", p->containers, p->n_containers, p, p->init_containers,
                                        p->n_init_containers);
        if (r >= 0 && p->node_name) r = vname(c, "nodeName", p->node_name, dp_validate_dns_subdomain);
        for (size_t i = 0; r >= 0 && i < p->n_node_selector; i++) {
                size_t nm = path_key(c, "nodeSelector");
                r = vname(c, NULL, p->node_selector[i].key, dp_validate_qualified_name);
                if (r >= 0) r = vname(c, p->node_selector[i].key, p->node_selector[i].value, dp_validate_label_value);
                if (r >= 0) path_pop(c, nm);
        }
        if (r >= 0 && p->required_node_affinity) {
                size_t am = path_key(c, "affinity");
                path_key(c, "nodeAffinity");
                r = validate_node_selector(c, "requiredDuringSchedulingIgnoredDuringExecution",
                                           p->required_node_affinity);
                if (r >= 0) path_pop(c, am);
        }
        if (r >= 0) r = validate_tolerations(c, p->tolerations, p->n_tolerations, false);
        if (r >= 0 && (p->n_pod_limits || p->n_pod_requests)) {
                size_t rm = path_key(c, "resources");
                r = validate_resource_list(c, "limits", p->pod_limits, p->n_pod_limits);
                if (r >= 0) r = validate_resource_list(c, "requests", p->pod_requests, p->n_pod_requests);
                if (r >= 0) path_pop(c, rm);
        }
        if (r >= 0) r = validate_pod_claims(c, p->resource_claims, p->n_resource_claims);
        if (r >= 0 && p->scheduling_group)
                r = vname(c, "schedulingGroup", p->scheduling_group, dp_validate_dns_subdomain);
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_pod(dctx *c, const dp_pod *p) {
        int r = validate_meta(c, &p->meta, true, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        r = validate_pod_spec(c, p);
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_deployment(dctx *c, const dp_deployment *d) {
        int r = validate_meta(c, &d->meta, true, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        if (d->replicas < 0) return vfail(c, "replicas", -EINVAL, "must not be negative");
        path_key(c, "template");
        path_key(c, "spec");
        r = validate_pod_spec(c, d->template_);
        if (r >= 0) path_pop(c, m);
        return r;
}

static int validate_pod_group(dctx *c, const dp_pod_group *g) {
        int r = validate_meta(c, &g->meta, true, dp_validate_dns_subdomain);
        if (r < 0) return r;
        size_t m = path_key(c, "spec");
        if (dp_pod_group_api_of(g) >= DP_POD_GROUP_VOLCANO) {
                /* unset (KAI's sub-group gangs): no gang of the whole group */
                if (g->min_member < 0) return vfail(c, "minMember", -EINVAL, "must not be negative");
        } else if (g->min_member < 1) {
                if (g->hdr.api_version && streq(g->hdr.api_version, "scheduling.k8s.io/v1alpha2")) {
                        path_key(c, "schedulingPolicy");
                        path_key(c, "gang");
                        return vfail(c, "minCount", -EINVAL, "must be at least 1");
                }
                return vfail(c, "minMember", -EINVAL, "must be at least 1");
        }
        r = validate_pod_claims(c, g->resource_claims, g->n_resource_claims);
        if (r < 0) return r;
        path_pop(c, m);
        return 0;
}

/* scheduling.k8s.io/v1: values above one billion are the system classes'. */
static int validate_priority_class(dctx *c, const dp_priority_class *pc) {
        int r = validate_meta(c, &pc->meta, false, dp_validate_dns_subdomain);
        if (r < 0) return r;
        if (pc->value > DP_PRIORITY_HIGHEST_USER_DEFINABLE && pc->meta.name && !startswith(pc->meta.name, "system-"))
                return vfail(c, "value", -EINVAL,
                             "must be at most 1000000000 (HighestUserDefinablePriority) for a class not named system-*");
        return 0;
}

int dp_object_validate(dp_object o, dp_error *err) {
        assert_return(o.hdr, -EINVAL);
        dctx c;
        DCTX_INIT(&c, err);
        int r = 0;
        switch (o.hdr->kind) {
        case DP_KIND_RESOURCE_SLICE: r = validate_slice(&c, o.slice); break;
        case DP_KIND_DEVICE_CLASS: r = validate_class(&c, o.device_class); break;
        case DP_KIND_RESOURCE_CLAIM: r = validate_claim(&c, o.claim); break;
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: r = validate_template(&c, o.claim_template); break;
        case DP_KIND_DEVICE_TAINT_RULE: r = validate_taint_rule(&c, o.taint_rule); break;
        case DP_KIND_NODE: r = validate_node(&c, o.node); break;
        case DP_KIND_POD: r = validate_pod(&c, o.pod); break;
        case DP_KIND_NAMESPACE: r = validate_meta(&c, &o.ns->meta, false, dp_validate_dns_label); break;
        case DP_KIND_POD_GROUP: r = validate_pod_group(&c, o.pod_group); break;
        case DP_KIND_PRIORITY_CLASS: r = validate_priority_class(&c, o.priority_class); break;
        case DP_KIND_POD_DISRUPTION_BUDGET: r = validate_meta(&c, &o.pdb->meta, true, dp_validate_dns_subdomain); break;
        case DP_KIND_DEPLOYMENT:
        case DP_KIND_REPLICA_SET:
        case DP_KIND_STATEFUL_SET:
        case DP_KIND_JOB:
        case DP_KIND_DAEMON_SET: r = validate_deployment(&c, o.deployment); break;
        case DP_KIND_SERVICE:
        case DP_KIND_REPLICATION_CONTROLLER: r = validate_meta(&c, &o.deployment->meta, true, dp_validate_dns_subdomain); break;
        case DP_KIND_EXT: break; /* checked by the module that decoded it */
        case DP_KIND_NONE: r = dp_error_set(err, -EINVAL, "no kind"); break;
        }
        if (r < 0 && r != -ENOMEM) {
                char who[640];
                dp_object_describe(o, who, sizeof(who));
                dp_error_prefix(err, "%s: %s", o.hdr->source ? o.hdr->source : "<input>", who);
        }
        return r;
}
