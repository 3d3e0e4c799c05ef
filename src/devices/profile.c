/* SPDX-License-Identifier: Apache-2.0
 * profile.c — DeviceProfile documents -> dp_device_set (the mock backend). */
#include <stdio.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "devices/builtin.h"
#include "devices/decode.h"
#include "devices/profile.h"
#include "doc/doc.h"

static int oom(const dp_decode_ctx *c) { return dp_error_set(c->err, -ENOMEM, "out of memory"); }

/* Expand "{index}", "{hex}" (two lowercase hex digits of index), "{mig}"
 * (MIG instance, -1 = not allowed) in a template. */
static int expand(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *tmpl, unsigned index,
                  int mig, char **ret) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        for (const char *p = tmpl; *p;) {
                if (*p != '{') {
                        dp_strbuf_putc(&sb, *p++);
                        continue;
                }
                if (startswith(p, "{index}")) {
                        dp_strbuf_printf(&sb, "%u", index);
                        p += 7;
                } else if (startswith(p, "{hex}")) {
                        dp_strbuf_printf(&sb, "%02x", index & 0xffu);
                        p += 5;
                } else if (mig >= 0 && startswith(p, "{mig}")) {
                        dp_strbuf_printf(&sb, "%d", mig);
                        p += 5;
                } else {
                        return dp_decode_fail(c, n, path, "unknown placeholder in \"%s\" (known: {index}, {hex}%s)",
                                              tmpl, mig >= 0 ? ", {mig}" : "");
                }
        }
        if (dp_strbuf_failed(&sb)) return oom(c);
        char *s = dp_strbuf_steal(&sb);
        if (!s) s = dp_strdup("");
        if (!s) return oom(c);
        *ret = s;
        return 0;
}

static int read_path_list(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, unsigned index, int mig,
                          char ***ret, size_t *ret_n) {
        if (n->type != DP_DOC_SEQ) return dp_decode_fail(c, n, path, "expected a list, got %s", dp_doc_type_name(n));
        if (n->n > DP_DEVICES_NODES_MAX)
                return dp_decode_fail_code(c, -E2BIG, n, path, "at most %d device nodes", DP_DEVICES_NODES_MAX);
        char **v = calloc(n->n + 1, sizeof(char *));
        if (!v) return oom(c);
        size_t k = 0;
        int r = 0;
        for (size_t i = 0; i < n->n; i++) {
                char p[256];
                dp_pathf(p, sizeof p, "%s[%zu]", path, i);
                const char *s;
                dp_error e = DP_ERROR_INIT;
                if (dp_doc_get_str(n->items[i], false, &s, &e) < 0) {
                        r = dp_decode_fail(c, n->items[i], p, "%s", e.msg);
                        break;
                }
                if (s[0] != '/' || strlen(s) > 4096) {
                        r = dp_decode_fail(c, n->items[i], p, "must be an absolute path");
                        break;
                }
                r = expand(c, n->items[i], p, s, index, mig, &v[k]);
                if (r < 0) break;
                k++;
        }
        if (r < 0) {
                for (size_t i = 0; i < k; i++)
                        free(v[i]);
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = k;
        return 0;
}

/* One `devices[]` entry (or `defaults`), merged over the defaults. Fields
 * are read twice at most (defaults, entry), the entry winning. */
typedef struct tmpl {
        const dp_doc_node *type, *product, *architecture, *driver_version, *memory, *numa, *pci, *nodes, *health,
                *attributes, *capacity, *mig;
        const char *path_of[12];
} tmpl;

static const char *const device_keys[] = {
        "count",    "type",        "product", "architecture", "driverVersion", "memory", "numaNode",
        "pciBusID", "deviceNodes", "health",  "attributes",   "capacity",      "mig",    NULL};

static void tmpl_take(tmpl *t, const dp_doc_node *m) {
        const dp_doc_node *v;
#define TAKE(field, key)                                                                                               \
        if ((v = dp_doc_get(m, key)) && !dp_doc_is_null(v)) t->field = v;
        TAKE(type, "type");
        TAKE(product, "product");
        TAKE(architecture, "architecture");
        TAKE(driver_version, "driverVersion");
        TAKE(memory, "memory");
        TAKE(numa, "numaNode");
        TAKE(pci, "pciBusID");
        TAKE(nodes, "deviceNodes");
        TAKE(health, "health");
        TAKE(attributes, "attributes");
        TAKE(capacity, "capacity");
        TAKE(mig, "mig");
#undef TAKE
}

static int opt_str(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *field, char **ret) {
        if (!n) return 0;
        char p[256];
        dp_pathf(p, sizeof p, "%s.%s", path, field);
        char *s;
        int r = dp_decode_str(c, n, p, true, &s);
        if (r < 0) return r;
        if (strlen(s) > 256) {
                free(s);
                return dp_decode_fail(c, n, p, "at most 256 characters");
        }
        *ret = s;
        return 0;
}

static int read_health(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_health *ret) {
        static const char *const words[] = {"healthy", "unhealthy", NULL};
        int k;
        int r = dp_decode_enum(c, n, path, words, &k);
        if (r < 0) return r;
        *ret = k == 0 ? DP_HEALTH_HEALTHY : DP_HEALTH_UNHEALTHY;
        return 0;
}

static int read_memory(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, uint64_t *ret) {
        const char *s;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_str(n, true, &s, &e) < 0) return dp_decode_fail(c, n, path, "%s", e.msg);
        if (dp_device_parse_bytes(s, ret) < 0)
                return dp_decode_fail(c, n, path,
                                      "must be a byte count like 81920Mi or 80Gi (suffix k M G T P Ki Mi Gi Ti Pi)");
        return 0;
}

/* 1..max characters: lower-case letters and digits (upper case too when
 * `upper`), and the characters of `inner` anywhere but first and last. */
static bool valid_name(const char *s, size_t max, bool upper, const char *inner) {
        size_t n = strlen(s);
        if (n == 0 || n > max) return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                bool ok = (ch >= 'a' && ch <= 'z') || (upper && ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                          (strchr(inner, ch) && i > 0 && i + 1 < n);
                if (!ok) return false;
        }
        return true;
}

