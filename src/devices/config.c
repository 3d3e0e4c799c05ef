/* SPDX-License-Identifier: Apache-2.0
 * config.c — the agent's NVIDIA-shaped V1 config: defaults, decoding, the
 * check against a node's devices. */
#include <stdio.h>

#include "base/doc.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "devices/config.h"
#include "devices/decode.h"

static const char *const mig_words[] = {"none", "single", "mixed", NULL};

const char *dp_mig_strategy_to_string(dp_mig_strategy m) { return (unsigned)m < 3 ? mig_words[m] : "invalid"; }

dp_agent_config *dp_agent_config_free(dp_agent_config *c) {
        if (!c) return NULL;
        free(c->source);
        free(c->cdi_annotation_prefix);
        for (size_t i = 0; i < c->n_ts_resources; i++) {
                free(c->ts_resources[i].name);
                free(c->ts_resources[i].rename);
        }
        free(c->ts_resources);
        free(c);
        return NULL;
}

dp_agent_config *dp_agent_config_new_default(void) {
        dp_agent_config *c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        c->source = dp_strdup("built-in defaults");
        c->cdi_annotation_prefix = dp_strdup("cdi.k8s.io/");
        if (!c->source || !c->cdi_annotation_prefix) return dp_agent_config_free(c);
        c->mig_strategy = DP_MIG_NONE;
        c->fail_on_init_error = true;
        c->pass_device_specs = false;
        c->device_list_strategy = DP_DLS_ENVVAR;
        c->device_id_strategy = DP_ID_UUID;
        c->shared_policy = DP_SHARED_DISTRIBUTED;
        return c;
}

static int oom(const dp_decode_ctx *c) { return dp_error_set(c->err, -ENOMEM, "out of memory"); }

/* Accepted for compatibility; the value is type-checked and dropped. */
static int ignored_str(const dp_decode_ctx *c, const dp_doc_node *m, const char *key, const char *path) {
        const dp_doc_node *n = dp_doc_get(m, key);
        if (!n || dp_doc_is_null(n)) return 0;
        char p[128];
        dp_pathf(p, sizeof p, "%s.%s", path, key);
        _cleanup_free_ char *s = NULL;
        return dp_decode_str(c, n, p, true, &s);
}
static int ignored_bool(const dp_decode_ctx *c, const dp_doc_node *m, const char *key, const char *path) {
        const dp_doc_node *n = dp_doc_get(m, key);
        if (!n || dp_doc_is_null(n)) return 0;
        char p[128];
        dp_pathf(p, sizeof p, "%s.%s", path, key);
        bool b;
        return dp_decode_bool(c, n, p, &b);
}

static int read_dls(const dp_decode_ctx *c, const dp_doc_node *n, unsigned *ret) {
        static const char *const words[] = {"envvar", "volume-mounts", "cdi-annotations", "cdi-cri", NULL};
        const char *path = "flags.plugin.deviceListStrategy";
        unsigned bits = 0;
        if (n->type == DP_DOC_SEQ) {
                if (n->n == 0) return dp_decode_fail(c, n, path, "must name at least one strategy");
                for (size_t i = 0; i < n->n; i++) {
                        char p[96];
                        dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                        int k, r = dp_decode_enum(c, n->items[i], p, words, &k);
                        if (r < 0) return r;
                        if (bits & (1u << k)) return dp_decode_fail(c, n->items[i], p, "listed twice");
                        bits |= 1u << k;
                }
        } else {
                int k, r = dp_decode_enum(c, n, path, words, &k);
                if (r < 0) return r;
                bits = 1u << k;
        }
        *ret = bits;
        return 0;
}

