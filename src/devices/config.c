/* SPDX-License-Identifier: Apache-2.0
 * config.c — the agent's V1 config, NVIDIA's config API v1 as NVIDIA reads
 * it: defaults, decoding (what NVIDIA ignores becomes a warning, what it
 * refuses an error), flags and environment over the file, the check against
 * a node's devices. */
#include <stdarg.h>
#include <stdio.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "devices/config.h"
#include "devices/decode.h"
#include "doc/doc.h"

static const char *const mig_words[] = {"none", "single", "mixed", NULL};
static const char *const dls_words[] = {"envvar", "volume-mounts", "cdi-annotations", "cdi-cri", NULL};
static const char *const id_words[] = {"uuid", "index", NULL};
static const char *const policy_words[] = {"distributed", "packed", NULL};
static const char *const discovery_words[] = {"auto", "nvml", "tegra", NULL};

const char *dp_mig_strategy_to_string(dp_mig_strategy m) { return (unsigned)m < 3 ? mig_words[m] : "invalid"; }

static void free_resources(dp_ts_resource *r, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(r[i].name, r[i].rename);
        free(r);
}

dp_agent_config *dp_agent_config_free(dp_agent_config *c) {
        if (!c) return NULL;
        dp_free_many(c->source, c->cdi_annotation_prefix, c->mps_root, c->driver_root, c->dev_root,
                     c->device_discovery_strategy, c->nvidia_ctk_path, c->container_driver_root);
        free_resources(c->ts_resources, c->n_ts_resources);
        free_resources(c->mps_resources, c->n_mps_resources);
        for (size_t i = 0; i < c->n_warnings; i++)
                free(c->warnings[i]);
        free(c->warnings);
        free(c);
        return NULL;
}

dp_agent_config *dp_agent_config_new_default(void) {
        dp_agent_config *c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        c->source = dp_strdup("built-in defaults");
        c->cdi_annotation_prefix = dp_strdup("cdi.k8s.io/");
        c->driver_root = dp_strdup("/");
        c->device_discovery_strategy = dp_strdup("auto");
        c->nvidia_ctk_path = dp_strdup("/usr/bin/nvidia-ctk");
        c->container_driver_root = dp_strdup("/driver-root");
        if (!c->source || !c->cdi_annotation_prefix || !c->driver_root || !c->device_discovery_strategy ||
            !c->nvidia_ctk_path || !c->container_driver_root)
                return dp_agent_config_free(c);
        c->mig_strategy = DP_MIG_NONE;
        c->fail_on_init_error = true;
        c->pass_device_specs = false;
        c->device_list_strategy = DP_DLS_ENVVAR;
        c->device_id_strategy = DP_ID_UUID;
        c->shared_policy = DP_SHARED_DISTRIBUTED;
        c->mps_fail_requests_greater_than_one = true;
        return c;
}

const char *dp_agent_config_dev_root(const dp_agent_config *c) {
        if (!c) return "/";
        if (c->dev_root && *c->dev_root) return c->dev_root;
        return c->driver_root && *c->driver_root ? c->driver_root : "/";
}

/* ---- decoding ------------------------------------------------------------------- */

typedef struct loader {
        dp_decode_ctx c;
        dp_agent_config *cfg;
        unsigned flags;
} loader;

static int oom(const loader *l) { return dp_error_set(l->c.err, -ENOMEM, "out of memory"); }

static int warn(loader *l, const dp_doc_node *n, const char *path, const char *fmt, ...) _printf_(4, 5);
static int warn(loader *l, const dp_doc_node *n, const char *path, const char *fmt, ...) {
        dp_agent_config *cfg = l->cfg;
        if (cfg->n_warnings >= DP_CONFIG_WARNINGS_MAX) return 0;
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        char *w = n ? dp_asprintf("%s:%u:%u: config: %s: %s", l->c.source, n->line, n->col, path, msg)
                    : dp_asprintf("%s: config: %s: %s", l->c.source, path, msg);
        if (!w) return oom(l);
        char **nw = realloc(cfg->warnings, (cfg->n_warnings + 1) * sizeof(char *));
        if (!nw) {
                free(w);
                return oom(l);
        }
        cfg->warnings = nw;
        cfg->warnings[cfg->n_warnings++] = w;
        return 0;
}

/* `n` must be a map; a key outside `allowed` is a warning (NVIDIA's decoder
 * drops it silently), or an error under DP_CONFIG_STRICT. */
static int check_keys(loader *l, const dp_doc_node *n, const char *path, const char *const *allowed) {
        if (!n || n->type != DP_DOC_MAP)
                return dp_decode_fail(&l->c, n, path, "expected a map, got %s", dp_doc_type_name(n));
        for (size_t i = 0; i < n->n; i++) {
                const char *k = n->pairs[i].key;
                bool ok = false;
                for (const char *const *a = allowed; *a && !ok; a++)
                        ok = streq(*a, k);
                if (ok) continue;
                char p[256];
                dp_pathf(p, sizeof p, "%s%s%s", *path ? path : "", *path ? "." : "", k);
                const dp_doc_node *at = n->pairs[i].key_node ? n->pairs[i].key_node : n;
                if (l->flags & DP_CONFIG_STRICT) return dp_decode_fail(&l->c, at, p, "unknown field");
                int r = warn(l, at, p, "unknown field, ignored");
                if (r < 0) return r;
        }
        return 0;
}

