/* SPDX-License-Identifier: Apache-2.0
 * fleet.c — reading simulate's input: Fleet and Timeline documents of
 * devplane's own, and Kubernetes objects through model/ (sim.h). */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "sched/devnode.h"
#include "sched/fmt.h"
#include "queue/kai.h"
#include "queue/queue.h"
#include "sched/sim.h"

#define API_VERSION "devplane.io/v1alpha1"

static void group_done(dp_sim_group *g) {
        free(g->name);
        free(g->profile);
        free(g->profile_path);
        free(g->profile_text);
        dp_kvs_free(g->labels, g->n_labels);
        dp_taints_free(g->taints, g->n_taints);
        free(g->agent_yaml);
}

static void event_done(dp_sim_event *e) {
        free(e->pod);
        free(e->node);
        free(e->device);
}

dp_sim_input *dp_sim_input_free(dp_sim_input *in) {
        if (!in) return NULL;
        free(in->fleet_name);
        free(in->source);
        free(in->cluster_name);
        for (size_t i = 0; i < in->n_groups; i++)
                group_done(&in->groups[i]);
        free(in->groups);
        for (size_t i = 0; i < in->n_events; i++)
                event_done(&in->events[i]);
        free(in->events);
        dp_object_list_free(in->objs);
        dp_doc_set_free(in->docs);
        free(in->k8s_docs);
        free(in->k8s_doc_index);
        dp_sim_whatif_done(&in->whatif);
        free(in);
        return NULL;
}

/* "<path>: <rule> (line N)" */
static int bad(dp_error *err, const dp_doc_node *n, const char *path, const char *rule) {
        if (n) return dp_error_set(err, -EINVAL, "%s: %s (line %u)", path, rule, n->line);
        return dp_error_set(err, -EINVAL, "%s: %s", path, rule);
}

static int check_keys(const dp_doc_node *m, const char *path, const char *const *allowed, dp_error *err) {
        if (!m || m->type != DP_DOC_MAP) return bad(err, m, path, "must be a map");
        for (size_t i = 0; i < m->n; i++) {
                bool ok = false;
                for (size_t k = 0; allowed[k] && !ok; k++)
                        ok = streq(allowed[k], m->pairs[i].key);
                if (!ok) {
                        char rule[512];
                        dp_fmt(rule, sizeof(rule), "unknown field \"%s\"", m->pairs[i].key);
                        return bad(err, m->pairs[i].key_node, path, rule);
                }
        }
        return 0;
}

/* A field that names one of a few values. */
typedef struct choice {
        const char *name;
        int value;
} choice;

/* The value of the choice named s: false when none is. */
static bool pick(const char *s, const choice *c, size_t n, int *ret) {
        for (size_t i = 0; i < n; i++)
                if (streq(s, c[i].name)) {
                        *ret = c[i].value;
                        return true;
                }
        return false;
}

static int get_str(const dp_doc_node *n, const char *path, char **ret, dp_error *err) {
        const char *s = NULL;
        if (dp_doc_get_str(n, false, &s, err) < 0) return dp_error_prefix(err, "%s (line %u)", path, n ? n->line : 0);
        char *d = dp_strdup(s);
        if (!d) return -ENOMEM;
        *ret = d;
        return 0;
}

static int dup_kv(dp_kv *kv, const char *k, const char *v) {
        kv->key = dp_strdup(k);
        kv->value = dp_strdup(v);
        return kv->key && kv->value ? 0 : -ENOMEM;
}

