/* SPDX-License-Identifier: Apache-2.0
 *
 * config.c — Kueue's Configuration (kind Configuration, apiVersion
 * config.kueue.x-k8s.io/v1beta2 or v1beta1: the controller manager's file,
 * not a cluster object), the parts admission reads: resources
 * (deviceClassMappings, excludeResourcePrefixes), featureGates
 * (KueueDRAIntegration; AdmissionFairSharing and
 * FairSharingPrioritizeNonBorrowing, which change the order of admission),
 * fairSharing (enable, preemptionStrategies) and admissionFairSharing
 * (usageHalfLifeTime, usageSamplingInterval, resourceWeights); waitForPodsReady
 * is checked as Kueue checks it and warned of (not modelled). Kueue's other fields
 * (health, webhook, integrations...) are taken silently; a field Kueue does
 * not have is a warning naming it; a bad value is one error with the file,
 * the field path and the rule. The walk is the model's (path-keeping
 * getters of model/decode-internal.h), so messages read as the model's.
 */
#include <math.h>
#include <stdio.h>

#include "base/strv.h"
#include "cel/cel.h"
#include "model/decode-internal.h"
#include "queue/queue.h"

typedef struct cfgx {
        dctx *c;
        const char *source;
        dp_kueue_config *cfg;
} cfgx;

/* One warning, "FILE: Configuration: PATH: what (line N)". */
static int cfg_warn(cfgx *x, const dp_doc_node *n, const char *what) {
        dp_error *saved = x->c->err, w = DP_ERROR_INIT;
        x->c->err = &w;
        (void)dfail(x->c, n, -EINVAL, "%s", what);
        x->c->err = saved;
        char **v = realloc(x->cfg->warnings, (x->cfg->n_warnings + 1) * sizeof(*v));
        if (!v) return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        x->cfg->warnings = v;
        if (!(v[x->cfg->n_warnings] = dp_asprintf("%s: Configuration: %s", x->source, w.msg)))
                return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        x->cfg->n_warnings++;
        return 0;
}

static int cfg_unknown(cfgx *x, const dp_doc_node *key_node, const char *key) {
        char what[300];
        snprintf(what, sizeof(what), "unknown field \"%.200s\": not a field of Kueue's Configuration, ignored", key);
        return cfg_warn(x, key_node, what);
}

/* Walk map n: fn takes the keys it knows (1), else the key is unknown. */
typedef int (*cfg_field_fn)(cfgx *x, const char *key, const dp_doc_node *v, void *userdata);

static int cfg_fields(cfgx *x, const dp_doc_node *n, cfg_field_fn fn, void *userdata) {
        int r = expect_map(x->c, n);
        if (r <= 0) return r;
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_pair *p = &n->pairs[i];
                size_t mark = path_key(x->c, p->key);
                r = fn(x, p->key, p->value, userdata);
                if (r == 0) {
                        path_pop(x->c, mark);
                        r = cfg_unknown(x, p->key_node ? p->key_node : p->value, p->key);
                }
                if (r < 0) return r;
                path_pop(x->c, mark);
        }
        return 0;
}

/* ---- resources.deviceClassMappings ---- */

typedef struct source_walk {
        dp_kueue_dra_source *s;
        bool counter, capacity; /* which source type the entry set */
} source_walk;

static int selector_cel_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_kueue_dra_source *s = userdata;
        if (streq(key, "expression")) return get_str(x->c, v, &s->cel) < 0 ? -EINVAL : 1;
        return 0;
}

static int selector_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        if (streq(key, "cel")) return cfg_fields(x, v, selector_cel_field, userdata) < 0 ? -EINVAL : 1;
        return 0;
}

static int source_body_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_kueue_dra_source *s = userdata;
        if (streq(key, "name")) return get_str(x->c, v, &s->name) < 0 ? -EINVAL : 1;
        if (streq(key, "driver")) return get_str(x->c, v, &s->driver) < 0 ? -EINVAL : 1;
        if (streq(key, "deviceSelector")) return cfg_fields(x, v, selector_field, s) < 0 ? -EINVAL : 1;
        return 0;
}