static const dp_doc_node *field(const dp_doc_node *m, const char *key) {
        const dp_doc_node *n = dp_doc_get(m, key);
        return n && !dp_doc_is_null(n) ? n : NULL;
}

static int read_str(loader *l, const dp_doc_node *m, const char *key, const char *path, char **dst) {
        const dp_doc_node *n = field(m, key);
        if (!n) return 0;
        char p[128];
        dp_pathf(p, sizeof p, "%s.%s", path, key);
        char *s;
        int r = dp_decode_str(&l->c, n, p, false, &s);
        if (r < 0) return r;
        if (dst) {
                free(*dst);
                *dst = s;
        } else
                free(s);
        return 0;
}

static int read_bool(loader *l, const dp_doc_node *m, const char *key, const char *path, bool *dst) {
        const dp_doc_node *n = field(m, key);
        if (!n) return 0;
        char p[128];
        dp_pathf(p, sizeof p, "%s.%s", path, key);
        bool b;
        int r = dp_decode_bool(&l->c, n, p, &b);
        if (r < 0) return r;
        if (dst) *dst = b;
        return 0;
}

static int read_enum(loader *l, const dp_doc_node *m, const char *key, const char *path, const char *const *words,
                     int *dst) {
        const dp_doc_node *n = field(m, key);
        if (!n) return 0;
        char p[128];
        dp_pathf(p, sizeof p, "%s.%s", path, key);
        return dp_decode_enum(&l->c, n, p, words, dst);
}

static int read_dls(loader *l, const dp_doc_node *n, unsigned *ret) {
        const char *path = "flags.plugin.deviceListStrategy";
        unsigned bits = 0;
        if (n->type == DP_DOC_SEQ) {
                if (n->n == 0) return dp_decode_fail(&l->c, n, path, "must name at least one strategy");
                for (size_t i = 0; i < n->n; i++) {
                        char p[96];
                        dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                        int k, r = dp_decode_enum(&l->c, n->items[i], p, dls_words, &k);
                        if (r < 0) return r;
                        bits |= 1u << k; /* NVIDIA accepts a strategy listed twice */
                }
        } else {
                int k, r = dp_decode_enum(&l->c, n, path, dls_words, &k);
                if (r < 0) return r;
                bits = 1u << k;
        }
        *ret = bits;
        return 0;
}

static bool valid_cdi_prefix(const char *s) {
        size_t len = strlen(s);
        const char *slash = strchr(s, '/');
        if (len < 2 || len > 200 || !slash || slash[1] != 0) return false;
        char buf[256];
        memcpy(buf, s, len - 1);
        buf[len - 1] = 0;
        return dp_is_dns_subdomain(buf);
}

/* A Go time.Duration as JSON: integer nanoseconds, or a string such as
 * "30s", "1h5m", "1.5h" (units ns us µs ms s m h), or "infinite". */
static bool valid_duration(const dp_doc_node *n) {
        if (dp_doc_kind(n) == DP_DOC_INT) return true;
        const char *s;
        if (dp_doc_get_str(n, false, &s, NULL) < 0) return false;
        if (streq(s, "infinite") || streq(s, "0")) return true;
        if (*s == '-' || *s == '+') s++;
        if (!*s) return false;
        while (*s) {
                bool digits = false;
                while ((*s >= '0' && *s <= '9') || *s == '.') {
                        digits |= *s != '.';
                        s++;
                }
                if (!digits) return false;
                static const char *const units[] = {"ns", "us", "\xc2\xb5s", "ms", "s", "m", "h", NULL};
                size_t best = 0;
                for (size_t i = 0; units[i]; i++)
                        if (startswith(s, units[i]) && strlen(units[i]) > best) best = strlen(units[i]);
                if (!best) return false;
                s += best;
        }
        return true;
}

static int read_gfd(loader *l, const dp_doc_node *g) {
        static const char *const keys[] = {"oneshot",    "noTimestamp",     "sleepInterval",
                                           "outputFile", "machineTypeFile", NULL};
        int r = check_keys(l, g, "flags.gfd", keys);
        if (r < 0) return r;
        if ((r = read_bool(l, g, "oneshot", "flags.gfd", NULL)) < 0 ||
            (r = read_bool(l, g, "noTimestamp", "flags.gfd", NULL)) < 0 ||
            (r = read_str(l, g, "outputFile", "flags.gfd", NULL)) < 0 ||
            (r = read_str(l, g, "machineTypeFile", "flags.gfd", NULL)) < 0)
                return r;
        const dp_doc_node *n = field(g, "sleepInterval");
        if (n && !valid_duration(n))
                return dp_decode_fail(&l->c, n, "flags.gfd.sleepInterval",
                                      "must be a duration such as 60s, integer nanoseconds, or \"infinite\"");
        return 0;
}