static int parse_taint(const dp_doc_node *t, const char *path, dp_taint *ret, dp_error *err) {
        static const char *const keys[] = {"key", "value", "effect", NULL};
        int r = check_keys(t, path, keys, err);
        if (r < 0) return r;
        char p[256];
        dp_fmt(p, sizeof(p), "%s.key", path);
        if ((r = get_str(dp_doc_get(t, "key"), p, &ret->key, err)) < 0) return r;
        if (dp_validate_qualified_name(ret->key, err) < 0) return dp_error_prefix(err, "%s", p);
        if (dp_doc_get(t, "value")) {
                dp_fmt(p, sizeof(p), "%s.value", path);
                if ((r = get_str(dp_doc_get(t, "value"), p, &ret->value, err)) < 0) return r;
        }
        dp_fmt(p, sizeof(p), "%s.effect", path);
        if ((r = get_str(dp_doc_get(t, "effect"), p, &ret->effect, err)) < 0) return r;
        if (!streq(ret->effect, "NoSchedule") && !streq(ret->effect, "PreferNoSchedule") &&
            !streq(ret->effect, "NoExecute"))
                return bad(err, dp_doc_get(t, "effect"), p, "must be NoSchedule, PreferNoSchedule or NoExecute");
        return 0;
}

/* A nodeGroup's profile that is no built-in name but a path (as
 * dp_profile_resolve tells them apart): read it once, relative to `dir` (the
 * Fleet file's directory; NULL: the Fleet came from a buffer, no files), and
 * check it loads. */
static int load_profile_file(const dp_doc_node *n, const char *path, const char *dir, dp_sim_group *ret,
                             dp_error *err) {
        const char *v = ret->profile;
        if (!dp_devnode_profile_is_file(v)) return 0;
        if (!dir) return bad(err, n, path, "a profile file can be named only in a Fleet read from a file");
        ret->profile_path = v[0] == '/' || streq(dir, ".") ? dp_strdup(v) : dp_asprintf("%s/%s", dir, v);
        if (!ret->profile_path) return -ENOMEM;
        int r = dp_read_file(ret->profile_path, DP_DOC_MAX_INPUT, &ret->profile_text, &ret->profile_len, err);
        if (r < 0) return dp_fmt_prefix(err, r, "%s (line %u)", path, n->line);
        /* as the simulator will load it for the group's first node */
        _cleanup_free_ char *node = dp_asprintf("%s-0", ret->name);
        if (!node) return -ENOMEM;
        r = dp_devnode_profile_check(ret->profile_text, ret->profile_len, ret->profile_path, node, err);
        if (r < 0) return dp_fmt_prefix(err, r, "%s (line %u)", path, n->line);
        return 0;
}