/* An attribute or capacity name: a letter first. */
static bool valid_attr_name(const char *s) {
        return valid_name(s, 63, true, "-_") && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'));
}

static int read_attrs(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_hw_device *d) {
        if (n->type != DP_DOC_MAP) return dp_decode_fail(c, n, path, "expected a map, got %s", dp_doc_type_name(n));
        if (n->n > DP_DEVICES_ATTRS_MAX)
                return dp_decode_fail_code(c, -E2BIG, n, path, "at most %d attributes", DP_DEVICES_ATTRS_MAX);
        d->attrs = calloc(n->n ? n->n : 1, sizeof(dp_hw_attr));
        if (!d->attrs) return oom(c);
        for (size_t i = 0; i < n->n; i++) {
                char p[256];
                const char *key = n->pairs[i].key;
                const dp_doc_node *v = n->pairs[i].value;
                dp_pathf(p, sizeof p, "%s.%s", path, key);
                if (!valid_attr_name(key))
                        return dp_decode_fail(c, n->pairs[i].key_node, p,
                                              "attribute names are C identifiers with '-' allowed, at most 63 "
                                              "characters");
                dp_hw_attr *a = &d->attrs[d->n_attrs++]; /* counted now so a failure below frees it */
                a->name = dp_strdup(key);
                if (!a->name) return oom(c);
                if (v && v->type == DP_DOC_MAP) {
                        /* {version: "1.0.0"} */
                        static const char *const vk[] = {"version", NULL};
                        int r = dp_decode_check_map(c, v, p, vk);
                        if (r < 0) return r;
                        const dp_doc_node *vv = dp_doc_get(v, "version");
                        char p2[300];
                        dp_pathf(p2, sizeof p2, "%s.version", p);
                        if (!vv) return dp_decode_fail(c, v, p2, "required");
                        a->type = DP_HW_ATTR_VERSION;
                        r = dp_decode_str(c, vv, p2, true, &a->str);
                        if (r < 0) return r;
                } else if (!v || v->type != DP_DOC_SCALAR || dp_doc_kind(v) == DP_DOC_NULL ||
                           dp_doc_kind(v) == DP_DOC_FLOAT) {
                        return dp_decode_fail(c, v, p, "must be a string, integer, boolean or {version: x.y.z}");
                } else if (dp_doc_kind(v) == DP_DOC_INT) {
                        a->type = DP_HW_ATTR_INT;
                        int r = dp_decode_int(c, v, p, INT64_MIN, INT64_MAX, &a->i);
                        if (r < 0) return r;
                } else if (dp_doc_kind(v) == DP_DOC_BOOL) {
                        a->type = DP_HW_ATTR_BOOL;
                        int r = dp_decode_bool(c, v, p, &a->b);
                        if (r < 0) return r;
                } else {
                        a->type = DP_HW_ATTR_STRING;
                        int r = dp_decode_str(c, v, p, false, &a->str);
                        if (r < 0) return r;
                        if (strlen(a->str) > 64)
                                return dp_decode_fail(c, v, p, "string attributes are at most 64 bytes");
                }
        }
        return 0;
}

static int read_caps(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_hw_device *d) {
        if (n->type != DP_DOC_MAP) return dp_decode_fail(c, n, path, "expected a map, got %s", dp_doc_type_name(n));
        if (n->n + d->n_attrs > DP_DEVICES_ATTRS_MAX)
                return dp_decode_fail_code(c, -E2BIG, n, path, "at most %d attributes and capacities together",
                                           DP_DEVICES_ATTRS_MAX);
        d->capacities = calloc(n->n ? n->n : 1, sizeof(dp_capacity));
        if (!d->capacities) return oom(c);
        for (size_t i = 0; i < n->n; i++) {
                char p[256];
                const char *key = n->pairs[i].key;
                dp_pathf(p, sizeof p, "%s.%s", path, key);
                if (!valid_attr_name(key))
                        return dp_decode_fail(c, n->pairs[i].key_node, p, "capacity names are C identifiers");
                dp_capacity *cap = &d->capacities[d->n_capacities];
                int r = dp_decode_str(c, n->pairs[i].value, p, true, &cap->value);
                if (r < 0) return r;
                /* The full Kubernetes quantity grammar is checked where it is
                 * used (V2); here only its character set, so nothing odd gets in. */
                bool ok = cap->value[0] && strlen(cap->value) <= 64;
                for (const char *q = cap->value; *q && ok; q++)
                        ok = strchr("0123456789.+-eEinumkKMGTP", *q) != NULL;
                if (!ok) {
                        free(cap->value);
                        cap->value = NULL;
                        return dp_decode_fail(c, n->pairs[i].value, p, "must be a quantity such as 80Gi or 100");
                }
                cap->name = dp_strdup(key);
                if (!cap->name) {
                        free(cap->value);
                        cap->value = NULL;
                        return oom(c);
                }
                d->n_capacities++;
        }
        return 0;
}

/* "1g.10gb" -> 10 GiB; 0 when the profile does not say. */
static uint64_t mig_profile_memory(const char *profile) {
        const char *dot = strchr(profile, '.');
        if (!dot) return 0;
        uint64_t v = 0;
        const char *p = dot + 1;
        for (; *p >= '0' && *p <= '9' && v < 1000000; p++)
                v = v * 10 + (uint64_t)(*p - '0');
        return startswith(p, "gb") ? v << 30 : 0;
}

