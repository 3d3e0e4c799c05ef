/* SPDX-License-Identifier: Apache-2.0
 * backend-config.c — the BackendConfig document: PCI and devglob selection
 * rules and the health fault table (format in backend.h, docs/backends.md). */
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "devices/backend.h"
#include "devices/decode.h"
#include "doc/doc.h"

dp_backend_config *dp_backend_config_free(dp_backend_config *c) {
        if (!c) return NULL;
        dp_free_many(c->domain, c->driver_name);
        for (size_t i = 0; i < c->n_pci; i++) {
                dp_free_many(c->pci[i].type, c->pci[i].class_prefix, c->pci[i].driver);
                dp_strv_free_n(c->pci[i].device_nodes, c->pci[i].n_device_nodes);
        }
        free(c->pci);
        for (size_t i = 0; i < c->n_devglob; i++) {
                free(c->devglob[i].type);
                dp_strv_free_n(c->devglob[i].paths, c->devglob[i].n_paths);
                free(c->devglob[i].usb);
        }
        free(c->devglob);
        free(c);
        return NULL;
}

dp_backend_config *dp_backend_config_new_default(void) {
        dp_backend_config *c = calloc(1, sizeof *c);
        if (!c) return NULL;
        dp_fault_table_init(&c->faults);
        return c;
}

static int oom(const dp_decode_ctx *c) { return dp_error_set(c->err, -ENOMEM, "out of memory"); }

static bool is_hex(const char *s) {
        if (!*s) return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))) return false;
        return true;
}

/* A 4-digit hex id ("8086", "0x8086"), as in sysfs vendor/device and USB idVendor. */
static int read_hex_id(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, int *ret) {
        _cleanup_free_ char *s = NULL;
        int r = dp_decode_str(c, n, path, true, &s);
        if (r < 0) return r;
        const char *p = s;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
        if (strlen(p) != 4 || !is_hex(p)) return dp_decode_fail(c, n, path, "must be 4 hex digits, e.g. \"10de\"");
        *ret = (int)strtol(p, NULL, 16);
        return 0;
}

static int read_strv(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, size_t max, bool absolute,
                     char ***ret, size_t *ret_n) {
        if (n->type != DP_DOC_SEQ) return dp_decode_fail(c, n, path, "expected a list, got %s", dp_doc_type_name(n));
        if (n->n > max) return dp_decode_fail_code(c, -E2BIG, n, path, "at most %zu entries", max);
        char **v = calloc(n->n ? n->n : 1, sizeof(char *));
        if (!v) return oom(c);
        *ret = v;
        for (size_t i = 0; i < n->n; i++) {
                char p[128];
                dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                int r = dp_decode_str(c, n->items[i], p, false, &v[i]);
                if (r < 0) return r;
                (*ret_n)++;
                if (absolute && (v[i][0] != '/' || strlen(v[i]) > 4095))
                        return dp_decode_fail(c, n->items[i], p, "must be an absolute path");
        }
        return 0;
}

static int read_type(const dp_decode_ctx *c, const dp_doc_node *m, const char *path, char **ret) {
        const dp_doc_node *n = dp_doc_get(m, "type");
        char p[128];
        dp_pathf(p, sizeof p, "%s.type", path);
        if (!n) return dp_decode_fail(c, m, p, "required (a DNS label, e.g. nic)");
        int r = dp_decode_str(c, n, p, false, ret);
        if (r < 0) return r;
        if (!dp_is_dns_label(*ret) || strlen(*ret) > 40)
                return dp_decode_fail(c, n, p, "must be a DNS label of at most 40 characters");
        return 0;
}