static int source_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        source_walk *w = userdata;
        if (!streq(key, "counter") && !streq(key, "capacity")) return 0;
        if (dp_doc_is_null(v)) return 1;
        bool counter = streq(key, "counter");
        if (counter) w->counter = true;
        else
                w->capacity = true;
        w->s->kind = counter ? DP_KUEUE_SOURCE_COUNTER : DP_KUEUE_SOURCE_CAPACITY;
        return cfg_fields(x, v, source_body_field, w->s) < 0 ? -EINVAL : 1;
}

/* One source's rules, as Kueue's validateDeviceClassMappings checks them
 * (the gates are checked once the whole file is read: dra_gates_check). */
static int source_check(cfgx *x, const dp_doc_node *n, const source_walk *w) {
        const dp_kueue_dra_source *s = w->s;
        dp_error e = DP_ERROR_INIT;
        if (!w->counter && !w->capacity)
                return dfail(x->c, n, -EINVAL, "Required value: exactly one source type must be set per entry");
        if (w->counter && w->capacity)
                return dfail(x->c, n, -EINVAL,
                             "Invalid value: \"counter+capacity\": exactly one source type must be set per entry");
        const char *type = w->counter ? "counter" : "capacity";
        if (!s->name || !s->name[0]) return dfail(x->c, n, -EINVAL, "%s.name: Required value", type);
        if ((w->counter ? dp_validate_dns_label(s->name, &e) : dp_validate_qualified_name(s->name, &e)) < 0)
                return dfail(x->c, n, -EINVAL, "%s.name: Invalid value: \"%s\": %s", type, s->name, e.msg);
        if (!s->driver || !s->driver[0]) return dfail(x->c, n, -EINVAL, "%s.driver: Required value", type);
        if (strlen(s->driver) > 63)
                return dfail(x->c, n, -EINVAL, "%s.driver: Invalid value: \"%s\": must not exceed 63 characters", type,
                             s->driver);
        if (dp_validate_dns_subdomain(s->driver, &e) < 0)
                return dfail(x->c, n, -EINVAL, "%s.driver: Invalid value: \"%s\": %s", type, s->driver, e.msg);
        if (!s->cel || !s->cel[0])
                return dfail(x->c, n, -EINVAL, "%s.deviceSelector.cel.expression: Required value", type);
        _cleanup_(dp_cel_program_freep) dp_cel_program *prog = NULL;
        if (dp_cel_compile(s->cel, NULL, &prog, &e) < 0) {
                if (e.code == -ENOMEM) return dp_error_set(x->c->err, -ENOMEM, "out of memory");
                return dfail(x->c, n, -EINVAL, "%s.deviceSelector.cel.expression: Invalid value: \"%s\": %s", type,
                             s->cel, e.msg);
        }
        return 0;
}

static int sources(cfgx *x, const dp_doc_node *v, dp_kueue_device_class_mapping *m) {
        int r = expect_seq(x->c, v);
        if (r <= 0) return r;
        if (v->n > DP_KUEUE_MAX_SOURCES)
                return dfail(x->c, v, -E2BIG, "must have at most %d items, has %zu", DP_KUEUE_MAX_SOURCES, v->n);
        if (!(m->sources = calloc(v->n + 1, sizeof(*m->sources))))
                return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        bool counter = false, capacity = false;
        for (size_t i = 0; i < v->n; i++) {
                size_t mark = path_index(x->c, i);
                source_walk w = {&m->sources[i], false, false};
                m->n_sources = i + 1;
                m->sources[i].line = v->items[i]->line;
                r = cfg_fields(x, v->items[i], source_field, &w);
                if (r >= 0) r = source_check(x, v->items[i], &w);
                if (r < 0) return r;
                counter |= w.counter;
                capacity |= w.capacity;
                path_pop(x->c, mark);
        }
        if (counter && capacity)
                return dfail(x->c, v, -EINVAL, "Invalid value: %zu: cannot mix counter and capacity sources in the same "
                             "mapping", v->n);
        return 0;
}