static int parse_group(const dp_doc_node *g, const char *path, const char *dir, dp_sim_group *ret, dp_error *err) {
        static const char *const keys[] = {"name",   "profile", "count", "model", "labels",
                                           "taints", "agent",   "dra",   NULL};
        int r = check_keys(g, path, keys, err);
        if (r < 0) return r;
        char p[256];
        dp_fmt(p, sizeof(p), "%s.name", path);
        if ((r = get_str(dp_doc_get(g, "name"), p, &ret->name, err)) < 0) return r;
        if (dp_validate_dns_label(ret->name, err) < 0) return dp_error_prefix(err, "%s", p);
        dp_fmt(p, sizeof(p), "%s.profile", path);
        if ((r = get_str(dp_doc_get(g, "profile"), p, &ret->profile, err)) < 0) return r;
        if ((r = load_profile_file(dp_doc_get(g, "profile"), p, dir, ret, err)) < 0) return r;
        ret->count = 1;
        if (dp_doc_get(g, "count")) {
                dp_fmt(p, sizeof(p), "%s.count", path);
                if (dp_doc_get_int64(dp_doc_get(g, "count"), &ret->count, err) < 0)
                        return dp_error_prefix(err, "%s (line %u)", p, dp_doc_get(g, "count")->line);
                if (ret->count < 0 || ret->count > DP_SIM_NODES_MAX)
                        return bad(err, dp_doc_get(g, "count"), p, "must be from 0 to 5000");
        }
        ret->model = DP_SIM_MODEL_BOTH;
        if (dp_doc_get(g, "model")) {
                _cleanup_free_ char *m = NULL;
                dp_fmt(p, sizeof(p), "%s.model", path);
                static const choice models[] = {
                        {"v1", DP_SIM_MODEL_V1}, {"v2", DP_SIM_MODEL_V2}, {"both", DP_SIM_MODEL_BOTH}};
                int v;
                if ((r = get_str(dp_doc_get(g, "model"), p, &m, err)) < 0) return r;
                if (!pick(m, models, ELEMENTSOF(models), &v))
                        return bad(err, dp_doc_get(g, "model"), p, "must be v1, v2 or both");
                ret->model = v;
        }
        const dp_doc_node *l = dp_doc_get(g, "labels");
        if (l) {
                dp_fmt(p, sizeof(p), "%s.labels", path);
                if (l->type != DP_DOC_MAP) return bad(err, l, p, "must be a map");
                if (!(ret->labels = calloc(l->n + 1, sizeof(dp_kv)))) return -ENOMEM;
                for (size_t i = 0; i < l->n; i++) {
                        const char *v = NULL;
                        dp_fmt(p, sizeof(p), "%s.labels[%s]", path, l->pairs[i].key);
                        if (dp_doc_get_str(l->pairs[i].value, true, &v, err) < 0) return dp_error_prefix(err, "%s", p);
                        if (dp_validate_qualified_name(l->pairs[i].key, err) < 0 || dp_validate_label_value(v, err) < 0)
                                return dp_error_prefix(err, "%s", p);
                        if (dup_kv(&ret->labels[ret->n_labels++], l->pairs[i].key, v) < 0) return -ENOMEM;
                }
        }
        const dp_doc_node *t = dp_doc_get(g, "taints");
        if (t) {
                dp_fmt(p, sizeof(p), "%s.taints", path);
                if (t->type != DP_DOC_SEQ) return bad(err, t, p, "must be a list");
                if (!(ret->taints = calloc(t->n + 1, sizeof(dp_taint)))) return -ENOMEM;
                for (size_t i = 0; i < t->n; i++) {
                        dp_fmt(p, sizeof(p), "%s.taints[%zu]", path, i);
                        ret->n_taints++;
                        if ((r = parse_taint(t->items[i], p, &ret->taints[i], err)) < 0) return r;
                }
        }
        ret->dra_partitions = -1;
        const dp_doc_node *dra = dp_doc_get(g, "dra");
        if (dra) {
                static const char *const dkeys[] = {"partitions", "allowMultipleAllocations", "compatGroups", NULL};
                dp_fmt(p, sizeof(p), "%s.dra", path);
                if ((r = check_keys(dra, p, dkeys, err)) < 0) return r;
                const dp_doc_node *x = dp_doc_get(dra, "partitions");
                if (x) {
                        int64_t v = 0;
                        dp_fmt(p, sizeof(p), "%s.dra.partitions", path);
                        if (dp_doc_get_int64(x, &v, err) < 0) return dp_error_prefix(err, "%s (line %u)", p, x->line);
                        if (v < 0 || v > 16) return bad(err, x, p, "must be from 0 to 16");
                        ret->dra_partitions = (int)v;
                }
                x = dp_doc_get(dra, "allowMultipleAllocations");
                if (x) {
                        dp_fmt(p, sizeof(p), "%s.dra.allowMultipleAllocations", path);
                        if (dp_doc_get_bool(x, &ret->dra_allow_multiple, err) < 0)
                                return dp_error_prefix(err, "%s (line %u)", p, x->line);
                }
                x = dp_doc_get(dra, "compatGroups");
                if (x) {
                        dp_fmt(p, sizeof(p), "%s.dra.compatGroups", path);
                        if (dp_doc_get_bool(x, &ret->dra_compat_groups, err) < 0)
                                return dp_error_prefix(err, "%s (line %u)", p, x->line);
                }
        }
        const dp_doc_node *a = dp_doc_get(g, "agent");
        if (a) {
                dp_fmt(p, sizeof(p), "%s.agent", path);
                if (a->type != DP_DOC_MAP) return bad(err, a, p, "must be a map (a device plugin config, version: v1)");
                dp_strbuf sb = DP_STRBUF_INIT;
                dp_doc_emit(&sb, a, DP_DOC_YAML);
                if (dp_strbuf_failed(&sb)) return -ENOMEM;
                ret->agent_yaml = dp_strbuf_steal(&sb);
                if (!ret->agent_yaml) return -ENOMEM;
        }
        return 0;
}

