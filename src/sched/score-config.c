/* SPDX-License-Identifier: Apache-2.0
 * score-config.c — a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
 * read for its Score plugins (score.h): profiles, plugins.score and
 * plugins.multiPoint, and the pluginConfig args that change scores.
 *
 * Plugin sets merge as upstream's mergePluginSet does for the Score
 * plugins: a disabled name (or "*") takes the plugin's weight to 0, an
 * enabled one sets it (a weight of 0 or none is 1); the score set wins over
 * multiPoint. Validation follows upstream's (ValidateNodeResourcesFitArgs
 * and friends): resource weights 1..100, shape utilization 0..100 strictly
 * increasing, shape score 0..10, hardPodAffinityWeight 0..100. */
#include <stdio.h>

#include "doc/doc.h"
#include "base/strbuf.h"
#include "sched/fmt.h"
#include "sched/score.h"

#define API_VERSION "kubescheduler.config.k8s.io/v1"
#define PROFILES_MAX 64
#define WARNINGS_MAX 64

typedef struct cfg_ctx {
        const char *source;
        dp_score_config *cfg;
        dp_error *err;
        char path[512]; /* the field being read, for messages */
} cfg_ctx;

static int bad(cfg_ctx *x, const dp_doc_node *n, const char *rule) {
        return dp_error_set(x->err, -EINVAL, "%s:%u: %s: %s", x->source, n ? n->line : 0, x->path, rule);
}

static int warn(cfg_ctx *x, const dp_doc_node *n, const char *what) {
        dp_score_config *c = x->cfg;
        if (c->n_warnings >= WARNINGS_MAX) return 0;
        char **v = realloc(c->warnings, (c->n_warnings + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        c->warnings = v;
        if (!(v[c->n_warnings] = dp_asprintf("%s:%u: %s: %s", x->source, n ? n->line : 0, x->path, what)))
                return -ENOMEM;
        c->n_warnings++;
        return 0;
}

/* x->path gets ".key" (or "[i]" with key NULL) for the duration of a field. */
static size_t path_push(cfg_ctx *x, const char *key, size_t i) {
        size_t len = strlen(x->path);
        if (key)
                dp_fmt(x->path + len, sizeof(x->path) - len, "%s%s", len ? "." : "", key);
        else
                dp_fmt(x->path + len, sizeof(x->path) - len, "[%zu]", i);
        return len;
}

static void path_pop(cfg_ctx *x, size_t len) { x->path[len] = '\0'; }

static int want(cfg_ctx *x, const dp_doc_node *n, dp_doc_type type) {
        if (n && n->type == type) return 0;
        return bad(x, n, type == DP_DOC_MAP ? "must be a map" : type == DP_DOC_SEQ ? "must be a list" : "must be a value");
}

static int get_int(cfg_ctx *x, const dp_doc_node *n, int64_t lo, int64_t hi, int64_t *ret) {
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_int64(n, ret, &e) < 0) return bad(x, n, dp_error_msg(&e));
        if (*ret < lo || *ret > hi) {
                char rule[96];
                dp_fmt(rule, sizeof(rule), "must be in the range %lld-%lld", (long long)lo, (long long)hi);
                return bad(x, n, rule);
        }
        return 0;
}

/* map[key] as an integer in lo..hi (the path names the field); absent: 0
 * with *ret untouched, or an error when required. */
static int field_int(cfg_ctx *x, const dp_doc_node *map, const char *key, bool required, int64_t lo, int64_t hi,
                     int64_t *ret) {
        const dp_doc_node *v = dp_doc_get(map, key);
        size_t m = path_push(x, key, 0);
        int r = v ? get_int(x, v, lo, hi, ret) : required ? bad(x, map, "required") : 0;
        path_pop(x, m);
        return r;
}

static int get_string(cfg_ctx *x, const dp_doc_node *n, const char **ret) {
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_str(n, false, ret, &e) < 0) return bad(x, n, dp_error_msg(&e));
        return 0;
}

static int plugin_index(const char *name) {
        for (int i = 0; i < DP_PLUGIN_N; i++)
                if (streq(dp_score_plugin_names[i], name)) return i;
        return -1;
}

/* Filter-only and other in-tree plugins: enabling or disabling them changes
 * no score (devplane's filters always run). */
static bool known_plugin(const char *name) {
        static const char *const other[] = {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName",
                                            "NodePorts", "VolumeRestrictions", "EBSLimits", "GCEPDLimits",
                                            "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
                                            "DefaultPreemption", "DefaultBinder", "GangScheduling", NULL};
        for (size_t i = 0; other[i]; i++)
                if (streq(other[i], name)) return true;
        return plugin_index(name) >= 0;
}