static int mapping_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_kueue_device_class_mapping *m = userdata;
        if (streq(key, "name")) return get_str(x->c, v, &m->name) < 0 ? -EINVAL : 1;
        if (streq(key, "deviceClassNames"))
                return get_strv(x->c, v, &m->device_class_names, &m->n_device_class_names) < 0 ? -EINVAL : 1;
        if (streq(key, "sources")) return sources(x, v, m) < 0 ? -EINVAL : 1;
        return 0;
}

/* A mapping's counter name (its first source's, when a counter), "" when none. */
static const char *counter_name(const dp_kueue_device_class_mapping *m) {
        return m->n_sources && m->sources[0].kind == DP_KUEUE_SOURCE_COUNTER && m->sources[0].name ? m->sources[0].name
                                                                                                    : "";
}

/* Whether DeviceClass dc may be named again by mapping i: only when every
 * earlier mapping of it and this one track different counters (Kueue's
 * multi-counter rule); else the error. */
static int class_again(cfgx *x, const dp_doc_node *n, size_t i, size_t k, const char *dc) {
        const dp_kueue_device_class_mapping *m = &x->cfg->mappings[i];
        for (size_t j = 0; j < i; j++) {
                const dp_kueue_device_class_mapping *o = &x->cfg->mappings[j];
                if (!dp_strv_contains_n(o->device_class_names, o->n_device_class_names, dc)) continue;
                if (streq(o->name, m->name)) continue;
                if (!counter_name(m)[0] || !counter_name(o)[0])
                        return dfail(x->c, n, -EINVAL,
                                     "deviceClassNames[%zu]: Invalid value: \"%s\": device class already mapped to "
                                     "resource %s",
                                     k, dc, o->name);
                if (streq(counter_name(m), counter_name(o)))
                        return dfail(x->c, n, -EINVAL,
                                     "deviceClassNames[%zu]: Invalid value: \"%s\": device class already has a counter "
                                     "source for counter \"%s\"",
                                     k, dc, counter_name(m));
        }
        return 0;
}

/* The rules Kueue's configuration validation checks, as one error each. */
static int mapping_check(cfgx *x, const dp_doc_node *n, size_t i) {
        const dp_kueue_device_class_mapping *m = &x->cfg->mappings[i];
        dp_error e = DP_ERROR_INIT;
        if (!m->name || !m->name[0]) return dfail(x->c, n, -EINVAL, "name: required");
        if (dp_validate_qualified_name(m->name, &e) < 0)
                return dfail(x->c, n, -EINVAL, "name: Invalid value: \"%s\": %s", m->name, e.msg);
        for (size_t j = 0; j < i; j++)
                if (streq(x->cfg->mappings[j].name, m->name))
                        return dfail(x->c, n, -EINVAL, "name: Duplicate value: \"%s\"", m->name);
        if (!m->n_device_class_names)
                return dfail(x->c, n, -EINVAL, "deviceClassNames: Required value: at least one device class name is "
                             "required");
        if (m->n_device_class_names > DP_KUEUE_MAX_DEVICE_CLASSES)
                return dfail(x->c, n, -E2BIG, "deviceClassNames: Too many: %zu: must have at most %d items",
                             m->n_device_class_names, DP_KUEUE_MAX_DEVICE_CLASSES);
        for (size_t k = 0; k < m->n_device_class_names; k++) {
                const char *dc = m->device_class_names[k];
                if (!dc[0]) return dfail(x->c, n, -EINVAL, "deviceClassNames[%zu]: must not be empty", k);
                if (dp_validate_qualified_name(dc, &e) < 0)
                        return dfail(x->c, n, -EINVAL, "deviceClassNames[%zu]: Invalid value: \"%s\": %s", k, dc, e.msg);
                if (dp_strv_contains_n(m->device_class_names, k, dc))
                        return dfail(x->c, n, -EINVAL, "deviceClassNames[%zu]: Duplicate value: \"%s\"", k, dc);
                int r = class_again(x, n, i, k, dc);
                if (r < 0) return r;
        }
        return 0;
}