static int read_plugin(loader *l, const dp_doc_node *pl) {
        static const char *const keys[] = {"passDeviceSpecs",
                                           "deviceListStrategy",
                                           "deviceIDStrategy",
                                           "cdiAnnotationPrefix",
                                           "nvidiaCTKPath",
                                           "containerDriverRoot",
                                           "sharedDevicesAllocationPolicy",
                                           NULL};
        dp_agent_config *cfg = l->cfg;
        const char *path = "flags.plugin";
        int r = check_keys(l, pl, path, keys), k = -1;
        if (r < 0) return r;
        if ((r = read_bool(l, pl, "passDeviceSpecs", path, &cfg->pass_device_specs)) < 0) return r;
        const dp_doc_node *n = field(pl, "deviceListStrategy");
        if (n && (r = read_dls(l, n, &cfg->device_list_strategy)) < 0) return r;
        if ((r = read_enum(l, pl, "deviceIDStrategy", path, id_words, &k)) < 0) return r;
        if (k >= 0) cfg->device_id_strategy = (dp_device_id_strategy)k;
        k = -1;
        if ((r = read_enum(l, pl, "sharedDevicesAllocationPolicy", path, policy_words, &k)) < 0) return r;
        if (k >= 0) cfg->shared_policy = (dp_shared_policy)k;
        if ((n = field(pl, "cdiAnnotationPrefix"))) {
                _cleanup_free_ char *s = NULL;
                if ((r = dp_decode_str(&l->c, n, "flags.plugin.cdiAnnotationPrefix", false, &s)) < 0) return r;
                if (!valid_cdi_prefix(s))
                        return dp_decode_fail(&l->c, n, "flags.plugin.cdiAnnotationPrefix",
                                              "must be a DNS subdomain followed by '/', like cdi.k8s.io/");
                free(cfg->cdi_annotation_prefix);
                cfg->cdi_annotation_prefix = TAKE_PTR(s);
        }
        if ((r = read_str(l, pl, "nvidiaCTKPath", path, &cfg->nvidia_ctk_path)) < 0) return r;
        return read_str(l, pl, "containerDriverRoot", path, &cfg->container_driver_root);
}

static int read_flags(loader *l, const dp_doc_node *flags) {
        static const char *const keys[] = {"migStrategy",
                                           "failOnInitError",
                                           "mpsRoot",
                                           "nvidiaDriverRoot",
                                           "nvidiaDevRoot",
                                           "gdsEnabled",
                                           "mofedEnabled",
                                           "gdrcopyEnabled",
                                           "useNodeFeatureAPI",
                                           "deviceDiscoveryStrategy",
                                           "plugin",
                                           "gfd",
                                           NULL};
        dp_agent_config *cfg = l->cfg;
        int r = check_keys(l, flags, "flags", keys), k = -1;
        if (r < 0) return r;
        if ((r = read_enum(l, flags, "migStrategy", "flags", mig_words, &k)) < 0) return r;
        if (k >= 0) cfg->mig_strategy = (dp_mig_strategy)k;
        k = -1;
        if ((r = read_bool(l, flags, "failOnInitError", "flags", &cfg->fail_on_init_error)) < 0 ||
            (r = read_str(l, flags, "mpsRoot", "flags", &cfg->mps_root)) < 0 ||
            (r = read_str(l, flags, "nvidiaDriverRoot", "flags", &cfg->driver_root)) < 0 ||
            (r = read_str(l, flags, "nvidiaDevRoot", "flags", &cfg->dev_root)) < 0 ||
            (r = read_bool(l, flags, "gdsEnabled", "flags", &cfg->gds_enabled)) < 0 ||
            (r = read_bool(l, flags, "mofedEnabled", "flags", &cfg->mofed_enabled)) < 0 ||
            (r = read_bool(l, flags, "gdrcopyEnabled", "flags", &cfg->gdrcopy_enabled)) < 0 ||
            (r = read_bool(l, flags, "useNodeFeatureAPI", "flags", &cfg->use_node_feature_api)) < 0)
                return r;
        if ((r = read_enum(l, flags, "deviceDiscoveryStrategy", "flags", discovery_words, &k)) < 0) return r;
        if (k >= 0) {
                free(cfg->device_discovery_strategy);
                if (!(cfg->device_discovery_strategy = dp_strdup(discovery_words[k]))) return oom(l);
        }
        const dp_doc_node *n;
        if ((n = field(flags, "plugin")) && (r = read_plugin(l, n)) < 0) return r;
        if ((n = field(flags, "gfd")) && (r = read_gfd(l, n)) < 0) return r;
        return 0;
}
bool dp_resource_name_part_valid(const char *name) {
        size_t nl = strlen(name);
        if (nl == 0 || nl > 63) return false;
        for (size_t i = 0; i < nl; i++) {
                char ch = name[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
                if (!alnum && !(i > 0 && i + 1 < nl && (ch == '-' || ch == '_' || ch == '.'))) return false;
        }
        return true;
}

/* NVIDIA's resource names: a bare name is prefixed with nvidia.com/, the
 * whole name is at most 63 characters and the part after the domain is a
 * DNS subdomain. Another domain is a devplane extension (profiles with
 * their own domain); it must be a valid extended resource name. */
static bool valid_extended_name(const char *s) {
        const char *slash = strchr(s, '/');
        if (!slash || strchr(slash + 1, '/') || strstr(s, "kubernetes.io/") || startswith(s, "requests.")) return false;
        size_t pl = (size_t)(slash - s);
        if (pl == 0 || pl > 253 - 9) return false;
        char prefix[256];
        memcpy(prefix, s, pl);
        prefix[pl] = 0;
        if (!dp_is_dns_subdomain(prefix)) return false;
        return dp_resource_name_part_valid(slash + 1);
}

static int resource_name(loader *l, const dp_doc_node *n, const char *path, char **ret) {
        _cleanup_free_ char *s = NULL;
        int r = dp_decode_str(&l->c, n, path, false, &s);
        if (r < 0) return r;
        const char *slash = strchr(s, '/');
        if (slash && !startswith(s, "nvidia.com/")) {
                if (!valid_extended_name(s))
                        return dp_decode_fail(&l->c, n, path,
                                              "must be an extended resource name <domain>/<name>, like nvidia.com/gpu");
                *ret = TAKE_PTR(s);
                return 0;
        }
        char *full = slash ? TAKE_PTR(s) : dp_asprintf("nvidia.com/%s", s);
        if (!full) return oom(l);
        const char *part = full + strlen("nvidia.com/");
        if (strlen(full) > 63) {
                r = dp_decode_fail(&l->c, n, path, "fully-qualified resource name must be 63 characters or less: %s",
                                   full);
                free(full);
                return r;
        }
        if (!dp_is_dns_subdomain(part)) {
                r = dp_decode_fail(&l->c, n, path,
                                   "incorrect format for resource name '%s': must be a lower case DNS subdomain", full);
                free(full);
                return r;
        }
        *ret = full;
        return 0;
}

/* google/uuid's text forms: 36 characters with dashes at 8-13-18-23, or
 * 32 hex digits. */
static bool is_uuid(const char *s) {
        size_t n = strlen(s), hex = 0;
        if (n != 36 && n != 32) return false;
        for (size_t i = 0; i < n; i++) {
                if (n == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
                        if (s[i] != '-') return false;
                        continue;
                }
                char c = s[i];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
                hex++;
        }
        return hex == 32;
}

static bool all_digits(const char *s, size_t n) {
        if (n == 0) return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < '0' || s[i] > '9') return false;
        return true;
}