/* One plugin set ({enabled: [{name, weight}], disabled: [{name}]}) into
 * weight[]; set[i] marks the plugins it named. */
static int plugin_list(cfg_ctx *x, const dp_doc_node *seq, bool enabled, int32_t *weight, bool *set) {
        int r = want(x, seq, DP_DOC_SEQ);
        for (size_t i = 0; r >= 0 && i < seq->n; i++) {
                size_t m = path_push(x, NULL, i);
                const dp_doc_node *it = seq->items[i], *nm = dp_doc_get(it, "name"), *w = dp_doc_get(it, "weight");
                const char *name = NULL;
                int64_t wv = 0;
                r = want(x, it, DP_DOC_MAP);
                for (size_t k = 0; r >= 0 && k < it->n; k++)
                        if (!streq(it->pairs[k].key, "name") && !streq(it->pairs[k].key, "weight"))
                                r = warn(x, it->pairs[k].key_node, "unknown field, ignored");
                if (r >= 0) r = nm ? get_string(x, nm, &name) : bad(x, it, "name: required");
                if (r >= 0 && w) r = get_int(x, w, 0, INT32_MAX, &wv);
                if (r >= 0 && enabled && streq(name, "*")) r = bad(x, nm, "\"*\" may only be disabled");
                if (r < 0) break;
                int pi = r >= 0 && name ? plugin_index(name) : -1;
                if (r >= 0 && name && !streq(name, "*") && !known_plugin(name))
                        r = warn(x, nm, "plugin not known to devplane: it scores nothing here");
                for (int k = 0; r >= 0 && k < DP_PLUGIN_N; k++)
                        if (k == pi || (!enabled && streq(name, "*"))) {
                                weight[k] = enabled ? (wv ? (int32_t)wv : 1) : 0;
                                set[k] = true;
                        }
                path_pop(x, m);
        }
        return r;
}

static int plugin_set(cfg_ctx *x, const dp_doc_node *set_node, int32_t *weight, bool *set) {
        int r = want(x, set_node, DP_DOC_MAP);
        /* disabled first, then enabled, as mergePluginSet applies them */
        for (int pass = 0; r >= 0 && pass < 2; pass++)
                for (size_t i = 0; r >= 0 && i < set_node->n; i++) {
                        const char *k = set_node->pairs[i].key;
                        size_t m = path_push(x, k, 0);
                        const dp_doc_node *v = set_node->pairs[i].value;
                        if (streq(k, pass ? "enabled" : "disabled"))
                                r = dp_doc_is_null(v) ? 0 : plugin_list(x, v, pass == 1, weight, set);
                        else if (pass == 0 && !streq(k, "enabled") && !streq(k, "disabled"))
                                r = warn(x, set_node->pairs[i].key_node, "unknown field, ignored");
                        path_pop(x, m);
                }
        return r;
}

/* plugins: score and multiPoint change weights; the other extension points
 * name filters and binders devplane runs as the default profile does. */
static int plugins(cfg_ctx *x, const dp_doc_node *n, dp_score_profile *p) {
        static const char *const points[] = {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
                                             "preScore", "reserve", "permit", "preBind", "bind", "postBind", NULL};
        int r = want(x, n, DP_DOC_MAP);
        int32_t w_multi[DP_PLUGIN_N], w_score[DP_PLUGIN_N];
        bool s_multi[DP_PLUGIN_N] = {0}, s_score[DP_PLUGIN_N] = {0};
        memcpy(w_multi, p->weight, sizeof(w_multi));
        memcpy(w_score, p->weight, sizeof(w_score));
        for (size_t i = 0; r >= 0 && i < n->n; i++) {
                const char *k = n->pairs[i].key;
                const dp_doc_node *v = n->pairs[i].value;
                size_t m = path_push(x, k, 0);
                bool point = false;
                for (size_t j = 0; points[j] && !point; j++)
                        point = streq(points[j], k);
                if (streq(k, "score"))
                        r = dp_doc_is_null(v) ? 0 : plugin_set(x, v, w_score, s_score);
                else if (streq(k, "multiPoint"))
                        r = dp_doc_is_null(v) ? 0 : plugin_set(x, v, w_multi, s_multi);
                else
                        r = warn(x, n->pairs[i].key_node,
                                 point ? "not modelled: devplane runs the default profile's plugins at this point"
                                       : "unknown field, ignored");
                path_pop(x, m);
        }
        for (int k = 0; r >= 0 && k < DP_PLUGIN_N; k++)
                p->weight[k] = s_score[k] ? w_score[k] : s_multi[k] ? w_multi[k] : p->weight[k];
        return r;
}