static int mappings(cfgx *x, const dp_doc_node *v) {
        int r = expect_seq(x->c, v);
        if (r <= 0) return r;
        if (v->n > DP_KUEUE_MAX_DEVICE_CLASS_MAPPINGS)
                return dfail(x->c, v, -E2BIG, "Too many: %zu: must have at most %d items", v->n,
                             DP_KUEUE_MAX_DEVICE_CLASS_MAPPINGS);
        dp_kueue_config *cfg = x->cfg;
        if (!(cfg->mappings = calloc(v->n + 1, sizeof(*cfg->mappings))))
                return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < v->n; i++) {
                size_t mark = path_index(x->c, i);
                cfg->n_mappings = i + 1;
                r = cfg_fields(x, v->items[i], mapping_field, &cfg->mappings[i]);
                if (r >= 0) r = mapping_check(x, v->items[i], i);
                if (r < 0) return r;
                path_pop(x->c, mark);
        }
        return 0;
}

/* ---- resources.transformations ---- */

static int transformation_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_kueue_transformation *t = userdata;
        if (streq(key, "input")) return get_str(x->c, v, &t->input) < 0 ? -EINVAL : 1;
        if (streq(key, "multiplyBy")) return get_str(x->c, v, &t->multiply_by) < 0 ? -EINVAL : 1;
        if (streq(key, "outputs")) return get_quantity_map(x->c, v, &t->outputs, &t->n_outputs) < 0 ? -EINVAL : 1;
        if (streq(key, "strategy")) {
                _cleanup_free_ char *strategy = NULL;
                if (get_str(x->c, v, &strategy) < 0) return -EINVAL;
                if (strategy && !streq(strategy, "Retain") && !streq(strategy, "Replace"))
                        return dfail(x->c, v, -EINVAL,
                                     "Unsupported value: \"%s\": supported values: \"Retain\", \"Replace\"",
                                     strategy);
                t->replace = strategy && streq(strategy, "Replace");
                return 1;
        }
        return 0;
}

static int transformations(cfgx *x, const dp_doc_node *v) {
        int r = expect_seq(x->c, v);
        if (r <= 0) return r;
        if (v->n > DP_KUEUE_MAX_TRANSFORMATIONS)
                return dfail(x->c, v, -E2BIG, "Too many: %zu: must have at most %d items", v->n,
                             DP_KUEUE_MAX_TRANSFORMATIONS);
        dp_kueue_config *cfg = x->cfg;
        if (!(cfg->transformations = calloc(v->n + 1, sizeof(*cfg->transformations))))
                return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < v->n; i++) {
                size_t mark = path_index(x->c, i);
                dp_kueue_transformation *t = &cfg->transformations[i];
                cfg->n_transformations = i + 1;
                r = cfg_fields(x, v->items[i], transformation_field, t);
                if (r < 0) return r;
                if (!t->input || !t->input[0]) return dfail(x->c, v->items[i], -EINVAL, "input: Required value");
                for (size_t j = 0; j < i; j++)
                        if (streq(cfg->transformations[j].input, t->input))
                                return dfail(x->c, v->items[i], -EINVAL, "input: Duplicate value: \"%s\"", t->input);
                path_pop(x->c, mark);
        }
        return 0;
}

static int resources_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        dp_kueue_config *cfg = x->cfg;
        if (streq(key, "deviceClassMappings")) return mappings(x, v) < 0 ? -EINVAL : 1;
        if (streq(key, "excludeResourcePrefixes"))
                return get_strv(x->c, v, &cfg->exclude_prefixes, &cfg->n_exclude_prefixes) < 0 ? -EINVAL : 1;
        if (streq(key, "transformations")) return transformations(x, v) < 0 ? -EINVAL : 1;
        return 0;
}

/* ---- the top level ---- */