/* A devices list entry as NVIDIA accepts it: a GPU index "0", a MIG index
 * "0:1", GPU-<uuid>, MIG-<uuid> or MIG-GPU-<uuid>/<gi>/<ci>. */
static bool valid_device_ref(const char *s) {
        const char *colon = strchr(s, ':');
        if (all_digits(s, strlen(s))) return true;
        if (colon && all_digits(s, (size_t)(colon - s)) && all_digits(colon + 1, strlen(colon + 1))) return true;
        if (startswith(s, "GPU-")) return is_uuid(s + 4);
        if (!startswith(s, "MIG-")) return false;
        if (is_uuid(s + 4)) return true;
        const char *a = strchr(s + 4, '/');
        if (!a || !startswith(s + 4, "GPU-")) return false;
        const char *b = strchr(a + 1, '/');
        if (!b || strchr(b + 1, '/')) return false;
        char u[64];
        size_t ul = (size_t)(a - (s + 8));
        if (ul >= sizeof u) return false;
        memcpy(u, s + 8, ul);
        u[ul] = 0;
        return is_uuid(u) && all_digits(a + 1, (size_t)(b - a - 1)) && all_digits(b + 1, strlen(b + 1));
}

/* devices: "all" | N > 0 | [refs]. Returns 1 when it names anything but
 * "all" (NVIDIA then ignores it with a warning). */
static int read_devices(loader *l, const dp_doc_node *v, const char *p) {
        if (v->type == DP_DOC_SEQ) {
                for (size_t i = 0; i < v->n; i++) {
                        const dp_doc_node *it = v->items[i];
                        char q[160];
                        dp_pathf(q, sizeof q, "%s[%zu]", p, i);
                        if (dp_doc_kind(it) == DP_DOC_INT) {
                                int64_t x;
                                int r = dp_decode_int(&l->c, it, q, 0, INT64_MAX, &x);
                                if (r < 0) return r;
                                continue;
                        }
                        const char *s;
                        if (dp_doc_kind(it) != DP_DOC_STR || dp_doc_get_str(it, false, &s, NULL) < 0 ||
                            !valid_device_ref(s))
                                return dp_decode_fail(&l->c, it, q,
                                                      "unsupported device reference: must be a GPU index, a MIG "
                                                      "index (0:1) or a GPU/MIG uuid");
                }
                return 1;
        }
        if (dp_doc_kind(v) == DP_DOC_INT) {
                int64_t x;
                int r = dp_decode_int(&l->c, v, p, 1, INT64_MAX, &x);
                return r < 0 ? r : 1;
        }
        const char *s;
        if (dp_doc_kind(v) != DP_DOC_STR || dp_doc_get_str(v, false, &s, NULL) < 0)
                return dp_decode_fail(&l->c, v, p, "unrecognized type for devices: must be \"all\", a count or a list");
        if (!streq(s, "all"))
                return dp_decode_fail(&l->c, v, p, "devices set as '%s' but the only valid string input is 'all'", s);
        return 0;
}