static int read_flags(const dp_decode_ctx *c, const dp_doc_node *flags, dp_agent_config *cfg) {
        static const char *const keys[] = {
                "migStrategy",  "failOnInitError", "nvidiaDriverRoot",        "nvidiaDevRoot", "gdsEnabled",
                "mofedEnabled", "gdrcopyEnabled",  "deviceDiscoveryStrategy", "plugin",        NULL};
        static const char *const pkeys[] = {"passDeviceSpecs",
                                            "deviceListStrategy",
                                            "deviceIDStrategy",
                                            "cdiAnnotationPrefix",
                                            "sharedDevicesAllocationPolicy",
                                            "nvidiaCTKPath",
                                            "containerDriverRoot",
                                            NULL};
        int r = dp_decode_check_map(c, flags, "flags", keys);
        if (r < 0) return r;
        const dp_doc_node *n;
        if ((n = dp_doc_get(flags, "migStrategy")) && !dp_doc_is_null(n)) {
                int k;
                if ((r = dp_decode_enum(c, n, "flags.migStrategy", mig_words, &k)) < 0) return r;
                cfg->mig_strategy = (dp_mig_strategy)k;
        }
        if ((n = dp_doc_get(flags, "failOnInitError")) && !dp_doc_is_null(n) &&
            (r = dp_decode_bool(c, n, "flags.failOnInitError", &cfg->fail_on_init_error)) < 0)
                return r;
        static const char *const strs[] = {"nvidiaDriverRoot", "nvidiaDevRoot", NULL};
        for (size_t i = 0; strs[i]; i++)
                if ((r = ignored_str(c, flags, strs[i], "flags")) < 0) return r;
        static const char *const bools[] = {"gdsEnabled", "mofedEnabled", "gdrcopyEnabled", NULL};
        for (size_t i = 0; bools[i]; i++)
                if ((r = ignored_bool(c, flags, bools[i], "flags")) < 0) return r;
        if ((n = dp_doc_get(flags, "deviceDiscoveryStrategy")) && !dp_doc_is_null(n)) {
                static const char *const words[] = {"auto", "nvml", "tegra", NULL};
                int k;
                if ((r = dp_decode_enum(c, n, "flags.deviceDiscoveryStrategy", words, &k)) < 0) return r;
        }
        const dp_doc_node *pl = dp_doc_get(flags, "plugin");
        if (!pl || dp_doc_is_null(pl)) return 0;
        if ((r = dp_decode_check_map(c, pl, "flags.plugin", pkeys)) < 0) return r;
        if ((n = dp_doc_get(pl, "passDeviceSpecs")) && !dp_doc_is_null(n) &&
            (r = dp_decode_bool(c, n, "flags.plugin.passDeviceSpecs", &cfg->pass_device_specs)) < 0)
                return r;
        if ((n = dp_doc_get(pl, "deviceListStrategy")) && !dp_doc_is_null(n) &&
            (r = read_dls(c, n, &cfg->device_list_strategy)) < 0)
                return r;
        if ((n = dp_doc_get(pl, "deviceIDStrategy")) && !dp_doc_is_null(n)) {
                static const char *const words[] = {"uuid", "index", NULL};
                int k;
                if ((r = dp_decode_enum(c, n, "flags.plugin.deviceIDStrategy", words, &k)) < 0) return r;
                cfg->device_id_strategy = (dp_device_id_strategy)k;
        }
        if ((n = dp_doc_get(pl, "sharedDevicesAllocationPolicy")) && !dp_doc_is_null(n)) {
                static const char *const words[] = {"distributed", "packed", NULL};
                int k;
                if ((r = dp_decode_enum(c, n, "flags.plugin.sharedDevicesAllocationPolicy", words, &k)) < 0) return r;
                cfg->shared_policy = (dp_shared_policy)k;
        }
        if ((n = dp_doc_get(pl, "cdiAnnotationPrefix")) && !dp_doc_is_null(n)) {
                char *s;
                if ((r = dp_decode_str(c, n, "flags.plugin.cdiAnnotationPrefix", false, &s)) < 0) return r;
                size_t l = strlen(s);
                const char *slash = strchr(s, '/');
                if (l < 2 || l > 200 || !slash || slash[1] != 0) {
                        free(s);
                        return dp_decode_fail(c, n, "flags.plugin.cdiAnnotationPrefix",
                                              "must be a DNS subdomain followed by '/', like cdi.k8s.io/");
                }
                s[l - 1] = 0;
                bool ok = dp_is_dns_subdomain(s);
                s[l - 1] = '/';
                if (!ok) {
                        free(s);
                        return dp_decode_fail(c, n, "flags.plugin.cdiAnnotationPrefix",
                                              "must be a DNS subdomain followed by '/', like cdi.k8s.io/");
                }
                free(cfg->cdi_annotation_prefix);
                cfg->cdi_annotation_prefix = s;
        }
        if ((r = ignored_str(c, pl, "nvidiaCTKPath", "flags.plugin")) < 0) return r;
        if ((r = ignored_str(c, pl, "containerDriverRoot", "flags.plugin")) < 0) return r;
        return 0;
}