static int gates_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        bool on = true;
        if (get_bool(x->c, v, &on) < 0) return -EINVAL;
        /* the gate's name since Kueue 0.18, and before */
        if (streq(key, "KueueDRAIntegration") || streq(key, "DynamicResourceAllocation")) x->cfg->dra_disabled = !on;
        /* the extended-resource gate's name since 0.18, and before */
        if (streq(key, "KueueDRAIntegrationExtendedResource") || streq(key, "DRAExtendedResources"))
                x->cfg->extended_resource_disabled = !on;
        if (streq(key, "KueueDRAIntegrationPartitionableDevices")) x->cfg->counters_disabled = !on;
        if (streq(key, "KueueDRAIntegrationConsumableCapacity")) x->cfg->capacity_enabled = on;
        if (streq(key, "KueueDRAIntegrationPrioritizedList")) x->cfg->prioritized_list_enabled = on; /* dra.c */
        if (streq(key, "AdmissionFairSharing")) x->cfg->gate_afs_off = !on;
        if (streq(key, "FairSharingPrioritizeNonBorrowing")) x->cfg->gate_non_borrowing_off = !on;
        if (streq(key, "PrioritizePreemptorWorkloads") && on)
                return cfg_warn(x, v,
                                "not modelled: devplane evicts the victims at the end of the cycle, so the "
                                "preemptor is its queue's head in the next one anyway") < 0
                               ? -ENOMEM
                               : 1;
        return 1;
}

/* ---- fairSharing ---- */

static const char *const strategy_names[] = {"LessThanOrEqualToFinalShare", "LessThanInitialShare", NULL};

/* Kueue's validation: [LTEFS], [LTIS] or [LTEFS, LTIS]; an empty list is
 * the default (both). */
static int strategies(cfgx *x, const dp_doc_node *v) {
        char **names = NULL;
        size_t n = 0;
        if (get_strv(x->c, v, &names, &n) < 0) return -EINVAL;
        dp_kueue_config *cfg = x->cfg;
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                size_t k = 0;
                while (strategy_names[k] && !streq(strategy_names[k], names[i]))
                        k++;
                if (!strategy_names[k] || i >= 2 ||
                    (i == 1 && (k != 1 || cfg->fs_strategies[0] != DP_KUEUE_FS_LTEFS))) {
                        r = dfail(x->c, v, -EINVAL,
                                  "must be [LessThanOrEqualToFinalShare], [LessThanInitialShare] or "
                                  "[LessThanOrEqualToFinalShare, LessThanInitialShare]");
                        break;
                }
                cfg->fs_strategies[i] = (uint8_t)(k + 1);
                cfg->n_fs_strategies = i + 1;
        }
        dp_strv_free_n(names, n);
        return r;
}

static int fair_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        if (streq(key, "enable")) return get_bool(x->c, v, &x->cfg->fair_sharing) < 0 ? -EINVAL : 1;
        if (streq(key, "preemptionStrategies")) return strategies(x, v) < 0 ? -EINVAL : 1;
        return 0;
}

/* ---- admissionFairSharing ---- */

/* A Go duration (metav1.Duration: "168h", "5m", "1h30m", "90s", "0"), in
 * seconds; not negative. */
static int duration(cfgx *x, const dp_doc_node *v, double *ret) {
        _cleanup_free_ char *text = NULL;
        if (get_str(x->c, v, &text) < 0) return -EINVAL;
        if (!text) return 0; /* null: unset, the default stays */
        static const struct {
                const char *unit;
                double s;
        } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
        double total = 0;
        const char *p = streq(text, "0") ? "" : text;
        while (*p) {
                char *end = NULL;
                double n = strtod(p, &end);
                size_t u = ELEMENTSOF(units);
                for (size_t k = 0; end && end != p && k < ELEMENTSOF(units); k++)
                        if (startswith(end, units[k].unit) &&
                            (u == ELEMENTSOF(units) || strlen(units[k].unit) > strlen(units[u].unit)))
                                u = k; /* the longest unit that matches: "ms" before "m" */
                if (u == ELEMENTSOF(units) || !(n >= 0) || !isfinite(n))
                        return dfail(x->c, v, -EINVAL, "must be a duration such as 168h, 5m or 90s, not negative");
                total += n * units[u].s;
                p = end + strlen(units[u].unit);
        }
        *ret = total;
        return 0;
}