static int read_mig(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, dp_device_set *s, size_t pos) {
        static const char *const keys[] = {"instances", "deviceNodes", NULL};
        static const char *const ikeys[] = {"profile", "count", "memory", NULL};
        dp_hw_device *d = &s->devices[pos];
        int r = dp_decode_check_map(c, n, path, keys);
        if (r < 0) return r;
        const dp_doc_node *inst = dp_doc_get(n, "instances");
        const dp_doc_node *nodes = dp_doc_get(n, "deviceNodes");
        char p[256];
        dp_pathf(p, sizeof p, "%s.instances", path);
        if (!inst || inst->type != DP_DOC_SEQ)
                return dp_decode_fail(c, inst ? inst : n, p, "required: a list of {profile, count}");
        d->mig_enabled = true;
        d->migs = calloc(DP_DEVICES_MIG_MAX, sizeof(dp_mig_device));
        if (!d->migs) return oom(c);
        for (size_t i = 0; i < inst->n; i++) {
                char ip[300];
                dp_pathf(ip, sizeof ip, "%s[%zu]", p, i);
                const dp_doc_node *it = inst->items[i];
                r = dp_decode_check_map(c, it, ip, ikeys);
                if (r < 0) return r;
                char fp[320];
                dp_pathf(fp, sizeof fp, "%s.profile", ip);
                const dp_doc_node *pn = dp_doc_get(it, "profile");
                if (!pn) return dp_decode_fail(c, it, fp, "required");
                const char *prof;
                dp_error e = DP_ERROR_INIT;
                if (dp_doc_get_str(pn, false, &prof, &e) < 0) return dp_decode_fail(c, pn, fp, "%s", e.msg);
                if (!valid_name(prof, 32, false, ".-+"))
                        return dp_decode_fail(c, pn, fp,
                                              "must be a MIG profile name like 1g.10gb (lower case letters, digits, "
                                              "'.', '-', '+'; at most 32)");
                int64_t count = 1;
                const dp_doc_node *cn = dp_doc_get(it, "count");
                dp_pathf(fp, sizeof fp, "%s.count", ip);
                if (cn && (r = dp_decode_int(c, cn, fp, 1, DP_DEVICES_MIG_MAX, &count)) < 0) return r;
                uint64_t mem = mig_profile_memory(prof);
                const dp_doc_node *mn = dp_doc_get(it, "memory");
                dp_pathf(fp, sizeof fp, "%s.memory", ip);
                if (mn && (r = read_memory(c, mn, fp, &mem)) < 0) return r;
                for (int64_t k = 0; k < count; k++) {
                        if (d->n_migs >= DP_DEVICES_MIG_MAX)
                                return dp_decode_fail_code(c, -E2BIG, it, p, "at most %d MIG instances per GPU",
                                                           DP_DEVICES_MIG_MAX);
                        dp_mig_device *m = &d->migs[d->n_migs];
                        m->index = (unsigned)d->n_migs;
                        m->parent = pos;
                        m->memory_bytes = mem;
                        m->profile_health = m->health = DP_HEALTH_HEALTHY;
                        d->n_migs++;
                        m->profile = dp_strdup(prof);
                        m->id = dp_mig_id_new(d->id, prof, m->index);
                        char salt[320];
                        dp_pathf(salt, sizeof salt, "%s/%s/mig", s->profile, d->id);
                        m->uuid = dp_device_uuid_derive("MIG-", s->node_name, salt, m->index);
                        if (!m->profile || !m->id || !m->uuid) return oom(c);
                        if (strlen(m->id) > DP_DEVICES_ID_MAX)
                                return dp_decode_fail(c, pn, fp, "MIG device id %s is longer than %d characters", m->id,
                                                      DP_DEVICES_ID_MAX);
                        if (nodes) {
                                char np[300];
                                dp_pathf(np, sizeof np, "%s.deviceNodes", path);
                                r = read_path_list(c, nodes, np, d->index, (int)m->index, &m->device_nodes,
                                                   &m->n_device_nodes);
                                if (r < 0) return r;
                        }
                }
        }
        return 0;
}

static int fill_device(const dp_decode_ctx *c, const tmpl *t, const char *path, dp_device_set *s, size_t pos,
                       unsigned index, const char *uuid_prefix) {
        dp_hw_device *d = &s->devices[pos];
        int r;
        d->index = index;
        d->numa_node = -1;
        d->profile_health = d->health = DP_HEALTH_HEALTHY;
        if (t->type) {
                char p[256];
                dp_pathf(p, sizeof p, "%s.type", path);
                if ((r = dp_decode_str(c, t->type, p, false, &d->type)) < 0) return r;
                if (!dp_is_dns_label(d->type) || strlen(d->type) > 40)
                        return dp_decode_fail(c, t->type, p,
                                              "must be a DNS label (lower case, digits, '-') of at most 40 characters");
        } else if (!(d->type = dp_strdup("gpu")))
                return oom(c);
        d->id = dp_asprintf("%s-%u", d->type, index);
        if (!d->id) return oom(c);
        char salt[300];
        dp_pathf(salt, sizeof salt, "%s/%s", s->profile, d->type);
        d->uuid = dp_device_uuid_derive(uuid_prefix, s->node_name, salt, index);
        if (!d->uuid) return oom(c);
        if ((r = opt_str(c, t->product, path, "product", &d->product)) < 0) return r;
        if ((r = opt_str(c, t->architecture, path, "architecture", &d->architecture)) < 0) return r;
        if ((r = opt_str(c, t->driver_version, path, "driverVersion", &d->driver_version)) < 0) return r;
        char p[256];
        if (t->memory) {
                dp_pathf(p, sizeof p, "%s.memory", path);
                if ((r = read_memory(c, t->memory, p, &d->memory_bytes)) < 0) return r;
        }
        if (t->numa) {
                int64_t v;
                dp_pathf(p, sizeof p, "%s.numaNode", path);
                if ((r = dp_decode_int(c, t->numa, p, -1, 63, &v)) < 0) return r;
                d->numa_node = (int)v;
        }
        if (t->pci) {
                const char *tmplt;
                dp_error e = DP_ERROR_INIT;
                dp_pathf(p, sizeof p, "%s.pciBusID", path);
                if (dp_doc_get_str(t->pci, false, &tmplt, &e) < 0) return dp_decode_fail(c, t->pci, p, "%s", e.msg);
                if (strlen(tmplt) > 64) return dp_decode_fail(c, t->pci, p, "at most 64 characters");
                if ((r = expand(c, t->pci, p, tmplt, index, -1, &d->pci_bus_id)) < 0) return r;
        }
        if (t->nodes) {
                dp_pathf(p, sizeof p, "%s.deviceNodes", path);
                if ((r = read_path_list(c, t->nodes, p, index, -1, &d->device_nodes, &d->n_device_nodes)) < 0) return r;
        }
        if (t->health) {
                dp_pathf(p, sizeof p, "%s.health", path);
                if ((r = read_health(c, t->health, p, &d->profile_health)) < 0) return r;
                d->health = d->profile_health;
        }
        if (t->attributes) {
                dp_pathf(p, sizeof p, "%s.attributes", path);
                if ((r = read_attrs(c, t->attributes, p, d)) < 0) return r;
        }
        if (t->capacity) {
                dp_pathf(p, sizeof p, "%s.capacity", path);
                if ((r = read_caps(c, t->capacity, p, d)) < 0) return r;
        }
        if (t->mig) {
                dp_pathf(p, sizeof p, "%s.mig", path);
                if ((r = read_mig(c, t->mig, p, s, pos)) < 0) return r;
        }
        return 0;
}