static int resources(cfg_ctx *x, const dp_doc_node *seq, dp_score_resource *v, size_t *ret_n) {
        int r = want(x, seq, DP_DOC_SEQ);
        if (r >= 0 && seq->n == 0) return 0; /* upstream's defaulting: the defaults stay */
        if (r >= 0 && seq->n > DP_SCORE_RESOURCES_MAX) return bad(x, seq, "too many resources (at most 16)");
        size_t n = 0;
        for (size_t i = 0; r >= 0 && i < seq->n; i++) {
                size_t m = path_push(x, NULL, i);
                const dp_doc_node *it = seq->items[i], *nm = dp_doc_get(it, "name");
                const char *name = NULL;
                int64_t wv = 1;
                r = want(x, it, DP_DOC_MAP);
                if (r >= 0) r = nm ? get_string(x, nm, &name) : bad(x, it, "name: required");
                if (r >= 0) r = field_int(x, it, "weight", false, 1, 100, &wv);
                if (r >= 0 && (!name[0] || strlen(name) >= sizeof(v[0].name))) r = bad(x, nm, "not a resource name");
                if (r >= 0) {
                        dp_fmt(v[n].name, sizeof(v[n].name), "%s", name);
                        v[n++].weight = wv;
                }
                path_pop(x, m);
        }
        if (r >= 0) *ret_n = n;
        return r;
}

static int shape(cfg_ctx *x, const dp_doc_node *rc, dp_score_profile *p) {
        if (!rc) return bad(x, NULL, "shape: required for RequestedToCapacityRatio");
        int r = want(x, rc, DP_DOC_MAP);
        const dp_doc_node *seq = r >= 0 ? dp_doc_get(rc, "shape") : NULL;
        size_t m = path_push(x, "shape", 0);
        if (r >= 0) r = want(x, seq, DP_DOC_SEQ);
        if (r >= 0 && (seq->n == 0 || seq->n > DP_SCORE_SHAPE_MAX)) r = bad(x, seq, "must have 1 to 16 points");
        for (size_t i = 0; r >= 0 && i < seq->n; i++) {
                size_t mi = path_push(x, NULL, i);
                const dp_doc_node *it = seq->items[i];
                int64_t u = 0, s = 0;
                r = want(x, it, DP_DOC_MAP);
                if (r >= 0) r = field_int(x, it, "utilization", true, 0, 100, &u);
                if (r >= 0) r = field_int(x, it, "score", true, 0, 10, &s);
                if (r >= 0 && i > 0 && u <= p->shape[i - 1].utilization)
                        r = bad(x, it, "utilization values must be sorted in increasing order");
                if (r >= 0) p->shape[p->n_shape++] = (dp_score_point){u, s * (DP_SCORE_MAX_NODE / 10)};
                path_pop(x, mi);
        }
        path_pop(x, m);
        return r;
}

/* NodeResourcesFit's scoringStrategy. */
static int fit_args(cfg_ctx *x, const dp_doc_node *args, dp_score_profile *p) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < args->n; i++) {
                const char *k = args->pairs[i].key;
                const dp_doc_node *v = args->pairs[i].value;
                size_t m = path_push(x, k, 0);
                if (streq(k, "scoringStrategy")) {
                        const dp_doc_node *t = dp_doc_get(v, "type"), *res = dp_doc_get(v, "resources");
                        const char *s = "LeastAllocated";
                        r = want(x, v, DP_DOC_MAP);
                        if (r >= 0 && t) r = get_string(x, t, &s);
                        if (r >= 0) {
                                p->strategy = streq(s, "LeastAllocated") ? DP_FIT_LEAST
                                              : streq(s, "MostAllocated") ? DP_FIT_MOST
                                              : streq(s, "RequestedToCapacityRatio") ? DP_FIT_RATIO
                                                                                      : (dp_fit_strategy)-1;
                                if ((int)p->strategy < 0)
                                        r = bad(x, t, "type: must be LeastAllocated, MostAllocated or "
                                                      "RequestedToCapacityRatio");
                        }
                        size_t mr = path_push(x, "resources", 0);
                        if (r >= 0 && res) r = resources(x, res, p->fit, &p->n_fit);
                        path_pop(x, mr);
                        mr = path_push(x, "requestedToCapacityRatio", 0);
                        if (r >= 0 && p->strategy == DP_FIT_RATIO)
                                r = shape(x, dp_doc_get(v, "requestedToCapacityRatio"), p);
                        path_pop(x, mr);
                } else
                        r = warn(x, args->pairs[i].key_node, "not modelled, ignored");
                path_pop(x, m);
        }
        return r;
}