static int parse_fleet(const dp_doc_node *root, dp_sim_input *in, const char *dir, dp_error *err) {
        static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
        static const char *const spec_keys[] = {"scoring", "schedulers", "nodeGroups", NULL};
        int r = check_keys(root, "", top, err);
        if (r < 0) return r;
        const dp_doc_node *meta = dp_doc_get(root, "metadata");
        const char *name = NULL;
        if (meta && dp_doc_get_str(dp_doc_get(meta, "name"), false, &name, NULL) >= 0 && name)
                in->fleet_name = dp_strdup(name);
        else
                in->fleet_name = dp_strdup("fleet");
        if (!in->fleet_name) return -ENOMEM;
        const dp_doc_node *spec = dp_doc_get(root, "spec");
        if ((r = check_keys(spec, "spec", spec_keys, err)) < 0) return r;
        const dp_doc_node *sc = dp_doc_get(spec, "scoring");
        if (sc) {
                static const choice policies[] = {{"default", DP_SCORE_DEFAULT},
                                                  {"binpack", DP_SCORE_BINPACK},
                                                  {"spread", DP_SCORE_SPREAD},
                                                  {"none", DP_SCORE_NONE}};
                const char *s = NULL;
                int v;
                if (dp_doc_get_str(sc, false, &s, err) < 0) return dp_error_prefix(err, "spec.scoring");
                if (!pick(s, policies, ELEMENTSOF(policies), &v))
                        return bad(err, sc, "spec.scoring", "must be default, binpack, spread or none");
                in->policy = v;
        }
        in->schedulers = 1;
        const dp_doc_node *ns = dp_doc_get(spec, "schedulers");
        if (ns) {
                int64_t v = 0;
                if (dp_doc_get_int64(ns, &v, err) < 0)
                        return dp_error_prefix(err, "spec.schedulers (line %u)", ns->line);
                if (v != 1 && v != 2) return bad(err, ns, "spec.schedulers", "must be 1 or 2");
                in->schedulers = (int)v;
        }
        const dp_doc_node *gs = dp_doc_get(spec, "nodeGroups");
        if (!gs || gs->type != DP_DOC_SEQ || gs->n == 0)
                return bad(err, gs, "spec.nodeGroups", "must be a non-empty list");
        if (gs->n > DP_SIM_GROUPS_MAX) return dp_error_set(err, -E2BIG, "spec.nodeGroups: at most 256 groups");
        if (!(in->groups = calloc(gs->n, sizeof(*in->groups)))) return -ENOMEM;
        int64_t total = 0;
        for (size_t i = 0; i < gs->n; i++) {
                char p[64];
                dp_fmt(p, sizeof(p), "spec.nodeGroups[%zu]", i);
                in->n_groups++;
                if ((r = parse_group(gs->items[i], p, dir, &in->groups[i], err)) < 0) return r;
                for (size_t k = 0; k < i; k++)
                        if (streq(in->groups[k].name, in->groups[i].name))
                                return bad(err, gs->items[i], p, "duplicate node group name");
                total += in->groups[i].count;
                if (total > DP_SIM_NODES_MAX)
                        return dp_error_set(err, -E2BIG, "%s.count: at most %d nodes in a fleet", p, DP_SIM_NODES_MAX);
        }
        return 0;
}