static int read_replicated(loader *l, const dp_doc_node *n, const char *path, const char *block, bool rename_default,
                           dp_ts_resource *t) {
        static const char *const keys[] = {"name", "replicas", "rename", "devices", NULL};
        int r = check_keys(l, n, path, keys);
        if (r < 0) return r;
        char p[160];
        const dp_doc_node *v = field(n, "name");
        dp_pathf(p, sizeof p, "%s.name", path);
        if (!v) return dp_decode_fail(&l->c, n, p, "no resource name specified");
        if ((r = resource_name(l, v, p, &t->name)) < 0) return r;
        if ((v = field(n, "devices"))) {
                dp_pathf(p, sizeof p, "%s.devices", path);
                if ((r = read_devices(l, v, p)) < 0) return r;
                if (r > 0 &&
                    (r = warn(l, v, p,
                              "customizing the 'devices' field in sharing.%s.resources is not supported (as in "
                              "NVIDIA's plugin): every device of %s is shared",
                              block, t->name)) < 0)
                        return r;
        }
        v = field(n, "replicas");
        dp_pathf(p, sizeof p, "%s.replicas", path);
        if (!v) return dp_decode_fail(&l->c, n, p, "no replicas specified");
        int64_t rep;
        if (dp_doc_kind(v) != DP_DOC_INT)
                return dp_decode_fail(&l->c, v, p, "expected an integer, got %s", dp_doc_type_name(v));
        if ((r = dp_decode_int(&l->c, v, p, INT64_MIN, INT64_MAX, &rep)) < 0) return r;
        if (rep < 2) return dp_decode_fail(&l->c, v, p, "number of replicas must be >= 2");
        if (rep > DP_CONFIG_REPLICAS_MAX)
                return dp_decode_fail_code(&l->c, -E2BIG, v, p, "at most %d replicas", DP_CONFIG_REPLICAS_MAX);
        t->replicas = (unsigned)rep;
        _cleanup_free_ char *rename = NULL;
        if ((v = field(n, "rename"))) {
                dp_pathf(p, sizeof p, "%s.rename", path);
                if ((r = resource_name(l, v, p, &rename)) < 0) return r;
        }
        /* NVIDIA keeps renaming out of the config: without renameByDefault a
         * rename is dropped, with it every shared resource is <name>.shared. */
        if (rename_default) {
                if (!(t->rename = dp_asprintf("%s.shared", t->name))) return oom(l);
                if (rename && !streq(rename, t->rename) &&
                    (r = warn(l, v, p,
                              "setting the 'rename' field in sharing.%s.resources is not supported (as in NVIDIA's "
                              "plugin): renameByDefault names it %s",
                              block, t->rename)) < 0)
                        return r;
        } else if (rename &&
                   (r = warn(l, v, p,
                             "setting the 'rename' field in sharing.%s.resources is not supported (as in NVIDIA's "
                             "plugin): %s keeps its name",
                             block, t->name)) < 0)
                return r;
        return 0;
}

static int read_replicated_block(loader *l, const dp_doc_node *b, const char *block, bool *rename_default, bool *fail1,
                                 dp_ts_resource **ret, size_t *ret_n) {
        static const char *const keys[] = {"renameByDefault", "failRequestsGreaterThanOne", "resources", NULL};
        char path[64];
        dp_pathf(path, sizeof path, "sharing.%s", block);
        int r = check_keys(l, b, path, keys);
        if (r < 0) return r;
        if ((r = read_bool(l, b, "renameByDefault", path, rename_default)) < 0 ||
            (r = read_bool(l, b, "failRequestsGreaterThanOne", path, fail1)) < 0)
                return r;
        const dp_doc_node *res = field(b, "resources");
        char p[96];
        dp_pathf(p, sizeof p, "%s.resources", path);
        if (!res) return dp_decode_fail(&l->c, b, p, "no resources specified");
        if (res->type != DP_DOC_SEQ)
                return dp_decode_fail(&l->c, res, p, "expected a list, got %s", dp_doc_type_name(res));
        if (res->n == 0) return dp_decode_fail(&l->c, res, p, "no resources specified");
        if (res->n > DP_CONFIG_TS_RESOURCES_MAX)
                return dp_decode_fail_code(&l->c, -E2BIG, res, p, "at most %d entries", DP_CONFIG_TS_RESOURCES_MAX);
        *ret = calloc(res->n, sizeof(dp_ts_resource));
        if (!*ret) return oom(l);
        for (size_t i = 0; i < res->n; i++) {
                char q[128];
                dp_pathf(q, sizeof q, "%s[%zu]", p, i);
                dp_ts_resource *t = &(*ret)[(*ret_n)++];
                if ((r = read_replicated(l, res->items[i], q, block, *rename_default, t)) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq((*ret)[j].name, t->name))
                                return dp_decode_fail(&l->c, res->items[i], q, "resource %s is listed twice", t->name);
        }
        return 0;
}

static int read_sharing(loader *l, const dp_doc_node *sh) {
        static const char *const keys[] = {"timeSlicing", "mps", NULL};
        dp_agent_config *cfg = l->cfg;
        int r = check_keys(l, sh, "sharing", keys);
        if (r < 0) return r;
        const dp_doc_node *n;
        if ((n = field(sh, "timeSlicing")) &&
            (r = read_replicated_block(l, n, "timeSlicing", &cfg->ts_rename_by_default,
                                       &cfg->ts_fail_requests_greater_than_one, &cfg->ts_resources,
                                       &cfg->n_ts_resources)) < 0)
                return r;
        if ((n = field(sh, "mps"))) {
                cfg->mps = true;
                if ((r = read_replicated_block(l, n, "mps", &cfg->mps_rename_by_default,
                                               &cfg->mps_fail_requests_greater_than_one, &cfg->mps_resources,
                                               &cfg->n_mps_resources)) < 0)
                        return r;
                if (cfg->n_ts_resources &&
                    (r = warn(l, field(sh, "timeSlicing"), "sharing.timeSlicing",
                              "sharing.mps is set, so timeSlicing is not used (as in NVIDIA's plugin)")) < 0)
                        return r;
        }
        return 0;
}