static bool valid_env_name(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9')) return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
                        return false;
        }
        return true;
}

/* CDI kind "<vendor>/<class>" (wire-protocols §6.3 character rules). */
static bool valid_cdi_part(const char *s, size_t n) {
        if (n == 0 || n > 253) return false;
        if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
        for (size_t i = 1; i < n; i++) {
                char ch = s[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
                if (!alnum && !(i + 1 < n && (ch == '_' || ch == '.' || ch == '-'))) return false;
        }
        return true;
}

static bool valid_cdi_kind(const char *s) {
        const char *slash = strchr(s, '/');
        if (!slash || strchr(slash + 1, '/')) return false;
        return valid_cdi_part(s, (size_t)(slash - s)) && valid_cdi_part(slash + 1, strlen(slash + 1));
}

static int read_nvlink(const dp_decode_ctx *c, const dp_doc_node *n, dp_device_set *s) {
        const char *path = "spec.nvlink";
        if (n->type == DP_DOC_SCALAR && dp_doc_kind(n) == DP_DOC_STR && streq(n->str, "all")) {
                for (size_t i = 0; i < s->n_devices; i++)
                        for (size_t j = 0; j < s->n_devices; j++)
                                if (i != j) s->devices[i].nvlink[j / 64] |= 1ULL << (j % 64);
                return 0;
        }
        if (n->type != DP_DOC_SEQ)
                return dp_decode_fail(c, n, path, "must be \"all\" or a list of peer sets (lists of device positions)");
        for (size_t k = 0; k < n->n; k++) {
                char p[128];
                dp_pathf(p, sizeof p, "%s[%zu]", path, k);
                const dp_doc_node *set = n->items[k];
                if (set->type != DP_DOC_SEQ)
                        return dp_decode_fail(c, set, p, "a peer set is a list of device positions, got %s",
                                              dp_doc_type_name(set));
                uint64_t mask[2] = {0, 0};
                for (size_t i = 0; i < set->n; i++) {
                        char ip[160];
                        dp_pathf(ip, sizeof ip, "%s[%zu]", p, i);
                        int64_t v;
                        int r = dp_decode_int(c, set->items[i], ip, 0, s->n_devices ? (int64_t)s->n_devices - 1 : 0,
                                              &v);
                        if (r < 0) return r;
                        if (!s->n_devices) return dp_decode_fail(c, set->items[i], ip, "there are no devices");
                        mask[v / 64] |= 1ULL << (v % 64);
                }
                for (size_t i = 0; i < s->n_devices; i++) {
                        if (!((mask[i / 64] >> (i % 64)) & 1)) continue;
                        s->devices[i].nvlink[0] |= mask[0];
                        s->devices[i].nvlink[1] |= mask[1];
                        s->devices[i].nvlink[i / 64] &= ~(1ULL << (i % 64));
                }
        }
        return 0;
}

/* Compatibility group names are opaque to Kubernetes (1 to 63 characters);
 * profiles keep them to letters, digits, '.', '_' and '-'. */
static bool valid_group(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* spec.partitionModes: read after the devices, so each mode can be checked
 * against every GPU's memory. */
static int read_modes(const dp_decode_ctx *c, const dp_doc_node *n, dp_device_set *s) {
        static const char *const keys[] = {"name", "compatibilityGroups", "count", "whole", "memory", NULL};
        const char *path = "spec.partitionModes";
        if (n->type != DP_DOC_SEQ)
                return dp_decode_fail(c, n, path, "expected a list of partition modes, got %s", dp_doc_type_name(n));
        if (n->n == 0) return dp_decode_fail(c, n, path, "at least one partition mode (or leave the field out)");
        if (n->n > DP_DEVICES_MODES_MAX)
                return dp_decode_fail_code(c, -E2BIG, n, path, "at most %d partition modes", DP_DEVICES_MODES_MAX);
        if (s->partitions)
                return dp_decode_fail(c, n, path, "cannot be combined with spec.partitions (use one of the two)");
        for (size_t i = 0; i < s->n_devices; i++) {
                if (s->devices[i].mig_enabled)
                        return dp_decode_fail(c, n, path,
                                              "cannot be combined with devices[].mig (%s): describe MIG mode as a "
                                              "partition mode",
                                              s->devices[i].id);
                if (!s->devices[i].memory_bytes)
                        return dp_decode_fail(c, n, path, "every device needs memory (%s has none)", s->devices[i].id);
        }
        s->partition_modes = calloc(n->n, sizeof(dp_partition_mode));
        if (!s->partition_modes) return oom(c);
        bool have_whole = false;
        for (size_t k = 0; k < n->n; k++) {
                const dp_doc_node *it = n->items[k];
                char mp[64], fp[96];
                dp_pathf(mp, sizeof mp, "%s[%zu]", path, k);
                int r = dp_decode_check_map(c, it, mp, keys);
                if (r < 0) return r;
                dp_partition_mode *m = &s->partition_modes[s->n_partition_modes++];
                const dp_doc_node *v = dp_doc_get(it, "name");
                dp_pathf(fp, sizeof fp, "%s.name", mp);
                if (!v) return dp_decode_fail(c, it, fp, "required (for example mig)");
                if ((r = dp_decode_str(c, v, fp, false, &m->name)) < 0) return r;
                if (!dp_is_dns_label(m->name) || strlen(m->name) > 16)
                        return dp_decode_fail(c, v, fp, "must be a DNS label (lower case, digits, '-') of at most 16 "
                                                        "characters");
                for (size_t j = 0; j + 1 < s->n_partition_modes; j++)
                        if (streq(s->partition_modes[j].name, m->name))
                                return dp_decode_fail(c, v, fp, "mode %s is named twice", m->name);
                if ((v = dp_doc_get(it, "whole"))) {
                        dp_pathf(fp, sizeof fp, "%s.whole", mp);
                        if ((r = dp_decode_bool(c, v, fp, &m->whole)) < 0) return r;
                }
                if (m->whole && have_whole)
                        return dp_decode_fail(c, v, fp, "only one mode may publish the whole GPU");
                have_whole |= m->whole;
                v = dp_doc_get(it, "count");
                dp_pathf(fp, sizeof fp, "%s.count", mp);
                if (m->whole && v) return dp_decode_fail(c, v, fp, "not allowed with whole: true (one whole GPU)");
                if (!m->whole) {
                        int64_t cnt;
                        if (!v) return dp_decode_fail(c, it, fp, "required: partitions per GPU (1 to %d), or whole: true",
                                                      DP_DEVICES_MODE_PARTS_MAX);
                        if ((r = dp_decode_int(c, v, fp, 1, DP_DEVICES_MODE_PARTS_MAX, &cnt)) < 0) return r;
                        m->count = (unsigned)cnt;
                }
                if ((v = dp_doc_get(it, "memory"))) {
                        dp_pathf(fp, sizeof fp, "%s.memory", mp);
                        if (m->whole) return dp_decode_fail(c, v, fp, "not allowed with whole: true (all of it)");
                        if ((r = read_memory(c, v, fp, &m->memory_bytes)) < 0) return r;
                        if (!m->memory_bytes) return dp_decode_fail(c, v, fp, "must be more than 0");
                        for (size_t i = 0; i < s->n_devices; i++) {
                                const dp_hw_device *d = &s->devices[i];
                                if (m->memory_bytes > d->memory_bytes / m->count) {
                                        char a[32], b[32];
                                        dp_device_bytes_text(m->memory_bytes, a, sizeof a);
                                        dp_device_bytes_text(d->memory_bytes, b, sizeof b);
                                        return dp_decode_fail(c, v, fp, "%u x %s is more than the %s of %s", m->count,
                                                              a, b, d->id);
                                }
                        }
                }
                if ((v = dp_doc_get(it, "compatibilityGroups"))) {
                        dp_pathf(fp, sizeof fp, "%s.compatibilityGroups", mp);
                        if (v->type != DP_DOC_SEQ)
                                return dp_decode_fail(c, v, fp, "expected a list of group names, got %s",
                                                      dp_doc_type_name(v));
                        if (v->n > DP_DEVICES_GROUPS_MAX)
                                return dp_decode_fail(c, v, fp,
                                                      "at most %d compatibility groups per device (KEP-5963), got %zu",
                                                      DP_DEVICES_GROUPS_MAX, v->n);
                        for (size_t g = 0; g < v->n; g++) {
                                char gp[128];
                                dp_pathf(gp, sizeof gp, "%s[%zu]", fp, g);
                                if ((r = dp_decode_str(c, v->items[g], gp, false, &m->groups[g])) < 0) return r;
                                m->n_groups++;
                                if (!valid_group(m->groups[g]))
                                        return dp_decode_fail(c, v->items[g], gp,
                                                              "group names are 1 to 63 letters, digits, '.', '_' or "
                                                              "'-'");
                                if (g == 1 && streq(m->groups[0], m->groups[1]))
                                        return dp_decode_fail(c, v->items[g], gp, "group %s is named twice",
                                                              m->groups[g]);
                        }
                }
        }
        return 0;
}

static int check_unique_ids(const dp_decode_ctx *c, const dp_doc_node *at, const dp_device_set *s) {
        /* Ids are built from type, index and MIG profile, which can only
         * collide through an odd type name; check once, all against all. */
        size_t total = 0;
        for (size_t i = 0; i < s->n_devices; i++)
                total += 1 + s->devices[i].n_migs;
        const char **ids = calloc(total ? total : 1, sizeof(char *));
        if (!ids) return oom(c);
        size_t k = 0;
        for (size_t i = 0; i < s->n_devices; i++) {
                ids[k++] = s->devices[i].id;
                for (size_t j = 0; j < s->devices[i].n_migs; j++)
                        ids[k++] = s->devices[i].migs[j].id;
        }
        int r = 0;
        for (size_t i = 0; i < k && r == 0; i++)
                for (size_t j = i + 1; j < k; j++)
                        if (streq(ids[i], ids[j])) {
                                r = dp_decode_fail(c, at, "spec.devices", "device id %s is produced twice", ids[i]);
                                break;
                        }
        free(ids);
        return r;
}

static int read_devices(const dp_decode_ctx *c, const dp_doc_node *spec, dp_device_set *s, const char *uuid_prefix) {
        const dp_doc_node *list = dp_doc_get(spec, "devices");
        const dp_doc_node *defs = dp_doc_get(spec, "defaults");
        if (!list || list->type != DP_DOC_SEQ)
                return dp_decode_fail(c, list ? list : spec, "spec.devices", "required: a list of device entries");
        tmpl base = {0};
        if (defs) {
                static const char *const dkeys[] = {
                        "type",        "product", "architecture", "driverVersion", "memory", "numaNode", "pciBusID",
                        "deviceNodes", "health",  "attributes",   "capacity",      "mig",    NULL};
                int r = dp_decode_check_map(c, defs, "spec.defaults", dkeys);
                if (r < 0) return r;
                tmpl_take(&base, defs);
        }
        /* Count first, so the array is allocated once and positions stay put. */
        size_t total = 0;
        for (size_t i = 0; i < list->n; i++) {
                char p[64];
                dp_pathf(p, sizeof p, "spec.devices[%zu]", i);
                int r = dp_decode_check_map(c, list->items[i], p, device_keys);
                if (r < 0) return r;
                int64_t count = 1;
                const dp_doc_node *cn = dp_doc_get(list->items[i], "count");
                dp_pathf(p, sizeof p, "spec.devices[%zu].count", i);
                if (cn && (r = dp_decode_int(c, cn, p, 0, DP_DEVICES_MAX, &count)) < 0) return r;
                total += (size_t)count;
                if (total > DP_DEVICES_MAX)
                        return dp_decode_fail_code(c, -E2BIG, cn ? cn : list->items[i], p,
                                                   "a profile holds at most %d devices", DP_DEVICES_MAX);
        }
        s->devices = calloc(total ? total : 1, sizeof(dp_hw_device));
        if (!s->devices) return oom(c);
        /* Indexes count per type: gpu-0..gpu-7, then fpga-0.. */
        for (size_t i = 0; i < list->n; i++) {
                const dp_doc_node *e = list->items[i];
                tmpl t = base;
                tmpl_take(&t, e);
                int64_t count = 1;
                const dp_doc_node *cn = dp_doc_get(e, "count");
                if (cn) (void)dp_doc_get_int64(cn, &count, NULL);
                char p[64];
                dp_pathf(p, sizeof p, "spec.devices[%zu]", i);
                for (int64_t k = 0; k < count; k++) {
                        size_t pos = s->n_devices;
                        s->n_devices++;
                        /* the type decides the index: count earlier devices of the same type */
                        const char *type = "gpu";
                        if (t.type && t.type->type == DP_DOC_SCALAR && dp_doc_kind(t.type) == DP_DOC_STR)
                                type = t.type->str;
                        unsigned index = 0;
                        for (size_t q = 0; q < pos; q++)
                                index += streq(s->devices[q].type, type);
                        int r = fill_device(c, &t, p, s, pos, index, uuid_prefix);
                        if (r < 0) return r;
                }
        }
        return 0;
}

static int load_doc(const dp_decode_ctx *c0, const dp_doc_node *root, const char *node_name, dp_device_set **ret) {
        static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
        static const char *const meta[] = {"name", "annotations", "labels", NULL};
        static const char *const speck[] = {"domain",     "driverName",        "cdiKind",    "visibleDevicesEnv",
                                            "uuidPrefix", "commonDeviceNodes", "partitions", "nvlink",
                                            "defaults",   "devices",           "partitionModes", NULL};
        dp_decode_ctx cc = *c0, *c = &cc;
        int r = dp_decode_check_map(c, root, "", top);
        if (r < 0) return r;
        const dp_doc_node *av = dp_doc_get(root, "apiVersion"), *kind = dp_doc_get(root, "kind");
        const char *sv;
        if (!av || dp_doc_get_str(av, false, &sv, NULL) < 0 || !streq(sv, DP_PROFILE_API_VERSION))
                return dp_decode_fail(c, av ? av : root, "apiVersion", "must be %s", DP_PROFILE_API_VERSION);
        if (!kind || dp_doc_get_str(kind, false, &sv, NULL) < 0 || !streq(sv, DP_PROFILE_KIND))
                return dp_decode_fail(c, kind ? kind : root, "kind", "must be %s", DP_PROFILE_KIND);
        const dp_doc_node *md = dp_doc_get(root, "metadata");
        if (!md) return dp_decode_fail(c, root, "metadata.name", "required");
        if ((r = dp_decode_check_map(c, md, "metadata", meta)) < 0) return r;
        const dp_doc_node *nm = dp_doc_get(md, "name");
        if (!nm || dp_doc_get_str(nm, false, &sv, NULL) < 0 || !dp_is_dns_subdomain(sv))
                return dp_decode_fail(c, nm ? nm : md, "metadata.name", "required: a DNS subdomain name");
        cc.name = sv;

        _cleanup_(dp_device_set_freep) dp_device_set *s = calloc(1, sizeof(dp_device_set));
        if (!s) return oom(c);
        s->profile = dp_strdup(sv);
        s->node_name = dp_strdup(node_name);
        if (!s->profile || !s->node_name) return oom(c);

        const dp_doc_node *spec = dp_doc_get(root, "spec");
        if (!spec) return dp_decode_fail(c, root, "spec", "required");
        if ((r = dp_decode_check_map(c, spec, "spec", speck)) < 0) return r;

        const dp_doc_node *n = dp_doc_get(spec, "domain");
        if (!n) return dp_decode_fail(c, spec, "spec.domain", "required (for example nvidia.com)");
        if ((r = dp_decode_str(c, n, "spec.domain", false, &s->domain)) < 0) return r;
        if (!dp_is_dns_subdomain(s->domain) || strlen(s->domain) > 200 || strstr(s->domain, "kubernetes.io"))
                return dp_decode_fail(c, n, "spec.domain",
                                      "must be a DNS subdomain (lower case, at most 200 characters), not under "
                                      "kubernetes.io");
        if ((n = dp_doc_get(spec, "driverName"))) {
                if ((r = dp_decode_str(c, n, "spec.driverName", false, &s->driver_name)) < 0) return r;
                if (!dp_is_dns_subdomain(s->driver_name) || strlen(s->driver_name) > 63)
                        return dp_decode_fail(c, n, "spec.driverName",
                                              "must be a DNS subdomain of at most 63 characters");
        } else if (!(s->driver_name = dp_asprintf("gpu.%s", s->domain)))
                return oom(c);
        if ((n = dp_doc_get(spec, "cdiKind"))) {
                if ((r = dp_decode_str(c, n, "spec.cdiKind", false, &s->cdi_kind)) < 0) return r;
                if (!valid_cdi_kind(s->cdi_kind))
                        return dp_decode_fail(c, n, "spec.cdiKind", "must be a CDI kind <vendor>/<class>");
        } else if (!(s->cdi_kind = dp_asprintf("%s/gpu", s->domain)))
                return oom(c);
        if ((n = dp_doc_get(spec, "visibleDevicesEnv"))) {
                if ((r = dp_decode_str(c, n, "spec.visibleDevicesEnv", false, &s->visible_devices_env)) < 0) return r;
                if (!valid_env_name(s->visible_devices_env))
                        return dp_decode_fail(c, n, "spec.visibleDevicesEnv", "must be an environment variable name");
        } else if (!(s->visible_devices_env = dp_strdup("NVIDIA_VISIBLE_DEVICES")))
                return oom(c);
        _cleanup_free_ char *uuid_prefix = NULL;
        if ((n = dp_doc_get(spec, "uuidPrefix"))) {
                if ((r = dp_decode_str(c, n, "spec.uuidPrefix", false, &uuid_prefix)) < 0) return r;
                if (strlen(uuid_prefix) > 16 || strpbrk(uuid_prefix, " \t\n,;=/"))
                        return dp_decode_fail(c, n, "spec.uuidPrefix",
                                              "at most 16 characters, no blanks, ',', ';', '=' or '/'");
        } else if (!(uuid_prefix = dp_strdup("GPU-")))
                return oom(c);
        if ((n = dp_doc_get(spec, "commonDeviceNodes")) &&
            (r = read_path_list(c, n, "spec.commonDeviceNodes", 0, -1, &s->common_device_nodes,
                                &s->n_common_device_nodes)) < 0)
                return r;
        if ((n = dp_doc_get(spec, "partitions"))) {
                int64_t v;
                if ((r = dp_decode_int(c, n, "spec.partitions", 0, 64, &v)) < 0) return r;
                s->partitions = (unsigned)v;
        }
        if ((r = read_devices(c, spec, s, uuid_prefix)) < 0) return r;
        if ((n = dp_doc_get(spec, "nvlink")) && (r = read_nvlink(c, n, s)) < 0) return r;
        if ((r = check_unique_ids(c, spec, s)) < 0) return r;
        if ((n = dp_doc_get(spec, "partitionModes")) && !dp_doc_is_null(n) && (r = read_modes(c, n, s)) < 0) return r;
        *ret = TAKE_PTR(s);
        return 0;
}

static int check_node_name(const char *source, const char *node_name, dp_error *err) {
        if (!node_name || !*node_name || strlen(node_name) > 253)
                return dp_error_set(err, -EINVAL, "%s: node name must be 1 to 253 characters", source);
        return 0;
}

static int parse_one(const char *buf, size_t len, const char *source, dp_doc_set **ret, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(ds, buf ? buf : "", len, source, err);
        if (r < 0) return r;
        if (dp_doc_count(ds) != 1)
                return dp_error_set(err, -EINVAL, "%s: a profile file holds exactly one document, found %zu", source,
                                    dp_doc_count(ds));
        *ret = TAKE_PTR(ds);
        return 0;
}

int dp_profile_load(const char *buf, size_t len, const char *source, const char *node_name, dp_device_set **ret,
                    dp_error *err) {
        assert_return(buf || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (!source) source = "profile";
        int r = check_node_name(source, node_name, err);
        if (r < 0) return r;
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = NULL;
        if ((r = parse_one(buf, len, source, &ds, err)) < 0) return r;
        dp_decode_ctx c = {source, DP_PROFILE_KIND, NULL, err};
        return load_doc(&c, dp_doc_root(ds, 0), node_name, ret);
}

int dp_profile_load_file(const char *path, const char *node_name, dp_device_set **ret, dp_error *err) {
        assert_return(path && ret, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
        if (r < 0) return r;
        return dp_profile_load(buf, len, path, node_name, ret, err);
}

/* ---- a decoded profile for another node ---- */

static char **strv_copy(char *const *v, size_t n, bool *ok) {
        char **c = v ? dp_strv_copy_n(v, n) : NULL; /* NULL-terminated, as read_path_list makes them */
        if (v && !c) *ok = false;
        return c;
}

static char *str_copy(const char *v, bool *ok) {
        if (!v) return NULL;
        char *c = dp_strdup(v);
        if (!c) *ok = false;
        return c;
}

/* The uuid `t` was derived with, for `node_name`: the same prefix (a uuid is
 * the prefix and 36 characters), salt and index as fill_device and read_mig
 * use. */
static char *uuid_for(const char *t, const char *node_name, const char *salt, unsigned index, bool *ok) {
        size_t l = strlen(t);
        char prefix[64];
        dp_pathf(prefix, sizeof prefix, "%.*s", (int)(l > 36 ? l - 36 : 0), t);
        char *u = dp_device_uuid_derive(prefix, node_name, salt, index);
        if (!u) *ok = false;
        return u;
}

static void device_copy(const dp_device_set *ts, const dp_hw_device *t, dp_hw_device *d, const char *node_name,
                        bool *ok) {
        *d = *t; /* the numbers; every pointer below is the copy's own */
        d->id = str_copy(t->id, ok);
        d->type = str_copy(t->type, ok);
        char salt[300];
        dp_pathf(salt, sizeof salt, "%s/%s", ts->profile, t->type);
        d->uuid = uuid_for(t->uuid, node_name, salt, t->index, ok);
        d->product = str_copy(t->product, ok);
        d->architecture = str_copy(t->architecture, ok);
        d->driver_version = str_copy(t->driver_version, ok);
        d->pci_bus_id = str_copy(t->pci_bus_id, ok);
        d->device_nodes = strv_copy(t->device_nodes, t->n_device_nodes, ok);
        if (!d->device_nodes) d->n_device_nodes = 0;
        d->migs = NULL;
        d->n_migs = 0;
        if (t->migs && (d->migs = calloc(DP_DEVICES_MIG_MAX, sizeof(dp_mig_device))))
                for (; d->n_migs < t->n_migs; d->n_migs++) {
                        const dp_mig_device *tm = &t->migs[d->n_migs];
                        dp_mig_device *m = &d->migs[d->n_migs];
                        *m = *tm;
                        m->id = str_copy(tm->id, ok);
                        m->profile = str_copy(tm->profile, ok);
                        dp_pathf(salt, sizeof salt, "%s/%s/mig", ts->profile, t->id);
                        m->uuid = uuid_for(tm->uuid, node_name, salt, tm->index, ok);
                        m->device_nodes = strv_copy(tm->device_nodes, tm->n_device_nodes, ok);
                        if (!m->device_nodes) m->n_device_nodes = 0;
                }
        else if (t->migs)
                *ok = false;
        d->attrs = t->n_attrs ? calloc(t->n_attrs, sizeof(dp_hw_attr)) : NULL;
        d->n_attrs = 0;
        for (; d->attrs && d->n_attrs < t->n_attrs; d->n_attrs++) {
                d->attrs[d->n_attrs] = t->attrs[d->n_attrs];
                d->attrs[d->n_attrs].name = str_copy(t->attrs[d->n_attrs].name, ok);
                d->attrs[d->n_attrs].str = str_copy(t->attrs[d->n_attrs].str, ok);
        }
        d->capacities = t->n_capacities ? calloc(t->n_capacities, sizeof(dp_capacity)) : NULL;
        d->n_capacities = 0;
        for (; d->capacities && d->n_capacities < t->n_capacities; d->n_capacities++) {
                d->capacities[d->n_capacities].name = str_copy(t->capacities[d->n_capacities].name, ok);
                d->capacities[d->n_capacities].value = str_copy(t->capacities[d->n_capacities].value, ok);
        }
        if ((t->n_attrs && !d->attrs) || (t->n_capacities && !d->capacities)) *ok = false;
}

/* `t` instantiated for `node_name`: what dp_profile_load of its text gives. */
static int set_copy(const dp_device_set *t, const char *node_name, dp_device_set **ret, dp_error *err) {
        _cleanup_(dp_device_set_freep) dp_device_set *s = calloc(1, sizeof(dp_device_set));
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        bool ok = true;
        s->partitions = t->partitions;
        s->profile = str_copy(t->profile, &ok);
        s->node_name = str_copy(node_name, &ok);
        s->domain = str_copy(t->domain, &ok);
        s->driver_name = str_copy(t->driver_name, &ok);
        s->cdi_kind = str_copy(t->cdi_kind, &ok);
        s->visible_devices_env = str_copy(t->visible_devices_env, &ok);
        if ((s->common_device_nodes = strv_copy(t->common_device_nodes, t->n_common_device_nodes, &ok)))
                s->n_common_device_nodes = t->n_common_device_nodes;
        if (ok && !(s->devices = calloc(t->n_devices ? t->n_devices : 1, sizeof(dp_hw_device)))) ok = false;
        for (; ok && s->n_devices < t->n_devices; s->n_devices++)
                device_copy(t, &t->devices[s->n_devices], &s->devices[s->n_devices], node_name, &ok);
        if (ok && t->n_partition_modes &&
            !(s->partition_modes = calloc(t->n_partition_modes, sizeof(dp_partition_mode))))
                ok = false;
        for (; ok && s->n_partition_modes < t->n_partition_modes; s->n_partition_modes++) {
                const dp_partition_mode *tm = &t->partition_modes[s->n_partition_modes];
                dp_partition_mode *m = &s->partition_modes[s->n_partition_modes];
                *m = *tm;
                m->name = str_copy(tm->name, &ok);
                for (size_t g = 0; g < tm->n_groups; g++)
                        m->groups[g] = str_copy(tm->groups[g], &ok);
        }
        if (!ok) return dp_error_set(err, -ENOMEM, "out of memory");
        *ret = TAKE_PTR(s);
        return 0;
}

const char *const *dp_profile_builtin_names(void) { return dp_builtin_profile_names; }

const char *dp_profile_builtin_text(const char *name, size_t *ret_len) {
        for (size_t i = 0; name && dp_builtin_profile_names[i]; i++)
                if (streq(dp_builtin_profile_names[i], name)) {
                        if (ret_len) *ret_len = dp_builtin_profile_lens[i];
                        return dp_builtin_profile_texts[i];
                }
        return NULL;
}

int dp_profile_builtin(const char *name, const char *node_name, dp_device_set **ret, dp_error *err) {
        assert_return(name && ret, -EINVAL);
        size_t len;
        const char *text = dp_profile_builtin_text(name, &len);
        if (!text) {
                _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
                for (size_t i = 0; dp_builtin_profile_names[i]; i++)
                        dp_strbuf_printf(&sb, "%s%s", i ? ", " : "", dp_builtin_profile_names[i]);
                return dp_error_set(err, -ENOENT, "unknown built-in profile \"%.64s\" (built-in: %s)", name,
                                    dp_strbuf_str(&sb));
        }
        char source[128];
        dp_pathf(source, sizeof source, "built-in profile %s", name);
        int r = check_node_name(source, node_name, err);
        if (r < 0) return r;
        /* The built-in texts never change: each is decoded the first time it
         * is used and kept for the life of the process; later nodes get a
         * copy with their own uuids (a simulated cluster instantiates the same
         * profile for thousands of nodes: parsing and decoding it each time
         * was a fifth of `devplane simulate`'s time). Only a complete decode
         * is kept, so a failure (out of memory) is tried again next time; the
         * kept set is read, never changed. One thread, as everywhere here. */
        static dp_device_set *decoded[16];
        size_t i = 0;
        while (dp_builtin_profile_texts[i] != text)
                i++;
        if (i >= ELEMENTSOF(decoded)) return dp_profile_load(text, len, source, node_name, ret, err);
        if (!decoded[i] && (r = dp_profile_load(text, len, source, node_name, &decoded[i], err)) < 0) return r;
        return set_copy(decoded[i], node_name, ret, err);
}

int dp_profile_resolve(const char *name_or_path, const char *node_name, dp_device_set **ret, dp_error *err) {
        assert_return(name_or_path && ret, -EINVAL);
        if (dp_profile_builtin_text(name_or_path, NULL)) return dp_profile_builtin(name_or_path, node_name, ret, err);
        if (!strchr(name_or_path, '/') && !strchr(name_or_path, '.'))
                return dp_profile_builtin(name_or_path, node_name, ret, err);
        return dp_profile_load_file(name_or_path, node_name, ret, err);
}