static int parse_time(const dp_doc_node *n, const char *path, int64_t *ret, dp_error *err) {
        int64_t v = 0;
        if (dp_doc_kind(n) == DP_DOC_INT) {
                if (dp_doc_get_int64(n, &v, err) < 0) return dp_error_prefix(err, "%s", path);
        } else {
                const char *s = NULL;
                if (dp_doc_get_str(n, false, &s, err) < 0) return dp_error_prefix(err, "%s", path);
                char *end = NULL;
                errno = 0;
                long long x = strtoll(s, &end, 10);
                static const choice units[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}};
                int mul;
                if (end == s || errno || !pick(end, units, ELEMENTSOF(units), &mul))
                        return bad(err, n, path, "must be seconds, or a number with s, m or h");
                /* "2562047788015216h" would wrap to a small time (signed overflow) */
                if (__builtin_mul_overflow(x, mul, &v)) return bad(err, n, path, "must be from 0 to 100 days");
        }
        if (v < 0 || v > 100LL * 24 * 3600) return bad(err, n, path, "must be from 0 to 100 days");
        *ret = v * 1000;
        return 0;
}

static int add_event(dp_sim_input *in, size_t *cap, dp_sim_event ev) {
        if (in->n_events >= DP_SIM_EVENTS_MAX) return -E2BIG;
        if (DP_GROW(in->events, *cap, in->n_events + 1) < 0) return -ENOMEM;
        ev.order = in->n_events;
        in->events[in->n_events++] = ev;
        return 0;
}

static int parse_timeline(const dp_doc_node *root, dp_sim_input *in, dp_error *err) {
        static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
        static const char *const spec_keys[] = {"events", NULL};
        static const char *const ev_keys[] = {"at", "create", "delete", "fail", "recover", NULL};
        static const char *const dev_keys[] = {"node", "device", NULL};
        static const char *const fail_keys[] = {"node", "device", "effect", NULL};
        int r = check_keys(root, "", top, err);
        if (r < 0) return r;
        const dp_doc_node *spec = dp_doc_get(root, "spec");
        if ((r = check_keys(spec, "spec", spec_keys, err)) < 0) return r;
        const dp_doc_node *evs = dp_doc_get(spec, "events");
        if (!evs) return 0;
        if (evs->type != DP_DOC_SEQ) return bad(err, evs, "spec.events", "must be a list");
        size_t cap = in->n_events;
        for (size_t i = 0; i < evs->n; i++) {
                const dp_doc_node *e = evs->items[i];
                char p[128], q[160];
                dp_fmt(p, sizeof(p), "spec.events[%zu]", i);
                if ((r = check_keys(e, p, ev_keys, err)) < 0) return r;
                int64_t at = 0;
                dp_fmt(q, sizeof(q), "%s.at", p);
                if (!dp_doc_get(e, "at")) return bad(err, e, q, "required");
                if ((r = parse_time(dp_doc_get(e, "at"), q, &at, err)) < 0) return r;
                size_t kinds = 0;
                for (size_t k = 1; ev_keys[k]; k++)
                        kinds += dp_doc_get(e, ev_keys[k]) != NULL;
                if (kinds != 1) return bad(err, e, p, "must have exactly one of create, delete, fail, recover");
                for (int k = 0; k < 2; k++) {
                        const char *key = k ? "delete" : "create";
                        const dp_doc_node *l = dp_doc_get(e, key);
                        if (!l) continue;
                        dp_fmt(q, sizeof(q), "%s.%s", p, key);
                        if (l->type != DP_DOC_SEQ) return bad(err, l, q, "must be a list of pod names");
                        for (size_t j = 0; j < l->n; j++) {
                                dp_sim_event ev = {.at_ms = at, .kind = k ? DP_SIM_EV_DELETE : DP_SIM_EV_CREATE};
                                char qq[192];
                                dp_fmt(qq, sizeof(qq), "%s[%zu]", q, j);
                                if ((r = get_str(l->items[j], qq, &ev.pod, err)) < 0) return r;
                                if ((r = add_event(in, &cap, ev)) < 0) {
                                        free(ev.pod);
                                        return r == -E2BIG ? dp_error_set(err, r, "%s: at most %d events", qq,
                                                                          DP_SIM_EVENTS_MAX)
                                                           : r;
                                }
                        }
                }
                for (int k = 0; k < 2; k++) {
                        const char *key = k ? "recover" : "fail";
                        const dp_doc_node *d = dp_doc_get(e, key);
                        if (!d) continue;
                        dp_fmt(q, sizeof(q), "%s.%s", p, key);
                        if ((r = check_keys(d, q, k ? dev_keys : fail_keys, err)) < 0) return r;
                        dp_sim_event ev = {.at_ms = at, .kind = k ? DP_SIM_EV_RECOVER : DP_SIM_EV_FAIL};
                        char qq[192];
                        const dp_doc_node *ef = k ? NULL : dp_doc_get(d, "effect");
                        if (ef) {
                                const char *es = NULL;
                                dp_fmt(qq, sizeof(qq), "%s.effect", q);
                                if (dp_doc_get_str(ef, false, &es, err) < 0) return dp_error_prefix(err, "%s", qq);
                                if (streq(es, "NoExecute"))
                                        ev.no_execute = true;
                                else if (!streq(es, "NoSchedule"))
                                        return bad(err, ef, qq, "must be NoSchedule or NoExecute");
                        }
                        dp_fmt(qq, sizeof(qq), "%s.node", q);
                        r = get_str(dp_doc_get(d, "node"), qq, &ev.node, err);
                        dp_fmt(qq, sizeof(qq), "%s.device", q);
                        if (r >= 0) r = get_str(dp_doc_get(d, "device"), qq, &ev.device, err);
                        if (r >= 0) r = add_event(in, &cap, ev);
                        if (r < 0) {
                                free(ev.node);
                                free(ev.device);
                                return r == -E2BIG ? dp_error_set(err, r, "%s: at most %d events", q, DP_SIM_EVENTS_MAX)
                                                   : r;
                        }
                }
        }
        return 0;
}