static int read_resource_list(loader *l, const dp_doc_node *list, const char *path, size_t *count) {
        if (list->type != DP_DOC_SEQ)
                return dp_decode_fail(&l->c, list, path, "expected a list, got %s", dp_doc_type_name(list));
        if (list->n > DP_CONFIG_TS_RESOURCES_MAX)
                return dp_decode_fail_code(&l->c, -E2BIG, list, path, "at most %d entries", DP_CONFIG_TS_RESOURCES_MAX);
        for (size_t i = 0; i < list->n; i++) {
                const dp_doc_node *e = list->items[i];
                char p[96];
                dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                if (e->type != DP_DOC_MAP)
                        return dp_decode_fail(&l->c, e, p, "expected a map, got %s", dp_doc_type_name(e));
                const dp_doc_node *pat = field(e, "pattern"), *name = field(e, "name");
                if (!pat) return dp_decode_fail(&l->c, e, p, "resources must have a 'pattern' field set");
                if (!name) return dp_decode_fail(&l->c, e, p, "resources must have a 'name' field set");
                char q[128];
                dp_pathf(q, sizeof q, "%s.pattern", p);
                _cleanup_free_ char *ps = NULL, *ns = NULL;
                int r = dp_decode_str(&l->c, pat, q, false, &ps);
                if (r < 0) return r;
                dp_pathf(q, sizeof q, "%s.name", p);
                if ((r = resource_name(l, name, q, &ns)) < 0) return r;
                (*count)++;
        }
        return 0;
}

static int read_resources(loader *l, const dp_doc_node *res) {
        static const char *const keys[] = {"gpus", "mig", NULL};
        int r = check_keys(l, res, "resources", keys);
        if (r < 0) return r;
        size_t count = 0;
        const dp_doc_node *n;
        if ((n = field(res, "gpus")) && (r = read_resource_list(l, n, "resources.gpus", &count)) < 0) return r;
        if ((n = field(res, "mig")) && (r = read_resource_list(l, n, "resources.mig", &count)) < 0) return r;
        if (count)
                return warn(l, res, "resources",
                            "customizing the 'resources' field is not supported (as in NVIDIA's plugin): names "
                            "come from the devices and flags.migStrategy");
        return 0;
}

static int read_imex(loader *l, const dp_doc_node *im) {
        static const char *const keys[] = {"channelIDs", "required", NULL};
        int r = check_keys(l, im, "imex", keys);
        if (r < 0) return r;
        if ((r = read_bool(l, im, "required", "imex", &l->cfg->imex_required)) < 0) return r;
        const dp_doc_node *ids = field(im, "channelIDs");
        if (!ids) return 0;
        if (ids->type != DP_DOC_SEQ)
                return dp_decode_fail(&l->c, ids, "imex.channelIDs", "expected a list, got %s", dp_doc_type_name(ids));
        for (size_t i = 0; i < ids->n; i++)
                if (dp_doc_kind(ids->items[i]) != DP_DOC_INT)
                        return dp_decode_fail(&l->c, ids->items[i], "imex.channelIDs", "expected integers");
        int64_t v = -1;
        if (ids->n == 1) (void)dp_decode_int(&l->c, ids->items[0], "imex.channelIDs[0]", INT64_MIN, INT64_MAX, &v);
        if (ids->n > 1 || (ids->n == 1 && v != 0))
                return dp_decode_fail(&l->c, ids, "imex.channelIDs",
                                      "invalid IMEX config: channelIDs must be [] or [0]");
        l->cfg->imex_channel0 = ids->n == 1;
        return 0;
}

static int load_root(loader *l, const dp_doc_node *root) {
        static const char *const keys[] = {"version", "flags", "resources", "sharing", "imex", NULL};
        int r = check_keys(l, root, "", keys);
        if (r < 0) return r;
        const dp_doc_node *v = field(root, "version");
        const char *s;
        if (v) {
                if (dp_doc_get_str(v, true, &s, NULL) < 0)
                        return dp_decode_fail(&l->c, v, "version", "expected a string, got %s", dp_doc_type_name(v));
                if (*s && !streq(s, "v1")) return dp_decode_fail(&l->c, v, "version", "unknown version: %s", s);
        }
        if ((v = field(root, "flags")) && (r = read_flags(l, v)) < 0) return r;
        if ((v = field(root, "resources")) && (r = read_resources(l, v)) < 0) return r;
        if ((v = field(root, "sharing")) && (r = read_sharing(l, v)) < 0) return r;
        if ((v = field(root, "imex")) && (r = read_imex(l, v)) < 0) return r;
        return 0;
}

int dp_agent_config_load_flags(const char *buf, size_t len, const char *source, unsigned flags, dp_agent_config **ret,
                               dp_error *err) {
        assert_return(ret && (buf || len == 0), -EINVAL);
        if (!source) source = "config";
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(ds, buf ? buf : "", len, source, err);
        if (r < 0) return r;
        if (dp_doc_count(ds) > 1)
                return dp_error_set(err, -EINVAL, "%s: a config file holds exactly one document, found %zu", source,
                                    dp_doc_count(ds));
        _cleanup_(dp_agent_config_freep) dp_agent_config *cfg = dp_agent_config_new_default();
        if (!cfg) return dp_error_set(err, -ENOMEM, "out of memory");
        free(cfg->source);
        if (!(cfg->source = dp_strdup(source))) return dp_error_set(err, -ENOMEM, "out of memory");
        loader l = {{source, "config", NULL, err}, cfg, flags};
        /* An empty file is an empty config, as for NVIDIA's decoder. */
        const dp_doc_node *root = dp_doc_count(ds) ? dp_doc_root(ds, 0) : NULL;
        if (root && !dp_doc_is_null(root) && (r = load_root(&l, root)) < 0) return r;
        *ret = TAKE_PTR(cfg);
        return 0;
}