static int weights(cfgx *x, const dp_doc_node *v) {
        _cleanup_free_ dp_named_quantity *m = NULL;
        size_t n = 0;
        if (get_quantity_map(x->c, v, &m, &n) < 0) return -EINVAL;
        dp_kueue_config *cfg = x->cfg;
        cfg->afs_weight_names = calloc(n + 1, sizeof(char *));
        cfg->afs_weights = calloc(n + 1, sizeof(double));
        int r = cfg->afs_weight_names && cfg->afs_weights ? 0 : dp_error_set(x->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                double w = dp_quantity_as_double(&m[i].value);
                if (r >= 0 && w < 0) {
                        size_t mark = path_key(x->c, m[i].name);
                        r = dfail(x->c, v, -EINVAL, "must not be negative");
                        path_pop(x->c, mark);
                }
                if (r >= 0) {
                        cfg->afs_weight_names[i] = TAKE_PTR(m[i].name);
                        cfg->afs_weights[cfg->n_afs_weights++] = w;
                }
                free(m[i].name);
        }
        return r;
}

static int afs_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        dp_kueue_config *cfg = x->cfg;
        if (streq(key, "usageHalfLifeTime")) return duration(x, v, &cfg->afs_half_life_s) < 0 ? -EINVAL : 1;
        if (streq(key, "usageSamplingInterval")) return duration(x, v, &cfg->afs_sampling_s) < 0 ? -EINVAL : 1;
        if (streq(key, "resourceWeights")) return weights(x, v) < 0 ? -EINVAL : 1;
        return 0;
}

/* ---- waitForPodsReady: checked as Kueue's validateWaitForPodsReady checks
 * it (only when enabled: v1beta1's enable, true when absent here), not
 * modelled: one warning names what is set ---- */

static int wfpr_enable(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        if (streq(key, "enable") && get_bool(x->c, v, userdata) < 0) return -EINVAL;
        return 1; /* the other keys are read by the second walk */
}

static int wfpr_strategy_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        if (streq(key, "timestamp")) {
                _cleanup_free_ char *t = NULL;
                if (get_str(x->c, v, &t) < 0) return -EINVAL;
                if (!t || streq(t, "Creation") || streq(t, "Eviction")) return 1;
                (void)dfail(x->c, v, -EINVAL, "Unsupported value: \"%s\": supported values: \"Creation\", \"Eviction\"",
                            t);
                return -EINVAL;
        }
        if (!streq(key, "backoffLimitCount") && !streq(key, "backoffBaseSeconds") && !streq(key, "backoffMaxSeconds"))
                return 0;
        int32_t n = 0;
        if (get_int32(x->c, v, &n) < 0) return -EINVAL;
        if (n >= 0) return 1;
        (void)dfail(x->c, v, -EINVAL, "must be greater than or equal to 0");
        return -EINVAL;
}

/* userdata: the names of the fields set, for the warning. */
static int wfpr_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_strbuf *set = userdata;
        double s = 0;
        bool b = false;
        int r;
        if (streq(key, "enable")) return 1;
        if (streq(key, "timeout") || streq(key, "recoveryTimeout"))
                r = duration(x, v, &s);
        else if (streq(key, "blockAdmission"))
                r = get_bool(x->c, v, &b);
        else if (streq(key, "requeuingStrategy"))
                r = cfg_fields(x, v, wfpr_strategy_field, NULL);
        else
                return 0;
        if (r < 0) return -EINVAL;
        dp_strbuf_printf(set, ", %s", key);
        return 1;
}