/* files: the documents' sources are file paths (dp_sim_load), so a Fleet may
 * name profile files relative to its own directory. */
static int load_doc_set(dp_sim_input *in, dp_doc_set *set, bool files, bool *seen_fleet, bool *seen_timeline,
                        dp_error *err) {
        size_t file_start = 0; /* the first document of the current file */
        for (size_t i = 0; i < dp_doc_count(set); i++) {
                const dp_doc_node *root = dp_doc_root(set, i);
                const char *src = dp_doc_source(set, i);
                if (i && dp_doc_source(set, i - 1) != src && !streq_ptr(dp_doc_source(set, i - 1), src))
                        file_start = i;
                const char *api = NULL, *kind = NULL;
                if (root && root->type == DP_DOC_MAP) {
                        dp_doc_get_str(dp_doc_get(root, "apiVersion"), false, &api, NULL);
                        dp_doc_get_str(dp_doc_get(root, "kind"), false, &kind, NULL);
                }
                int r;
                if (api && streq(api, API_VERSION) && kind && streq(kind, "Fleet")) {
                        if (*seen_fleet)
                                return dp_error_set(err, -EINVAL, "%s: Fleet: only one Fleet may be given (line %u)",
                                                    src, root->line);
                        *seen_fleet = true;
                        in->fleet = true;
                        free(in->source);
                        if (!(in->source = dp_strdup(src))) return -ENOMEM;
                        _cleanup_free_ char *dir = NULL;
                        if (files) {
                                const char *sl = strrchr(src, '/');
                                dir = !sl ? dp_strdup(".") : sl == src ? dp_strdup("/") : dp_strndup(src, (size_t)(sl - src));
                                if (!dir) return -ENOMEM;
                        }
                        r = parse_fleet(root, in, dir, err);
                        if (r < 0)
                                return dp_fmt_prefix(err, r, "%s: Fleet %s", src, in->fleet_name ? in->fleet_name : "");
                } else if (api && streq(api, API_VERSION) && kind && streq(kind, "Timeline")) {
                        if (*seen_timeline)
                                return dp_error_set(err, -EINVAL,
                                                    "%s: Timeline: only one Timeline may be given (line %u)", src,
                                                    root->line);
                        *seen_timeline = true;
                        r = parse_timeline(root, in, err);
                        if (r < 0) return dp_fmt_prefix(err, r, "%s: Timeline", src);
                } else {
                        r = dp_model_decode(root, src, i - file_start, in->objs, err);
                        if (r < 0) return r;
                        size_t *v = realloc(in->k8s_docs, (in->n_k8s_docs + 1) * sizeof(*v));
                        if (!v) return -ENOMEM;
                        in->k8s_docs = v;
                        v = realloc(in->k8s_doc_index, (in->n_k8s_docs + 1) * sizeof(*v));
                        if (!v) return -ENOMEM;
                        in->k8s_doc_index = v;
                        in->k8s_docs[in->n_k8s_docs] = i;
                        v[in->n_k8s_docs++] = i - file_start;
                        if (!in->source && !(in->source = dp_strdup(src))) return -ENOMEM;
                }
        }
        return 0;
}