int dp_agent_config_load(const char *buf, size_t len, const char *source, dp_agent_config **ret, dp_error *err) {
        return dp_agent_config_load_flags(buf, len, source, 0, ret, err);
}

int dp_agent_config_load_file_flags(const char *path, unsigned flags, dp_agent_config **ret, dp_error *err) {
        assert_return(path && ret, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
        if (r < 0) return r;
        return dp_agent_config_load_flags(buf, len, path, flags, ret, err);
}

int dp_agent_config_load_file(const char *path, dp_agent_config **ret, dp_error *err) {
        return dp_agent_config_load_file_flags(path, 0, ret, err);
}

int dp_agent_config_check(const dp_agent_config *c, const dp_device_set *s, dp_error *err) {
        assert_return(c && s, -EINVAL);
        if (c->mig_strategy != DP_MIG_SINGLE) return 0;
        size_t mig = 0, whole = 0;
        const char *profile = NULL;
        const dp_hw_device *first_whole = NULL, *first_mig = NULL;
        for (size_t i = 0; i < s->n_devices; i++) {
                const dp_hw_device *d = &s->devices[i];
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

/* ---- flags and environment --------------------------------------------------------- */

#define FIELD(name) offsetof(dp_agent_config, name)
const dp_config_flag dp_config_flags[] = {
        {"mig-strategy", "MIG_STRATEGY", NULL, NULL, false, 0},
        {"fail-on-init-error", "FAIL_ON_INIT_ERROR", NULL, NULL, true, FIELD(fail_on_init_error)},
        {"driver-root", "NVIDIA_DRIVER_ROOT", NULL, NULL, false, FIELD(driver_root)},
        {"nvidia-driver-root", NULL, NULL, "driver-root", false, 0},
        {"dev-root", "NVIDIA_DEV_ROOT", NULL, NULL, false, FIELD(dev_root)},
        {"nvidia-dev-root", NULL, NULL, "dev-root", false, 0},
        {"pass-device-specs", "PASS_DEVICE_SPECS", NULL, NULL, true, FIELD(pass_device_specs)},
        {"device-list-strategy", "DEVICE_LIST_STRATEGY", NULL, NULL, false, 0},
        {"device-id-strategy", "DEVICE_ID_STRATEGY", NULL, NULL, false, 0},
        {"gdrcopy-enabled", "GDRCOPY_ENABLED", NULL, NULL, true, FIELD(gdrcopy_enabled)},
        {"gds-enabled", "GDS_ENABLED", NULL, NULL, true, FIELD(gds_enabled)},
        {"mofed-enabled", "MOFED_ENABLED", NULL, NULL, true, FIELD(mofed_enabled)},
        {"cdi-annotation-prefix", "CDI_ANNOTATION_PREFIX", NULL, NULL, false, 0},
        {"nvidia-cdi-hook-path", "NVIDIA_CDI_HOOK_PATH", "NVIDIA_CTK_PATH", NULL, false, FIELD(nvidia_ctk_path)},
        {"nvidia-ctk-path", NULL, NULL, "nvidia-cdi-hook-path", false, 0},
        {"driver-root-ctr-path", "DRIVER_ROOT_CTR_PATH", "CONTAINER_DRIVER_ROOT", NULL, false,
         FIELD(container_driver_root)},
        {"container-driver-root", NULL, NULL, "driver-root-ctr-path", false, 0},
        {"mps-root", "MPS_ROOT", NULL, NULL, false, FIELD(mps_root)},
        {"shared-devices-allocation-policy", "SHARED_DEVICES_ALLOCATION_POLICY", NULL, NULL, false, 0},
        {"device-discovery-strategy", "DEVICE_DISCOVERY_STRATEGY", NULL, NULL, false, 0},
        {"imex-channel-ids", "IMEX_CHANNEL_IDS", NULL, NULL, false, 0},
        {"imex-required", "IMEX_REQUIRED", NULL, NULL, true, FIELD(imex_required)},
        {NULL, NULL, NULL, NULL, false, 0},
};
#undef FIELD

/* Go's strconv.ParseBool; urfave/cli reads an empty variable as false. */
static int parse_bool(const char *s, bool *ret) {
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
        static const char *const f[] = {"", "0", "f", "F", "FALSE", "false", "False", NULL};
        for (size_t i = 0; t[i]; i++)
                if (streq(s, t[i])) return *ret = true, 0;
        for (size_t i = 0; f[i]; i++)
                if (streq(s, f[i])) return *ret = false, 0;
        return -EINVAL;
}

static int word(const char *s, const char *const *words) {
        for (int i = 0; words[i]; i++)
                if (streq(s, words[i])) return i;
        return -1;
}

static int set_str(char **dst, const char *v) {
        char *s = dp_strdup(v);
        if (!s) return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

/* One comma-separated item at a time, blanks trimmed (urfave/cli). */
static const char *next_item(const char *s, char *buf, size_t size) {
        if (!*s) return NULL;
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        const char *a = s, *b = s + n;
        while (a < b && (*a == ' ' || *a == '\t'))
                a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
        size_t m = DP_MIN((size_t)(b - a), size - 1);
        memcpy(buf, a, m);
        buf[m] = 0;
        return comma ? comma + 1 : s + n;
}

static int apply_one(dp_agent_config *c, const dp_config_flag *f, const char *v, const char *origin, dp_error *err) {
        const char *n = f->flag;
        bool b = false;
        int k;
        if (f->boolean && parse_bool(v, &b) < 0)
                return dp_error_set(err, -EINVAL, "%s: invalid value \"%.64s\" for a boolean: %s", origin, v,
                                    "use true or false");
        if (f->field && f->boolean) {
                *(bool *)((char *)c + f->field) = b;
                return 0;
        }
        if (f->field) return set_str((char **)((char *)c + f->field), v);
        if (streq(n, "mig-strategy")) {
                if ((k = word(v, mig_words)) < 0)
                        return dp_error_set(err, -EINVAL, "%s: unknown MIG strategy: %.64s", origin, v);
                c->mig_strategy = (dp_mig_strategy)k;
        } else if (streq(n, "device-list-strategy")) {
                unsigned bits = 0;
                char item[64];
                for (const char *s = next_item(v, item, sizeof item); s; s = next_item(s, item, sizeof item)) {
                        if ((k = word(item, dls_words)) < 0)
                                return dp_error_set(err, -EINVAL,
                                                    "%s: invalid --device-list-strategy option: invalid strategy: "
                                                    "%.64s",
                                                    origin, item);
                        bits |= 1u << k;
                }
                if (!bits) return dp_error_set(err, -EINVAL, "%s: must name at least one strategy", origin);
                c->device_list_strategy = bits;
        } else if (streq(n, "device-id-strategy")) {
                if ((k = word(v, id_words)) < 0)
                        return dp_error_set(err, -EINVAL, "%s: invalid --device-id-strategy option: %.64s", origin, v);
                c->device_id_strategy = (dp_device_id_strategy)k;
        } else if (streq(n, "shared-devices-allocation-policy")) {
                if ((k = word(v, policy_words)) < 0)
                        return dp_error_set(err, -EINVAL,
                                            "%s: invalid --shared-devices-allocation-policy option: %.64s", origin, v);
                c->shared_policy = (dp_shared_policy)k;
        } else if (streq(n, "device-discovery-strategy")) {
                if ((k = word(v, discovery_words)) < 0)
                        return dp_error_set(err, -EINVAL, "%s: invalid --device-discovery-strategy option %.64s",
                                            origin, v);
                return set_str(&c->device_discovery_strategy, v);
        } else if (streq(n, "cdi-annotation-prefix")) {
                if (!valid_cdi_prefix(v))
                        return dp_error_set(err, -EINVAL,
                                            "%s: \"%.64s\": must be a DNS subdomain followed by '/', like cdi.k8s.io/",
                                            origin, v);
                return set_str(&c->cdi_annotation_prefix, v);
        } else if (streq(n, "imex-channel-ids")) {
                char item[32];
                size_t count = 0;
                bool zero = true;
                for (const char *s = next_item(v, item, sizeof item); s; s = next_item(s, item, sizeof item)) {
                        char *end;
                        long x = strtol(item, &end, 10);
                        if (!*item || *end)
                                return dp_error_set(err, -EINVAL, "%s: \"%.32s\": not an integer", origin, item);
                        zero &= x == 0;
                        count++;
                }
                if (count > 1 || !zero)
                        return dp_error_set(
                                err, -EINVAL,
                                "%s: invalid IMEX channel IDs: invalid IMEX config: channelIDs must be [] or "
                                "[0]",
                                origin);
                c->imex_channel0 = count == 1;
        }
        return 0;
}

int dp_agent_config_apply(dp_agent_config *c, const dp_config_override *o, size_t n, dp_error *err) {
        assert_return(c && (o || n == 0), -EINVAL);
        for (size_t i = 0; i < n; i++) {
                const dp_config_flag *f = NULL;
                for (size_t k = 0; dp_config_flags[k].flag && !f; k++)
                        if (streq(dp_config_flags[k].flag, o[i].flag)) f = &dp_config_flags[k];
                if (!f) return dp_error_set(err, -EINVAL, "%s: not a setting of the config", o[i].flag);
                const char *target = f->alias_of;
                for (size_t k = 0; target && dp_config_flags[k].flag; k++)
                        if (streq(dp_config_flags[k].flag, target)) f = &dp_config_flags[k];
                int r = apply_one(c, f, o[i].value ? o[i].value : "", o[i].origin ? o[i].origin : o[i].flag, err);
                if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
                if (r < 0) return r;
        }
        return dp_agent_config_validate(c, err);
}

int dp_agent_config_validate(const dp_agent_config *c, dp_error *err) {
        assert_return(c, -EINVAL);
        if (!c->mps) return 0;
        if (c->mig_strategy == DP_MIG_MIXED)
                return dp_error_set(err, -EINVAL,
                                    "%s: sharing.mps: using --mig-strategy=mixed is not supported with MPS", c->source);
        if (!c->mps_root || !*c->mps_root)
                return dp_error_set(err, -EINVAL,
                                    "%s: sharing.mps: using MPS requires --mps-root to be specified (flags.mpsRoot, "
                                    "MPS_ROOT)",
                                    c->source);
        return 0;
}