static int read_pci_rule(const dp_decode_ctx *c, const dp_doc_node *m, const char *path, dp_pci_rule *rule) {
        static const char *const keys[] = {"type", "vendor", "device", "class", "driver", "deviceNodes", NULL};
        int r = dp_decode_check_map(c, m, path, keys);
        if (r < 0) return r;
        rule->vendor = rule->device = -1;
        if ((r = read_type(c, m, path, &rule->type)) < 0) return r;
        char p[128];
        const dp_doc_node *n;
        if ((n = dp_doc_get(m, "vendor")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.vendor", path);
                if ((r = read_hex_id(c, n, p, &rule->vendor)) < 0) return r;
        }
        if ((n = dp_doc_get(m, "device")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.device", path);
                if ((r = read_hex_id(c, n, p, &rule->device)) < 0) return r;
        }
        if ((n = dp_doc_get(m, "class")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.class", path);
                if ((r = dp_decode_str(c, n, p, true, &rule->class_prefix)) < 0) return r;
                char *s = rule->class_prefix;
                if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) memmove(s, s + 2, strlen(s + 2) + 1);
                if (strlen(s) > 6 || !is_hex(s))
                        return dp_decode_fail(c, n, p, "must be 1 to 6 hex digits, e.g. \"0200\"");
                for (char *q = s; *q; q++)
                        if (*q >= 'A' && *q <= 'F') *q = (char)(*q - 'A' + 'a');
        }
        if ((n = dp_doc_get(m, "driver")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.driver", path);
                if ((r = dp_decode_str(c, n, p, false, &rule->driver)) < 0) return r;
                if (!*rule->driver || strchr(rule->driver, '/') || strlen(rule->driver) > 64)
                        return dp_decode_fail(c, n, p, "must be a driver name");
        }
        if ((n = dp_doc_get(m, "deviceNodes")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.deviceNodes", path);
                if ((r = read_strv(c, n, p, DP_DEVICES_NODES_MAX, true, &rule->device_nodes, &rule->n_device_nodes)) <
                    0)
                        return r;
        }
        return 0;
}

static int read_devglob_rule(const dp_decode_ctx *c, const dp_doc_node *m, const char *path, dp_devglob_rule *rule) {
        static const char *const keys[] = {"type", "paths", "usb", "count", NULL};
        int r = dp_decode_check_map(c, m, path, keys);
        if (r < 0) return r;
        rule->count = 1;
        if ((r = read_type(c, m, path, &rule->type)) < 0) return r;
        char p[128];
        const dp_doc_node *n;
        if ((n = dp_doc_get(m, "paths")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.paths", path);
                if ((r = read_strv(c, n, p, DP_BACKEND_PATTERNS_MAX, true, &rule->paths, &rule->n_paths)) < 0) return r;
        }
        if ((n = dp_doc_get(m, "usb")) && !dp_doc_is_null(n)) {
                dp_pathf(p, sizeof p, "%s.usb", path);
                if (n->type != DP_DOC_SEQ)
                        return dp_decode_fail(c, n, p, "expected a list, got %s", dp_doc_type_name(n));
                if (n->n > DP_BACKEND_PATTERNS_MAX)
                        return dp_decode_fail_code(c, -E2BIG, n, p, "at most %d entries", DP_BACKEND_PATTERNS_MAX);
                if (!(rule->usb = calloc(n->n ? n->n : 1, sizeof *rule->usb))) return oom(c);
                for (size_t i = 0; i < n->n; i++) {
                        static const char *const ukeys[] = {"vendor", "product", NULL};
                        char q[160];
                        dp_pathf(q, sizeof q, "%s[%zu]", p, i);
                        if ((r = dp_decode_check_map(c, n->items[i], q, ukeys)) < 0) return r;
                        dp_usb_match *u = &rule->usb[rule->n_usb++];
                        u->vendor = u->product = -1;
                        const dp_doc_node *v;
                        char f[192];
                        if ((v = dp_doc_get(n->items[i], "vendor")) && !dp_doc_is_null(v)) {
                                dp_pathf(f, sizeof f, "%s.vendor", q);
                                if ((r = read_hex_id(c, v, f, &u->vendor)) < 0) return r;
                        }
                        if ((v = dp_doc_get(n->items[i], "product")) && !dp_doc_is_null(v)) {
                                dp_pathf(f, sizeof f, "%s.product", q);
                                if ((r = read_hex_id(c, v, f, &u->product)) < 0) return r;
                        }
                        if (u->vendor < 0) return dp_decode_fail(c, n->items[i], q, "vendor is required");
                }
        }
        if (rule->n_paths == 0 && rule->n_usb == 0) return dp_decode_fail(c, m, path, "needs paths or usb matches");
        if ((n = dp_doc_get(m, "count")) && !dp_doc_is_null(n)) {
                int64_t v;
                dp_pathf(p, sizeof p, "%s.count", path);
                if ((r = dp_decode_int(c, n, p, 1, DP_BACKEND_SHARE_MAX, &v)) < 0) return r;
                rule->count = (unsigned)v;
        }
        return 0;
}

static int read_xid_list(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_fault_table *t,
                         bool ignore) {
        if (n->type != DP_DOC_SEQ)
                return dp_decode_fail(c, n, path, "expected a list of Xids, got %s", dp_doc_type_name(n));
        if (n->n > DP_FAULT_XID_MAX + 1) return dp_decode_fail_code(c, -E2BIG, n, path, "too many entries");
        for (size_t i = 0; i < n->n; i++) {
                char p[128];
                int64_t v;
                dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                int r = dp_decode_int(c, n->items[i], p, 0, DP_FAULT_XID_MAX, &v);
                if (r < 0) return r;
                (void)dp_fault_table_set_xid(t, (unsigned)v, ignore);
        }
        return 0;
}

static int read_health(const dp_decode_ctx *c, const dp_doc_node *m, dp_fault_table *t) {
        static const char *const keys[] = {"ignoreXids",
                                           "additionalIgnoreXids",
                                           "criticalXids",
                                           "eccSingleBit",
                                           "eccDoubleBit",
                                           "recoverAfterSeconds",
                                           "pollIntervalMilliseconds",
                                           NULL};
        static const char *const actions[] = {"ignore", "unhealthy", NULL};
        int r = dp_decode_check_map(c, m, "spec.health", keys);
        if (r < 0) return r;
        const dp_doc_node *n;
        if ((n = dp_doc_get(m, "ignoreXids")) && !dp_doc_is_null(n)) {
                memset(t->ignore_xid, 0, sizeof t->ignore_xid);
                if ((r = read_xid_list(c, n, "spec.health.ignoreXids", t, true)) < 0) return r;
        }
        if ((n = dp_doc_get(m, "additionalIgnoreXids")) && !dp_doc_is_null(n) &&
            (r = read_xid_list(c, n, "spec.health.additionalIgnoreXids", t, true)) < 0)
                return r;
        if ((n = dp_doc_get(m, "criticalXids")) && !dp_doc_is_null(n) &&
            (r = read_xid_list(c, n, "spec.health.criticalXids", t, false)) < 0)
                return r;
        int k;
        if ((n = dp_doc_get(m, "eccSingleBit")) && !dp_doc_is_null(n)) {
                if ((r = dp_decode_enum(c, n, "spec.health.eccSingleBit", actions, &k)) < 0) return r;
                t->ecc_sbe = (dp_fault_action)k;
        }
        if ((n = dp_doc_get(m, "eccDoubleBit")) && !dp_doc_is_null(n)) {
                if ((r = dp_decode_enum(c, n, "spec.health.eccDoubleBit", actions, &k)) < 0) return r;
                t->ecc_dbe = (dp_fault_action)k;
        }
        int64_t v;
        if ((n = dp_doc_get(m, "recoverAfterSeconds")) && !dp_doc_is_null(n)) {
                if ((r = dp_decode_int(c, n, "spec.health.recoverAfterSeconds", 0, 7 * 86400, &v)) < 0) return r;
                t->recover_after_usec = (uint64_t)v * 1000000ULL;
        }
        if ((n = dp_doc_get(m, "pollIntervalMilliseconds")) && !dp_doc_is_null(n)) {
                if ((r = dp_decode_int(c, n, "spec.health.pollIntervalMilliseconds", 10, 60000, &v)) < 0) return r;
                t->poll_interval_usec = (uint64_t)v * 1000ULL;
        }
        return 0;
}

static int read_rules(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, bool pci,
                      dp_backend_config *cfg) {
        if (n->type != DP_DOC_SEQ) return dp_decode_fail(c, n, path, "expected a list, got %s", dp_doc_type_name(n));
        if (n->n > DP_BACKEND_RULES_MAX)
                return dp_decode_fail_code(c, -E2BIG, n, path, "at most %d rules", DP_BACKEND_RULES_MAX);
        if (pci && !(cfg->pci = calloc(n->n ? n->n : 1, sizeof *cfg->pci))) return oom(c);
        if (!pci && !(cfg->devglob = calloc(n->n ? n->n : 1, sizeof *cfg->devglob))) return oom(c);
        for (size_t i = 0; i < n->n; i++) {
                char p[96];
                dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                int r = pci ? read_pci_rule(c, n->items[i], p, &cfg->pci[cfg->n_pci++])
                            : read_devglob_rule(c, n->items[i], p, &cfg->devglob[cfg->n_devglob++]);
                if (r < 0) return r;
        }
        return 0;
}

static int load_root(dp_decode_ctx *c, const dp_doc_node *root, dp_backend_config *cfg) {
        static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", NULL};
        static const char *const spec_keys[] = {"domain", "driverName", "health", "pci", "devglob", NULL};
        int r = dp_decode_check_map(c, root, "", keys);
        if (r < 0) return r;
        const dp_doc_node *v = dp_doc_get(root, "apiVersion");
        const char *s;
        if (!v || dp_doc_get_str(v, false, &s, NULL) < 0 || !streq(s, "devplane.io/v1alpha1"))
                return dp_decode_fail(c, v ? v : root, "apiVersion", "must be devplane.io/v1alpha1");
        v = dp_doc_get(root, "kind");
        if (!v || dp_doc_get_str(v, false, &s, NULL) < 0 || !streq(s, DP_BACKEND_CONFIG_KIND))
                return dp_decode_fail(c, v ? v : root, "kind", "must be BackendConfig");
        const dp_doc_node *md = dp_doc_get(root, "metadata");
        if (md && md->type == DP_DOC_MAP && (v = dp_doc_get(md, "name")) && dp_doc_get_str(v, false, &s, NULL) >= 0)
                c->name = s;
        const dp_doc_node *spec = dp_doc_get(root, "spec");
        if (!spec || dp_doc_is_null(spec)) return 0;
        if ((r = dp_decode_check_map(c, spec, "spec", spec_keys)) < 0) return r;
        if ((v = dp_doc_get(spec, "domain")) && !dp_doc_is_null(v)) {
                if ((r = dp_decode_str(c, v, "spec.domain", false, &cfg->domain)) < 0) return r;
                if (!dp_is_dns_subdomain(cfg->domain) || strlen(cfg->domain) > 200)
                        return dp_decode_fail(c, v, "spec.domain", "must be a DNS subdomain");
        }
        if ((v = dp_doc_get(spec, "driverName")) && !dp_doc_is_null(v)) {
                if ((r = dp_decode_str(c, v, "spec.driverName", false, &cfg->driver_name)) < 0) return r;
                if (!dp_is_dns_subdomain(cfg->driver_name) || strlen(cfg->driver_name) > 63)
                        return dp_decode_fail(c, v, "spec.driverName",
                                              "must be a DNS subdomain of at most 63 characters");
        }
        if ((v = dp_doc_get(spec, "health")) && !dp_doc_is_null(v) && (r = read_health(c, v, &cfg->faults)) < 0)
                return r;
        if ((v = dp_doc_get(spec, "pci")) && !dp_doc_is_null(v) && (r = read_rules(c, v, "spec.pci", true, cfg)) < 0)
                return r;
        if ((v = dp_doc_get(spec, "devglob")) && !dp_doc_is_null(v) &&
            (r = read_rules(c, v, "spec.devglob", false, cfg)) < 0)
                return r;
        return 0;
}

/* The one document of a parsed backend config into *ret. */
static int load_doc(const dp_doc_set *ds, const char *source, dp_backend_config **ret, dp_error *err) {
        if (dp_doc_count(ds) != 1)
                return dp_error_set(err, -EINVAL, "%s: a backend config holds exactly one document, found %zu", source,
                                    dp_doc_count(ds));
        _cleanup_(dp_backend_config_freep) dp_backend_config *cfg = dp_backend_config_new_default();
        if (!cfg) return dp_error_set(err, -ENOMEM, "out of memory");
        dp_decode_ctx c = {source, DP_BACKEND_CONFIG_KIND, NULL, err};
        int r = load_root(&c, dp_doc_root(ds, 0), cfg);
        if (r < 0) return r;
        *ret = TAKE_PTR(cfg);
        return 0;
}

int dp_backend_config_load(const char *buf, size_t len, const char *source, dp_backend_config **ret, dp_error *err) {
        assert_return(ret && (buf || len == 0), -EINVAL);
        if (!source) source = "backend config";
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(ds, buf ? buf : "", len, source, err);
        return r < 0 ? r : load_doc(ds, source, ret, err);
}

int dp_backend_config_load_file(const char *path, dp_backend_config **ret, dp_error *err) {
        assert_return(path && ret, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse_file(ds, path, err);
        return r < 0 ? r : load_doc(ds, path, ret, err);
}