static int finish(dp_sim_input *in, bool seen_fleet, dp_error *err) {
        if (!seen_fleet && !dp_object_list_count(in->objs, DP_KIND_NODE))
                return dp_error_set(err, -EINVAL,
                                    "no nodes in the input: give Node objects (a `kubectl get nodes,pods,"
                                    "resourceslices,... -o yaml` dump) or a Fleet (kind: Fleet, apiVersion: %s)",
                                    API_VERSION);
        if (!seen_fleet && !(in->fleet_name = dp_strdup("cluster"))) return -ENOMEM;
        /* Node objects are a real cluster's: score as its kube-scheduler does.
         * A Fleet keeps spec.scoring (binpack unless set; docs/scheduler.md). */
        if (!seen_fleet) in->policy = DP_SCORE_DEFAULT;
        if (!in->source && !(in->source = dp_strdup("input"))) return -ENOMEM;
        if (in->schedulers == 0) in->schedulers = 1;
        int r = dp_model_generate_names(in->objs, err);
        if (r >= 0) r = dp_model_validate(in->objs, err);
        /* the warnings of the defaults once, here; every run applies them again */
        if (r >= 0) r = dp_model_apply_defaults(in->objs, err);
        if (r >= 0) r = dp_queue_warn_input(in->objs, err); /* and the queue's (src/queue) */
        if (r >= 0) r = dp_kai_warn_input(in->objs, err);   /* which policy admits KAI's pods */
        if (r >= 0) r = dp_volcano_warn_input(in->objs, err); /* and Volcano's */
        return r;
}

static int new_input(dp_sim_input **ret) {
        dp_sim_input *in = calloc(1, sizeof(*in));
        if (!in) return -ENOMEM;
        if (!(in->objs = dp_object_list_new())) {
                free(in);
                return -ENOMEM;
        }
        in->objs->ext = &dp_queue_model_ext; /* Kueue's kinds (src/queue) */
        *ret = in;
        return 0;
}

static int dp_sim_load_buffer_impl(const char *buf, size_t len, const char *source, dp_sim_input **ret, dp_error *err) {
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set || new_input(&in) < 0) return -ENOMEM;
        bool f = false, t = false;
        int r = dp_doc_parse(set, buf, len, source, err);
        if (r >= 0) r = load_doc_set(in, set, false, &f, &t, err);
        if (r >= 0 && !f && !(in->cluster_name = dp_strdup(source ? source : "input"))) r = -ENOMEM;
        if (r >= 0) r = finish(in, f, err);
        if (r < 0) return r;
        in->docs = TAKE_PTR(set);
        *ret = TAKE_PTR(in);
        return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static bool wanted(const char *n) {
        size_t l = strlen(n);
        return (l > 5 && streq(n + l - 5, ".yaml")) || (l > 4 && streq(n + l - 4, ".yml")) ||
               (l > 5 && streq(n + l - 5, ".json"));
}

/* The files read, for the header of a cluster input: how many, and the one
 * when there is one. */
typedef struct files_read {
        size_t n;
        char *one;
} files_read;

static int file_read(files_read *f, const char *name) {
        if (f->n++ == 0 && !(f->one = dp_strdup(name))) return -ENOMEM;
        return 0;
}