static int wait_for_pods_ready(cfgx *x, const dp_doc_node *v) {
        bool on = true;
        if (cfg_fields(x, v, wfpr_enable, &on) < 0) return -EINVAL;
        if (!on) return 0; /* Kueue ignores the rest */
        _cleanup_strbuf_ dp_strbuf set = DP_STRBUF_INIT;
        if (cfg_fields(x, v, wfpr_field, &set) < 0) return -EINVAL;
        _cleanup_free_ char *what =
                dp_asprintf("not modelled, ignored%s%s%s: devplane neither evicts an admitted workload whose pods are "
                            "not all ready in time nor requeues it with backoff, nor holds admission while one is not "
                            "ready; an admitted workload kube-scheduler leaves Pending shows as admitted but not placed",
                            set.len ? " (" : "", set.len ? dp_strbuf_str(&set) + 2 : "", set.len ? ")" : "");
        if (!what || dp_strbuf_failed(&set)) return dp_error_set(x->c->err, -ENOMEM, "out of memory");
        return cfg_warn(x, v, what);
}

/* Kueue's fields admission does not depend on: taken without a word. */
static bool silent_field(const char *key) {
        static const char *const keys[] = {"namespace",
                                           "manageJobsWithoutQueueName",
                                           "managedJobsNamespaceSelector",
                                           "internalCertManagement",
                                           "clientConnection",
                                           "integrations",
                                           "multiKueue",
                                           "objectRetentionPolicies",
                                           "health",
                                           "metrics",
                                           "webhook",
                                           "leaderElection",
                                           "controller",
                                           "pprofBindAddress",
                                           "queueVisibility",
                                           "tls",
                                           "certManagement",
                                           NULL};
        return in_list(key, keys);
}

static int top_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        if (streq(key, "apiVersion") || streq(key, "kind") || silent_field(key)) return 1;
        if (streq(key, "resources")) return cfg_fields(x, v, resources_field, NULL) < 0 ? -EINVAL : 1;
        if (streq(key, "featureGates")) return cfg_fields(x, v, gates_field, NULL) < 0 ? -EINVAL : 1;
        if (streq(key, "fairSharing")) return cfg_fields(x, v, fair_field, NULL) < 0 ? -EINVAL : 1;
        if (streq(key, "waitForPodsReady")) return wait_for_pods_ready(x, v) < 0 ? -EINVAL : 1;
        if (streq(key, "admissionFairSharing")) {
                x->cfg->has_afs = true;
                x->cfg->afs_sampling_s = 300; /* Kueue's default, 5 min */
                return cfg_fields(x, v, afs_field, NULL) < 0 ? -EINVAL : 1;
        }
        return 0;
}

static int check_kind(const char *source, const dp_doc_node *root, dp_error *err) {
        const char *kind = NULL, *api = NULL;
        dp_error e = DP_ERROR_INIT;
        if (!root || root->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "%s: must hold a Kueue Configuration (a map)", source);
        const dp_doc_node *k = dp_doc_get(root, "kind"), *a = dp_doc_get(root, "apiVersion");
        if (!k || dp_doc_get_str(k, false, &kind, &e) < 0 || !streq(kind, "Configuration"))
                return dp_error_set(err, -EINVAL, "%s: kind: must be Configuration (Kueue's)", source);
        if (!a || dp_doc_get_str(a, false, &api, &e) < 0 ||
            (!streq(api, "config.kueue.x-k8s.io/v1beta2") && !streq(api, "config.kueue.x-k8s.io/v1beta1")))
                return dp_error_set(err, -EINVAL, "%s: apiVersion: must be config.kueue.x-k8s.io/v1beta2 or v1beta1",
                                    source);
        return 0;
}

/* A source whose gate is off: Kueue refuses the Configuration. */
static int dra_gates_check(const dp_kueue_config *cfg, const char *source, dp_error *err) {
        for (size_t i = 0; i < cfg->n_mappings; i++)
                for (size_t j = 0; j < cfg->mappings[i].n_sources; j++) {
                        const dp_kueue_dra_source *s = &cfg->mappings[i].sources[j];
                        bool counter = s->kind == DP_KUEUE_SOURCE_COUNTER;
                        if (counter ? !cfg->counters_disabled : cfg->capacity_enabled) continue;
                        return dp_error_set(err, -EINVAL,
                                            "%s: Configuration: resources.deviceClassMappings[%zu].sources[%zu].%s: "
                                            "Invalid value: true: %s sources require %s to be enabled (line %u)",
                                            source, i, j, counter ? "counter" : "capacity", counter ? "counter" : "capacity",
                                            counter ? "KueueDRAIntegrationPartitionableDevices"
                                                    : "KueueDRAIntegrationConsumableCapacity",
                                            s->line);
                }
        return 0;
}