/* Resource names as Register checks them (wire-protocols §2.5). */
static bool valid_resource_name(const char *s) {
        const char *slash = strchr(s, '/');
        if (!slash || strchr(slash + 1, '/') || strstr(s, "kubernetes.io/") || startswith(s, "requests.")) return false;
        size_t pl = (size_t)(slash - s);
        if (pl == 0 || pl > 253 - 9) return false;
        char prefix[256];
        memcpy(prefix, s, pl);
        prefix[pl] = 0;
        if (!dp_is_dns_subdomain(prefix)) return false;
        const char *name = slash + 1;
        size_t nl = strlen(name);
        if (nl == 0 || nl > 63) return false;
        for (size_t i = 0; i < nl; i++) {
                char ch = name[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
                if (!alnum && !(i > 0 && i + 1 < nl && (ch == '-' || ch == '_' || ch == '.'))) return false;
        }
        return true;
}

static int read_ts_resource(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_ts_resource *t) {
        static const char *const keys[] = {"name", "replicas", "rename", "devices", NULL};
        int r = dp_decode_check_map(c, n, path, keys);
        if (r < 0) return r;
        char p[128];
        const dp_doc_node *v = dp_doc_get(n, "name");
        dp_pathf(p, sizeof p, "%s.name", path);
        if (!v) return dp_decode_fail(c, n, p, "required");
        if ((r = dp_decode_str(c, v, p, false, &t->name)) < 0) return r;
        if (!valid_resource_name(t->name))
                return dp_decode_fail(c, v, p,
                                      "must be an extended resource name <domain>/<name>, like nvidia.com/gpu");
        v = dp_doc_get(n, "replicas");
        dp_pathf(p, sizeof p, "%s.replicas", path);
        if (!v) return dp_decode_fail(c, n, p, "required");
        int64_t rep;
        if ((r = dp_decode_int(c, v, p, 1, DP_CONFIG_REPLICAS_MAX, &rep)) < 0) return r;
        t->replicas = (unsigned)rep;
        if ((v = dp_doc_get(n, "rename")) && !dp_doc_is_null(v)) {
                dp_pathf(p, sizeof p, "%s.rename", path);
                char *s;
                if ((r = dp_decode_str(c, v, p, false, &s)) < 0) return r;
                if (!strchr(s, '/')) {
                        /* bare name: the domain is the one of `name` */
                        const char *slash = strchr(t->name, '/');
                        char *full = dp_asprintf("%.*s/%s", (int)(slash - t->name), t->name, s);
                        free(s);
                        if (!full) return oom(c);
                        s = full;
                }
                t->rename = s;
                if (!valid_resource_name(s))
                        return dp_decode_fail(c, v, p, "must give a valid extended resource name, got %s", s);
        }
        if ((v = dp_doc_get(n, "devices")) && !dp_doc_is_null(v)) {
                dp_pathf(p, sizeof p, "%s.devices", path);
                const char *s;
                if (dp_doc_get_str(v, false, &s, NULL) < 0 || !streq(s, "all"))
                        return dp_decode_fail(c, v, p,
                                              "only \"all\" is supported (replicas apply to every device of the "
                                              "resource)");
        }
        return 0;
}

static int read_sharing(const dp_decode_ctx *c, const dp_doc_node *sh, dp_agent_config *cfg) {
        static const char *const keys[] = {"timeSlicing", "mps", NULL};
        static const char *const tkeys[] = {"renameByDefault", "failRequestsGreaterThanOne", "resources", NULL};
        int r = dp_decode_check_map(c, sh, "sharing", keys);
        if (r < 0) return r;
        const dp_doc_node *n = dp_doc_get(sh, "mps");
        if (n && !dp_doc_is_null(n))
                return dp_decode_fail(c, n, "sharing.mps", "MPS sharing is not supported; use sharing.timeSlicing");
        const dp_doc_node *ts = dp_doc_get(sh, "timeSlicing");
        if (!ts || dp_doc_is_null(ts)) return 0;
        if ((r = dp_decode_check_map(c, ts, "sharing.timeSlicing", tkeys)) < 0) return r;
        if ((n = dp_doc_get(ts, "renameByDefault")) && !dp_doc_is_null(n) &&
            (r = dp_decode_bool(c, n, "sharing.timeSlicing.renameByDefault", &cfg->ts_rename_by_default)) < 0)
                return r;
        if ((n = dp_doc_get(ts, "failRequestsGreaterThanOne")) && !dp_doc_is_null(n) &&
            (r = dp_decode_bool(c, n, "sharing.timeSlicing.failRequestsGreaterThanOne",
                                &cfg->ts_fail_requests_greater_than_one)) < 0)
                return r;
        const dp_doc_node *res = dp_doc_get(ts, "resources");
        if (!res || dp_doc_is_null(res)) return 0;
        if (res->type != DP_DOC_SEQ)
                return dp_decode_fail(c, res, "sharing.timeSlicing.resources", "expected a list, got %s",
                                      dp_doc_type_name(res));
        if (res->n > DP_CONFIG_TS_RESOURCES_MAX)
                return dp_decode_fail_code(c, -E2BIG, res, "sharing.timeSlicing.resources", "at most %d entries",
                                           DP_CONFIG_TS_RESOURCES_MAX);
        cfg->ts_resources = calloc(res->n ? res->n : 1, sizeof(dp_ts_resource));
        if (!cfg->ts_resources) return oom(c);
        for (size_t i = 0; i < res->n; i++) {
                char p[96];
                dp_pathf(p, sizeof p, "sharing.timeSlicing.resources[%zu]", i);
                dp_ts_resource *t = &cfg->ts_resources[cfg->n_ts_resources++];
                if ((r = read_ts_resource(c, res->items[i], p, t)) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(cfg->ts_resources[j].name, t->name))
                                return dp_decode_fail(c, res->items[i], p, "resource %s is listed twice", t->name);
        }
        return 0;
}

static int load_root(const dp_decode_ctx *c, const dp_doc_node *root, dp_agent_config *cfg) {
        static const char *const keys[] = {"version", "flags", "sharing", "resources", "imex", NULL};
        int r = dp_decode_check_map(c, root, "", keys);
        if (r < 0) return r;
        const dp_doc_node *v = dp_doc_get(root, "version");
        const char *s;
        if (!v) return dp_decode_fail(c, root, "version", "required: v1");
        if (dp_doc_get_str(v, true, &s, NULL) < 0 || !streq(s, "v1"))
                return dp_decode_fail(c, v, "version", "must be v1");
        if ((v = dp_doc_get(root, "resources")) && !dp_doc_is_null(v))
                return dp_decode_fail(c, v, "resources",
                                      "renaming resources by pattern is not supported; names come from the device "
                                      "profile and flags.migStrategy");
        if ((v = dp_doc_get(root, "imex")) && !dp_doc_is_null(v))
                return dp_decode_fail(c, v, "imex", "IMEX channels are not supported");
        if ((v = dp_doc_get(root, "flags")) && !dp_doc_is_null(v) && (r = read_flags(c, v, cfg)) < 0) return r;
        if ((v = dp_doc_get(root, "sharing")) && !dp_doc_is_null(v) && (r = read_sharing(c, v, cfg)) < 0) return r;
        return 0;
}

int dp_agent_config_load(const char *buf, size_t len, const char *source, dp_agent_config **ret, dp_error *err) {
        assert_return(ret && (buf || len == 0), -EINVAL);
        if (!source) source = "config";
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(ds, buf ? buf : "", len, source, err);
        if (r < 0) return r;
        if (dp_doc_count(ds) != 1)
                return dp_error_set(err, -EINVAL, "%s: a config file holds exactly one document, found %zu", source,
                                    dp_doc_count(ds));
        _cleanup_(dp_agent_config_freep) dp_agent_config *cfg = dp_agent_config_new_default();
        if (!cfg) return dp_error_set(err, -ENOMEM, "out of memory");
        free(cfg->source);
        if (!(cfg->source = dp_strdup(source))) return dp_error_set(err, -ENOMEM, "out of memory");
        dp_decode_ctx c = {source, "config", NULL, err};
        if ((r = load_root(&c, dp_doc_root(ds, 0), cfg)) < 0) return r;
        *ret = TAKE_PTR(cfg);
        return 0;
}

int dp_agent_config_load_file(const char *path, dp_agent_config **ret, dp_error *err) {
        assert_return(path && ret, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
        if (r < 0) return r;
        return dp_agent_config_load(buf, len, path, ret, err);
}

int dp_agent_config_check(const dp_agent_config *c, const dp_device_set *s, dp_error *err) {
        assert_return(c && s, -EINVAL);
        if (c->mig_strategy != DP_MIG_SINGLE) return 0;
        size_t mig = 0, whole = 0;
        const char *profile = NULL;
        const dp_device *first_whole = NULL, *first_mig = NULL;
        for (size_t i = 0; i < s->n_devices; i++) {
                const dp_device *d = &s->devices[i];
                if (!d->mig_enabled) {
                        whole++;
                        if (!first_whole) first_whole = d;
                        continue;
                }
                mig++;
                if (!first_mig) first_mig = d;
                if (d->n_migs == 0)
                        return dp_error_set(err, -EINVAL,
                                            "%s: flags.migStrategy: single: device %s is in MIG mode but has no MIG "
                                            "instances",
                                            c->source, d->id);
                for (size_t j = 0; j < d->n_migs; j++) {
                        if (!profile)
                                profile = d->migs[j].profile;
                        else if (!streq(profile, d->migs[j].profile))
                                return dp_error_set(err, -EINVAL,
                                                    "%s: flags.migStrategy: single requires one MIG profile on the "
                                                    "node, but node %s has %s and %s (%s); use mixed",
                                                    c->source, s->node_name, profile, d->migs[j].profile,
                                                    d->migs[j].id);
                }
        }
        if (mig && whole)
                return dp_error_set(err, -EINVAL,
                                    "%s: flags.migStrategy: single cannot be used on node %s, which mixes %zu "
                                    "MIG-enabled GPU%s (%s, ...) and %zu whole GPU%s (%s, ...); use mixed or none",
                                    c->source, s->node_name, mig, mig == 1 ? "" : "s", first_mig->id, whole,
                                    whole == 1 ? "" : "s", first_whole->id);
        return 0;
}