static int load_path(dp_sim_input *in, dp_doc_set *set, const char *path, bool *stdin_read, files_read *fr,
                     dp_error *err) {
        if (streq(path, DP_MODEL_STDIN)) {
                if (*stdin_read) return dp_error_set(err, -EINVAL, "-f -: standard input can be read only once");
                *stdin_read = true;
                if (file_read(fr, DP_MODEL_STDIN_NAME) < 0) return -ENOMEM;
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                int r = dp_model_read_stdin(&buf, &len, err);
                return r < 0 ? r : dp_doc_parse(set, buf, len, DP_MODEL_STDIN_NAME, err);
        }
        struct stat st;
        if (stat(path, &st) < 0) return dp_error_errno(err, -errno, "%s", path);
        if (!S_ISDIR(st.st_mode)) return file_read(fr, path) < 0 ? -ENOMEM : dp_doc_parse_file(set, path, err);
        DIR *d = opendir(path);
        if (!d) return dp_error_errno(err, -errno, "%s", path);
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || !wanted(de->d_name)) continue;
                if (DP_GROW(names, cap, n + 1) < 0 || !(names[n] = dp_asprintf("%s/%s", path, de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);
        if (r >= 0 && n) qsort(names, n, sizeof(char *), cmp_str);
        for (size_t i = 0; i < n && r >= 0; i++)
                if ((r = file_read(fr, names[i])) >= 0) r = dp_doc_parse_file(set, names[i], err);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

static int dp_sim_load_impl(const dp_sim_text *texts, size_t n_texts, const char *const *paths, size_t n_paths,
                            dp_sim_input **ret, dp_error *err) {
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set || new_input(&in) < 0) return -ENOMEM;
        int r = 0;
        bool stdin_read = false;
        for (size_t i = 0; i < n_texts && r >= 0; i++)
                r = dp_doc_parse(set, texts[i].buf, texts[i].len, texts[i].source, err);
        files_read fr = {0};
        for (size_t i = 0; i < n_paths && r >= 0; i++)
                r = load_path(in, set, paths[i], &stdin_read, &fr, err);
        bool f = false, t = false;
        if (r >= 0) r = load_doc_set(in, set, true, &f, &t, err);
        if (r >= 0 && !f) {
                const char *s = fr.n == 1 ? "" : "s";
                in->cluster_name = !texts && fr.n == 1 ? dp_strdup(fr.one)
                                   : !texts            ? dp_asprintf("(%zu files)", fr.n)
                                   : fr.n              ? dp_asprintf("(API server and %zu file%s)", fr.n, s)
                                                       : dp_strdup("(API server)");
                if (!in->cluster_name) r = -ENOMEM;
        }
        free(fr.one);
        if (r >= 0) r = finish(in, f, err);
        if (r < 0) return r;
        in->docs = TAKE_PTR(set);
        *ret = TAKE_PTR(in);
        return 0;
}

int dp_sim_load_buffer(const char *buf, size_t len, const char *source, dp_sim_input **ret, dp_error *err) {
        return dp_fmt_oom(err, dp_sim_load_buffer_impl(buf, len, source, ret, err));
}

int dp_sim_load(const char *const *paths, size_t n_paths, dp_sim_input **ret, dp_error *err) {
        return dp_fmt_oom(err, dp_sim_load_impl(NULL, 0, paths, n_paths, ret, err));
}

int dp_sim_load_texts(const dp_sim_text *texts, size_t n_texts, const char *const *paths, size_t n_paths,
                      dp_sim_input **ret, dp_error *err) {
        return dp_fmt_oom(err, dp_sim_load_impl(texts, n_texts, paths, n_paths, ret, err));
}

int dp_sim_load_or_builtin(const char *const *paths, size_t n_paths, dp_sim_input **ret, dp_error *err) {
        if (n_paths) return dp_sim_load(paths, n_paths, ret, err);
        size_t len = 0;
        const char *seed = dp_sim_builtin_scenario(&len);
        return dp_sim_load_buffer(seed, len, "built-in scenario (examples/seed.yaml)", ret, err);
}
