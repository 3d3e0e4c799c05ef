/* SPDX-License-Identifier: Apache-2.0
 * device.c — the device model: ownership, lookups, uuid derivation. */
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "devices/decode.h"
#include "devices/device.h"

const char *dp_health_to_string(dp_health h) { return h == DP_HEALTH_HEALTHY ? "Healthy" : "Unhealthy"; }

static void device_done(dp_hw_device *d) {
        dp_free_many(d->id, d->type, d->uuid, d->product, d->architecture, d->driver_version, d->pci_bus_id);
        dp_strv_free_n(d->device_nodes, d->n_device_nodes);
        for (size_t i = 0; i < d->n_migs; i++) {
                dp_mig_device *m = &d->migs[i];
                dp_free_many(m->id, m->uuid, m->profile);
                dp_strv_free_n(m->device_nodes, m->n_device_nodes);
        }
        free(d->migs);
        for (size_t i = 0; i < d->n_attrs; i++)
                dp_free_many(d->attrs[i].name, d->attrs[i].str);
        free(d->attrs);
        for (size_t i = 0; i < d->n_capacities; i++)
                dp_free_many(d->capacities[i].name, d->capacities[i].value);
        free(d->capacities);
}

dp_device_set *dp_device_set_free(dp_device_set *s) {
        if (!s) return NULL;
        dp_free_many(s->profile, s->node_name, s->domain, s->driver_name, s->cdi_kind, s->visible_devices_env);
        dp_strv_free_n(s->common_device_nodes, s->n_common_device_nodes);
        for (size_t i = 0; i < s->n_devices; i++)
                device_done(&s->devices[i]);
        free(s->devices);
        for (size_t i = 0; i < s->n_partition_modes; i++) {
                free(s->partition_modes[i].name);
                for (size_t g = 0; g < s->partition_modes[i].n_groups; g++)
                        free(s->partition_modes[i].groups[g]);
        }
        free(s->partition_modes);
        free(s);
        return NULL;
}

dp_hw_device *dp_device_set_find(const dp_device_set *s, const char *id) {
        if (!s || !id) return NULL;
        for (size_t i = 0; i < s->n_devices; i++)
                if (streq(s->devices[i].id, id) || streq_ptr(s->devices[i].uuid, id)) return &s->devices[i];
        return NULL;
}

dp_mig_device *dp_device_set_find_mig(const dp_device_set *s, const char *id) {
        if (!s || !id) return NULL;
        for (size_t i = 0; i < s->n_devices; i++)
                for (size_t j = 0; j < s->devices[i].n_migs; j++) {
                        dp_mig_device *m = &s->devices[i].migs[j];
                        if (dp_mig_named(s, m, id)) return m;
                }
        return NULL;
}

char *dp_mig_id_new(const char *parent_id, const char *profile, unsigned n) {
        if (!parent_id || !profile) return NULL;
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_printf(&sb, "%s-mig-", parent_id);
        for (const char *p = profile; *p; p++)
                if (*p != '.') dp_strbuf_putc(&sb, *p == '+' ? '-' : *p);
        dp_strbuf_printf(&sb, "-%u", n);
        if (dp_strbuf_failed(&sb)) return NULL;
        return dp_strbuf_steal(&sb);
}

bool dp_mig_named(const dp_device_set *s, const dp_mig_device *m, const char *name) {
        if (!m || !name) return false;
        if (streq_ptr(m->id, name) || streq_ptr(m->uuid, name)) return true;
        if (!s || m->parent >= s->n_devices || !m->profile) return false;
        /* the dotted form: "<parent id>-mig-<profile as written>-<n>" */
        const char *pid = s->devices[m->parent].id;
        size_t pl = pid ? strlen(pid) : 0, fl = strlen(m->profile);
        if (!pid || strncmp(name, pid, pl) != 0 || !startswith(name + pl, "-mig-")) return false;
        const char *p = name + pl + 5;
        if (strncmp(p, m->profile, fl) != 0 || p[fl] != '-') return false;
        char idx[16];
        snprintf(idx, sizeof idx, "%u", m->index);
        return streq(p + fl + 1, idx);
}

dp_health dp_mig_effective_health(const dp_device_set *s, const dp_mig_device *m) {
        if (m->health != DP_HEALTH_HEALTHY) return m->health;
        if (m->parent < s->n_devices) return s->devices[m->parent].health;
        return m->health;
}

bool dp_device_set_nvlinked(const dp_device_set *s, size_t i, size_t j) {
        if (!s || i >= s->n_devices || j >= s->n_devices || i >= 128 || j >= 128 || i == j) return false;
        return (s->devices[i].nvlink[j / 64] >> (j % 64)) & 1;
}

size_t dp_device_set_count_mig_enabled(const dp_device_set *s) {
        size_t n = 0;
        for (size_t i = 0; s && i < s->n_devices; i++)
                n += s->devices[i].mig_enabled;
        return n;
}

static uint64_t fnv1a64(uint64_t h, const char *s) {
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 0x100000001b3ULL;
        }
        return h;
}

char *dp_device_uuid_derive(const char *prefix, const char *node_name, const char *salt, unsigned index) {
        char key[512];
        dp_pathf(key, sizeof key, "%s/%s/%u", node_name ? node_name : "", salt ? salt : "", index);
        uint64_t a = fnv1a64(0xcbf29ce484222325ULL, key);
        uint64_t b = fnv1a64(a ^ 0x9e3779b97f4a7c15ULL, key);
        /* Version 4 / variant 1 bits, so the text looks like any other uuid. */
        uint16_t ver = (uint16_t)(((a >> 16) & 0x0fff) | 0x4000);
        uint16_t var = (uint16_t)(((b >> 48) & 0x3fff) | 0x8000);
        return dp_asprintf("%s%08x-%04x-%04x-%04x-%012llx", prefix ? prefix : "", (unsigned)(a >> 32),
                           (unsigned)(a & 0xffff), ver, var, (unsigned long long)(b & 0xffffffffffffULL));
}

void dp_device_bytes_text(uint64_t bytes, char *buf, size_t size) {
        static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
        unsigned k = 0;
        while (k + 1 < ELEMENTSOF(suffix) && bytes && bytes % 1024 == 0) {
                bytes /= 1024;
                k++;
        }
        snprintf(buf, size, "%llu%s", (unsigned long long)bytes, suffix[k]);
}

int dp_device_parse_bytes(const char *s, uint64_t *ret) {
        if (!s || !*s) return -EINVAL;
        uint64_t v = 0;
        const char *p = s;
        if (*p < '0' || *p > '9') return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (v > (UINT64_MAX - 9) / 10) return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        static const struct {
                const char *suffix;
                uint64_t mult;
        } units[] = {
                {"", 1},
                {"k", 1000ULL},
                {"M", 1000000ULL},
                {"G", 1000000000ULL},
                {"T", 1000000000000ULL},
                {"P", 1000000000000000ULL},
                {"Ki", 1ULL << 10},
                {"Mi", 1ULL << 20},
                {"Gi", 1ULL << 30},
                {"Ti", 1ULL << 40},
                {"Pi", 1ULL << 50},
        };
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (!streq(p, units[i].suffix)) continue;
                uint64_t r;
                if (__builtin_mul_overflow(v, units[i].mult, &r)) return -ERANGE;
                *ret = r;
                return 0;
        }
        return -EINVAL;
}