int dp_kueue_config_parse(const char *text, size_t len, const char *source, dp_kueue_config **ret, dp_error *err) {
        assert_return(text && source && ret, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        _cleanup_(dp_kueue_config_freep) dp_kueue_config *cfg = calloc(1, sizeof(*cfg));
        if (!set || !cfg) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(set, text, len, source, err);
        if (r < 0) return r;
        if (dp_doc_count(set) != 1)
                return dp_error_set(err, -EINVAL, "%s: must hold one Kueue Configuration document", source);
        r = check_kind(source, dp_doc_root(set, 0), err);
        if (r < 0) return r;
        dp_error inner = DP_ERROR_INIT;
        dctx c;
        DCTX_INIT(&c, &inner);
        cfgx x = {&c, source, cfg};
        r = cfg_fields(&x, dp_doc_root(set, 0), top_field, NULL);
        if (r == -ENOMEM || inner.code == -ENOMEM) return dp_error_set(err, -ENOMEM, "out of memory");
        if (r < 0) return dp_error_set(err, inner.code ? inner.code : r, "%s: Configuration: %s", source, inner.msg);
        r = dra_gates_check(cfg, source, err);
        if (r < 0) return r;
        *ret = TAKE_PTR(cfg);
        return 0;
}

dp_kueue_config *dp_kueue_config_free(dp_kueue_config *c) {
        if (!c) return NULL;
        for (size_t i = 0; i < c->n_mappings; i++) {
                free(c->mappings[i].name);
                dp_strv_free_n(c->mappings[i].device_class_names, c->mappings[i].n_device_class_names);
                for (size_t j = 0; j < c->mappings[i].n_sources; j++)
                        dp_free_many(c->mappings[i].sources[j].name, c->mappings[i].sources[j].driver,
                                     c->mappings[i].sources[j].cel);
                free(c->mappings[i].sources);
        }
        free(c->mappings);
        for (size_t i = 0; i < c->n_transformations; i++) {
                dp_kueue_transformation *t = &c->transformations[i];
                dp_free_many(t->input, t->multiply_by);
                for (size_t k = 0; k < t->n_outputs; k++)
                        free(t->outputs[k].name);
                free(t->outputs);
        }
        free(c->transformations);
        dp_strv_free_n(c->exclude_prefixes, c->n_exclude_prefixes);
        dp_strv_free_n(c->afs_weight_names, c->n_afs_weights);
        free(c->afs_weights);
        dp_strv_free_n(c->warnings, c->n_warnings);
        free(c);
        return NULL;
}

size_t dp_kueue_config_sources(const dp_kueue_config *c, const char *device_class, dp_kueue_source_kind kind,
                               const dp_kueue_dra_source **v, const char **quota, size_t cap) {
        size_t n = 0;
        if (!c || (kind == DP_KUEUE_SOURCE_COUNTER ? c->counters_disabled : !c->capacity_enabled)) return 0;
        for (size_t i = 0; i < c->n_mappings; i++) {
                const dp_kueue_device_class_mapping *m = &c->mappings[i];
                if (!dp_strv_contains_n(m->device_class_names, m->n_device_class_names, device_class)) continue;
                for (size_t j = 0; j < m->n_sources; j++) {
                        if (m->sources[j].kind != kind) continue;
                        if (n < cap) {
                                v[n] = &m->sources[j];
                                quota[n] = m->name;
                        }
                        n++;
                }
        }
        return n;
}

const char *dp_kueue_config_map(const dp_kueue_config *c, const char *device_class) {
        for (size_t i = 0; c && i < c->n_mappings; i++)
                for (size_t k = 0; k < c->mappings[i].n_device_class_names; k++)
                        if (streq(c->mappings[i].device_class_names[k], device_class)) return c->mappings[i].name;
        return NULL;
}