static int other_args(cfg_ctx *x, const char *plugin, const dp_doc_node *args, dp_score_profile *p) {
        int r = 0;
        for (size_t i = 0; r >= 0 && i < args->n; i++) {
                const char *k = args->pairs[i].key;
                const dp_doc_node *v = args->pairs[i].value;
                size_t m = path_push(x, k, 0);
                int64_t w = 0;
                bool b = false;
                dp_error e = DP_ERROR_INIT;
                if (streq(plugin, "NodeResourcesBalancedAllocation") && streq(k, "resources"))
                        r = resources(x, v, p->balanced, &p->n_balanced);
                else if (streq(plugin, "InterPodAffinity") && streq(k, "hardPodAffinityWeight")) {
                        r = get_int(x, v, 0, 100, &w);
                        p->hard_pod_affinity_weight = (int32_t)w;
                } else if (streq(plugin, "InterPodAffinity") && streq(k, "ignorePreferredTermsOfExistingPods")) {
                        if (dp_doc_get_bool(v, &b, &e) < 0) r = bad(x, v, dp_error_msg(&e));
                        p->ignore_preferred_terms_of_existing = b;
                } else if (streq(plugin, "PodTopologySpread") && streq(k, "defaultingType")) {
                        const char *s = NULL;
                        r = get_string(x, v, &s);
                        if (r >= 0 && !streq(s, "System") && !streq(s, "List"))
                                r = bad(x, v, "must be System or List");
                        if (r >= 0) p->spread_system_defaults = streq(s, "System");
                } else
                        r = warn(x, args->pairs[i].key_node, "not modelled, ignored");
                path_pop(x, m);
        }
        return r;
}

static int plugin_config(cfg_ctx *x, const dp_doc_node *seq, dp_score_profile *p) {
        int r = want(x, seq, DP_DOC_SEQ);
        for (size_t i = 0; r >= 0 && i < seq->n; i++) {
                size_t m = path_push(x, NULL, i);
                const dp_doc_node *it = seq->items[i], *nm = dp_doc_get(it, "name"), *args = dp_doc_get(it, "args");
                const char *name = NULL;
                r = want(x, it, DP_DOC_MAP);
                if (r >= 0) r = nm ? get_string(x, nm, &name) : bad(x, it, "name: required");
                size_t ma = path_push(x, "args", 0);
                if (r >= 0 && args && !dp_doc_is_null(args)) {
                        r = want(x, args, DP_DOC_MAP);
                        if (r >= 0 && streq(name, "NodeResourcesFit"))
                                r = fit_args(x, args, p);
                        else if (r >= 0)
                                r = other_args(x, name, args, p);
                }
                path_pop(x, ma);
                path_pop(x, m);
        }
        return r;
}

/* percentageOfNodesToScore: 0 (kube-scheduler's adaptive share) to 100;
 * null leaves it unset. */
static int get_percent(cfg_ctx *x, const dp_doc_node *v, bool *set, int32_t *ret) {
        if (dp_doc_is_null(v)) return 0;
        int64_t pct = 0;
        int r = get_int(x, v, 0, 100, &pct);
        if (r < 0) return r;
        *set = true;
        *ret = (int32_t)pct;
        return 0;
}

static int profile(cfg_ctx *x, const dp_doc_node *n, dp_score_profile *p) {
        dp_score_profile_default(p);
        int r = want(x, n, DP_DOC_MAP);
        for (size_t i = 0; r >= 0 && i < n->n; i++) {
                const char *k = n->pairs[i].key;
                const dp_doc_node *v = n->pairs[i].value;
                size_t m = path_push(x, k, 0);
                const char *s = NULL;
                if (streq(k, "schedulerName")) {
                        r = get_string(x, v, &s);
                        if (r >= 0 && (!s[0] || strlen(s) >= sizeof(p->scheduler_name)))
                                r = bad(x, v, "must be a name of 1 to 253 characters");
                        if (r >= 0) dp_fmt(p->scheduler_name, sizeof(p->scheduler_name), "%s", s);
                } else if (streq(k, "plugins"))
                        r = dp_doc_is_null(v) ? 0 : plugins(x, v, p);
                else if (streq(k, "pluginConfig"))
                        r = dp_doc_is_null(v) ? 0 : plugin_config(x, v, p);
                else if (streq(k, "percentageOfNodesToScore"))
                        r = get_percent(x, v, &p->sample_nodes, &p->sample_percent);
                else
                        r = warn(x, n->pairs[i].key_node, "unknown field, ignored");
                path_pop(x, m);
        }
        return r;
}

