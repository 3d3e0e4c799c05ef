/* SPDX-License-Identifier: Apache-2.0
 *
 * config.c — Kueue's Configuration (kind Configuration, apiVersion
 * config.kueue.x-k8s.io/v1beta2 or v1beta1: the controller manager's file,
 * not a cluster object), the parts admission reads: resources
 * (deviceClassMappings, excludeResourcePrefixes), featureGates
 * (KueueDRAIntegration; AdmissionFairSharing and
 * FairSharingPrioritizeNonBorrowing, which change the order of admission),
 * fairSharing (enable, preemptionStrategies) and admissionFairSharing
 * (usageHalfLifeTime, usageSamplingInterval, resourceWeights). Kueue's other fields
 * (health, webhook, integrations...) are taken silently; a field Kueue does
 * not have is a warning naming it; a bad value is one error with the file,
 * the field path and the rule. The walk is the model's (path-keeping
 * getters of model/decode-internal.h), so messages read as the model's.
 */
#include <math.h>
#include <stdio.h>

#include "base/strv.h"
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

static int mapping_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        dp_kueue_device_class_mapping *m = userdata;
        if (streq(key, "name")) return get_str(x->c, v, &m->name) < 0 ? -EINVAL : 1;
        if (streq(key, "deviceClassNames"))
                return get_strv(x->c, v, &m->device_class_names, &m->n_device_class_names) < 0 ? -EINVAL : 1;
        if (streq(key, "sources")) {
                m->has_sources = true;
                return cfg_warn(x, v,
                                "counter- and capacity-based charging is not modelled: devplane charges the device "
                                "count") < 0
                               ? -ENOMEM
                               : 1;
        }
        return 0;
}

/* The rules Kueue's configuration validation checks, as one error each. */
static int mapping_check(cfgx *x, const dp_doc_node *n, size_t i) {
        const dp_kueue_device_class_mapping *m = &x->cfg->mappings[i];
        if (!m->name || !m->name[0]) return dfail(x->c, n, -EINVAL, "name: required");
        if (!m->n_device_class_names)
                return dfail(x->c, n, -EINVAL, "deviceClassNames: must name at least one DeviceClass");
        if (m->n_device_class_names > DP_KUEUE_MAX_DEVICE_CLASSES)
                return dfail(x->c, n, -E2BIG, "deviceClassNames: must have at most %d items, has %zu",
                             DP_KUEUE_MAX_DEVICE_CLASSES, m->n_device_class_names);
        for (size_t k = 0; k < m->n_device_class_names; k++) {
                const char *dc = m->device_class_names[k];
                if (!dc[0]) return dfail(x->c, n, -EINVAL, "deviceClassNames[%zu]: must not be empty", k);
                for (size_t j = 0; j <= i; j++)
                        for (size_t l = 0; l < x->cfg->mappings[j].n_device_class_names && (j < i || l < k); l++)
                                if (streq(x->cfg->mappings[j].device_class_names[l], dc))
                                        return dfail(x->c, n, -EINVAL,
                                                     "deviceClassNames[%zu]: DeviceClass %s is mapped already "
                                                     "(deviceClassMappings[%zu]): a DeviceClass maps to one resource",
                                                     k, dc, j);
        }
        return 0;
}

static int mappings(cfgx *x, const dp_doc_node *v) {
        int r = expect_seq(x->c, v);
        if (r <= 0) return r;
        if (v->n > DP_KUEUE_MAX_DEVICE_CLASS_MAPPINGS)
                return dfail(x->c, v, -E2BIG, "must have at most %d items, has %zu", DP_KUEUE_MAX_DEVICE_CLASS_MAPPINGS,
                             v->n);
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

static int resources_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        dp_kueue_config *cfg = x->cfg;
        if (streq(key, "deviceClassMappings")) return mappings(x, v) < 0 ? -EINVAL : 1;
        if (streq(key, "excludeResourcePrefixes"))
                return get_strv(x->c, v, &cfg->exclude_prefixes, &cfg->n_exclude_prefixes) < 0 ? -EINVAL : 1;
        if (streq(key, "transformations"))
                return cfg_warn(x, v,
                                "resource transformations are not modelled: quota counts the requests as "
                                "written") < 0
                               ? -ENOMEM
                               : 1;
        return 0;
}

/* ---- the top level ---- */

static int gates_field(cfgx *x, const char *key, const dp_doc_node *v, void *userdata) {
        (void)userdata;
        bool on = true;
        if (get_bool(x->c, v, &on) < 0) return -EINVAL;
        /* the gate's name since Kueue 0.18, and before */
        if (streq(key, "KueueDRAIntegration") || streq(key, "DynamicResourceAllocation")) x->cfg->dra_disabled = !on;
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

/* Kueue's fields admission does not depend on: taken without a word. */
static bool silent_field(const char *key) {
        static const char *const keys[] = {"namespace",
                                           "manageJobsWithoutQueueName",
                                           "managedJobsNamespaceSelector",
                                           "internalCertManagement",
                                           "waitForPodsReady",
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
        *ret = TAKE_PTR(cfg);
        return 0;
}

dp_kueue_config *dp_kueue_config_free(dp_kueue_config *c) {
        if (!c) return NULL;
        for (size_t i = 0; i < c->n_mappings; i++) {
                free(c->mappings[i].name);
                dp_strv_free_n(c->mappings[i].device_class_names, c->mappings[i].n_device_class_names);
        }
        free(c->mappings);
        dp_strv_free_n(c->exclude_prefixes, c->n_exclude_prefixes);
        dp_strv_free_n(c->afs_weight_names, c->n_afs_weights);
        free(c->afs_weights);
        dp_strv_free_n(c->warnings, c->n_warnings);
        free(c);
        return NULL;
}

const char *dp_kueue_config_map(const dp_kueue_config *c, const char *device_class) {
        for (size_t i = 0; c && i < c->n_mappings; i++)
                for (size_t k = 0; k < c->mappings[i].n_device_class_names; k++)
                        if (streq(c->mappings[i].device_class_names[k], device_class)) return c->mappings[i].name;
        return NULL;
}