static int top(cfg_ctx *x, const dp_doc_node *root) {
        int r = want(x, root, DP_DOC_MAP);
        const dp_doc_node *av = r >= 0 ? dp_doc_get(root, "apiVersion") : NULL, *kind = dp_doc_get(root, "kind");
        const char *s = NULL;
        if (r >= 0) r = av ? get_string(x, av, &s) : bad(x, root, "apiVersion: required");
        if (r >= 0 && !streq(s, API_VERSION)) r = bad(x, av, "apiVersion: must be " API_VERSION);
        if (r >= 0) r = kind ? get_string(x, kind, &s) : bad(x, root, "kind: required");
        if (r >= 0 && !streq(s, "KubeSchedulerConfiguration")) r = bad(x, kind, "kind: must be KubeSchedulerConfiguration");
        for (size_t i = 0; r >= 0 && i < root->n; i++) {
                const char *k = root->pairs[i].key;
                const dp_doc_node *v = root->pairs[i].value;
                size_t m = path_push(x, k, 0);
                if (streq(k, "profiles")) {
                        r = want(x, v, DP_DOC_SEQ);
                        if (r >= 0 && v->n > PROFILES_MAX) r = bad(x, v, "too many profiles (at most 64)");
                        if (r >= 0 && !(x->cfg->profiles = calloc(v->n + 1, sizeof(dp_score_profile)))) r = -ENOMEM;
                        for (size_t j = 0; r >= 0 && j < v->n; j++) {
                                size_t mj = path_push(x, NULL, j);
                                r = profile(x, v->items[j], &x->cfg->profiles[x->cfg->n_profiles++]);
                                for (size_t q = 0; r >= 0 && q + 1 < x->cfg->n_profiles; q++)
                                        if (streq(x->cfg->profiles[q].scheduler_name,
                                                  x->cfg->profiles[x->cfg->n_profiles - 1].scheduler_name))
                                                r = bad(x, v->items[j], "schedulerName: duplicate");
                                path_pop(x, mj);
                        }
                } else if (streq(k, "percentageOfNodesToScore"))
                        r = get_percent(x, v, &x->cfg->sample_nodes, &x->cfg->sample_percent);
                else if (!streq(k, "apiVersion") && !streq(k, "kind"))
                        r = warn(x, root->pairs[i].key_node, "not modelled, ignored");
                path_pop(x, m);
        }
        return r;
}

int dp_score_config_parse(const char *text, size_t len, const char *source, dp_score_config **ret, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        _cleanup_(dp_score_config_freep) dp_score_config *cfg = calloc(1, sizeof(*cfg));
        if (!set || !cfg) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(set, text, len, source, err);
        if (r < 0) return r;
        if (dp_doc_count(set) != 1)
                return dp_error_set(err, -EINVAL, "%s: must hold one KubeSchedulerConfiguration document", source);
        cfg_ctx x = {.source = source, .cfg = cfg, .err = err};
        r = top(&x, dp_doc_root(set, 0));
        if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
        if (r < 0) return r;
        if (cfg->n_profiles == 0) { /* upstream: the default profile */
                if (!(cfg->profiles = calloc(1, sizeof(*cfg->profiles)))) return dp_error_set(err, -ENOMEM, "out of memory");
                dp_score_profile_default(&cfg->profiles[cfg->n_profiles++]);
        }
        for (size_t i = 0; i < cfg->n_profiles; i++)
                if (!cfg->profiles[i].sample_nodes) { /* the configuration's, where the profile has none */
                        cfg->profiles[i].sample_nodes = cfg->sample_nodes;
                        cfg->profiles[i].sample_percent = cfg->sample_percent;
                }
        *ret = TAKE_PTR(cfg);
        return 0;
}

dp_score_config *dp_score_config_free(dp_score_config *c) {
        if (!c) return NULL;
        free(c->profiles);
        for (size_t i = 0; i < c->n_warnings; i++)
                free(c->warnings[i]);
        free(c->warnings);
        free(c);
        return NULL;
}

const dp_score_profile *dp_score_config_profile(const dp_score_config *c, const char *name) {
        for (size_t i = 0; c && i < c->n_profiles; i++)
                if (streq(c->profiles[i].scheduler_name, name)) return &c->profiles[i];
        return NULL;
}
