/* SPDX-License-Identifier: Apache-2.0
 * backend-pci.c — PCI devices from sysfs (each <sysfs-root>/bus/pci/devices entry),
 * selected by the BackendConfig's pci rules (first match wins). Each match
 * becomes one device <type>-<n> (n counted per type, in PCI address order)
 * with the vendor, device, class, NUMA node, IOMMU group and bound driver
 * read from sysfs, and the rule's device nodes with {iommuGroup},
 * {address} and {index} filled in. Health: PCI has no event source here;
 * devices are healthy unless recovered/faulted explicitly. */
#include <dirent.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "devices/backend-internal.h"
#include "devices/decode.h"

typedef struct pci_dev {
        char address[64];
        int vendor, device;
        char class_code[16]; /* 6 hex digits, lower case */
        int numa_node;
        int iommu_group;  /* -1: none */
        char driver[128]; /* "none" when unbound */
} pci_dev;

static int read_hex(const char *dir, const char *name, int *ret) {
        char path[4200], buf[64];
        dp_pathf(path, sizeof path, "%s/%s", dir, name);
        int r = dp_backend_read_line(path, buf, sizeof buf);
        if (r < 0) return r;
        char *end;
        long v = strtol(buf, &end, 16);
        if (end == buf || *end || v < 0 || v > 0xffffff) return -EINVAL;
        *ret = (int)v;
        return 0;
}

static void link_base(const char *dir, const char *name, char *buf, size_t size) {
        char path[4200], target[4096];
        dp_pathf(path, sizeof path, "%s/%s", dir, name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        buf[0] = 0;
        if (n <= 0) return;
        target[n] = 0;
        const char *base = strrchr(target, '/');
        dp_pathf(buf, size, "%s", base ? base + 1 : target);
}

static int read_dev(const char *dir, const char *address, pci_dev *p) {
        memset(p, 0, sizeof *p);
        dp_pathf(p->address, sizeof p->address, "%s", address);
        int cls, r;
        if ((r = read_hex(dir, "vendor", &p->vendor)) < 0) return r;
        if ((r = read_hex(dir, "device", &p->device)) < 0) return r;
        if ((r = read_hex(dir, "class", &cls)) < 0) return r;
        dp_pathf(p->class_code, sizeof p->class_code, "%06x", (unsigned)cls);
        char path[4200], buf[32];
        dp_pathf(path, sizeof path, "%s/numa_node", dir);
        p->numa_node = -1;
        if (dp_backend_read_line(path, buf, sizeof buf) > 0) {
                long v = strtol(buf, NULL, 10);
                if (v >= 0 && v <= 63) p->numa_node = (int)v;
        }
        char g[64];
        link_base(dir, "iommu_group", g, sizeof g);
        p->iommu_group = g[0] ? (int)strtol(g, NULL, 10) : -1;
        link_base(dir, "driver", p->driver, sizeof p->driver);
        if (!p->driver[0]) dp_pathf(p->driver, sizeof p->driver, "none");
        return 0;
}

static bool rule_matches(const dp_pci_rule *r, const pci_dev *p) {
        if (r->vendor >= 0 && r->vendor != p->vendor) return false;
        if (r->device >= 0 && r->device != p->device) return false;
        if (r->class_prefix && !startswith(p->class_code, r->class_prefix)) return false;
        if (r->driver && !streq(r->driver, p->driver)) return false;
        return true;
}

/* Expand {iommuGroup} {address} {index} (callers skip devices without a group
 * when a template needs one: -ENOENT). */
static int expand(const char *tmpl, const pci_dev *p, unsigned index, char **ret) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        for (const char *s = tmpl; *s;) {
                if (startswith(s, "{iommuGroup}")) {
                        if (p->iommu_group < 0) return -ENOENT;
                        dp_strbuf_printf(&sb, "%d", p->iommu_group);
                        s += 12;
                } else if (startswith(s, "{address}")) {
                        dp_strbuf_puts(&sb, p->address);
                        s += 9;
                } else if (startswith(s, "{index}")) {
                        dp_strbuf_printf(&sb, "%u", index);
                        s += 7;
                } else
                        dp_strbuf_putc(&sb, *s++);
        }
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        *ret = dp_strbuf_steal(&sb);
        return *ret ? 0 : -ENOMEM;
}

static bool needs_group(const dp_pci_rule *r) {
        for (size_t k = 0; k < r->n_device_nodes; k++)
                if (strstr(r->device_nodes[k], "{iommuGroup}")) return true;
        return false;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int fill(dp_hw_device *d, const dp_backend *b, const dp_pci_rule *rule, const pci_dev *p, unsigned index) {
        char buf[64];
        d->index = index;
        d->numa_node = p->numa_node;
        if (!(d->type = dp_strdup(rule->type))) return -ENOMEM;
        if (!(d->id = dp_asprintf("%s-%u", rule->type, index))) return -ENOMEM;
        char salt[128];
        dp_pathf(salt, sizeof salt, "pci/%s", p->address);
        if (!(d->uuid = dp_device_uuid_derive("PCI-", b->node_name, salt, 0))) return -ENOMEM;
        if (!(d->pci_bus_id = dp_strdup(p->address))) return -ENOMEM;
        if (!(d->product = dp_asprintf("%04x:%04x", (unsigned)p->vendor, (unsigned)p->device))) return -ENOMEM;
        int r;
        dp_pathf(buf, sizeof buf, "%04x", (unsigned)p->vendor);
        if ((r = dp_backend_attr_str(d, "vendorID", DP_HW_ATTR_STRING, buf)) < 0) return r;
        dp_pathf(buf, sizeof buf, "%04x", (unsigned)p->device);
        if ((r = dp_backend_attr_str(d, "deviceID", DP_HW_ATTR_STRING, buf)) < 0) return r;
        if ((r = dp_backend_attr_str(d, "class", DP_HW_ATTR_STRING, p->class_code)) < 0) return r;
        if ((r = dp_backend_attr_str(d, "driver", DP_HW_ATTR_STRING, p->driver)) < 0) return r;
        if (p->iommu_group >= 0 && (r = dp_backend_attr_int(d, "iommuGroup", p->iommu_group)) < 0) return r;
        for (size_t k = 0; k < rule->n_device_nodes; k++) {
                _cleanup_free_ char *node = NULL;
                if ((r = expand(rule->device_nodes[k], p, index, &node)) < 0) return r;
                if ((r = dp_backend_strv_add(&d->device_nodes, &d->n_device_nodes, node)) < 0) return r;
        }
        return 0;
}

static int pci_discover(dp_backend *b, dp_device_set **ret, dp_error *err) {
        _cleanup_free_ char *root = dp_backend_sysfs_path(b, "bus/pci/devices");
        _cleanup_(dp_device_set_freep) dp_device_set *s =
                dp_backend_set_new(b, "pci", "devplane.io", "pci", "pci", "DEVPLANE_VISIBLE_DEVICES");
        if (!root || !s) return dp_error_set(err, -ENOMEM, "out of memory");
        DIR *dir = opendir(root);
        if (!dir) return dp_error_errno(err, -errno, "pci backend: cannot read %s", root);
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.') continue;
                if (n >= 65536) break; /* a PCI hierarchy holds at most 65536 functions per domain */
                if (DP_GROW(names, cap, n + 1) < 0 || !(names[n] = dp_strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(dir);
        if (n) qsort(names, n, sizeof *names, cmp_str);
        unsigned counts[DP_BACKEND_RULES_MAX] = {0};
        size_t dcap = 0;
        bool vfio = false;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *path = dp_asprintf("%s/%s", root, names[i]);
                pci_dev p;
                if (!path)
                        r = -ENOMEM;
                else if (read_dev(path, names[i], &p) < 0)
                        continue; /* not a readable PCI function */
                for (size_t k = 0; r >= 0 && k < b->cfg->n_pci; k++) {
                        const dp_pci_rule *rule = &b->cfg->pci[k];
                        if (!rule_matches(rule, &p)) continue;
                        /* A device without the IOMMU group its nodes need cannot be handed out. */
                        if (p.iommu_group < 0 && needs_group(rule)) continue;
                        /* Ids are counted per type (two rules may share one). */
                        unsigned index = 0;
                        for (size_t j = 0; j < b->cfg->n_pci; j++)
                                if (streq(b->cfg->pci[j].type, rule->type)) index += counts[j];
                        dp_hw_device *d = dp_backend_set_add(s, &dcap, &r);
                        if (!d) break;
                        int fr = fill(d, b, rule, &p, index);
                        if (fr < 0) r = fr;
                        counts[k]++;
                        for (size_t q = 0; q < d->n_device_nodes; q++)
                                vfio = vfio || startswith(d->device_nodes[q], "/dev/vfio/");
                        break;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        if (r == -E2BIG) return dp_error_set(err, r, "pci backend: more than %d matching devices", DP_DEVICES_MAX);
        if (r < 0) return dp_error_set(err, r, "pci backend: %s", strerror(-r));
        if (vfio && dp_backend_strv_add(&s->common_device_nodes, &s->n_common_device_nodes, "/dev/vfio/vfio") < 0)
                return dp_error_set(err, -ENOMEM, "out of memory");
        *ret = TAKE_PTR(s);
        return 0;
}

static int pci_open(dp_backend *b, dp_error *err) {
        if (b->cfg->n_pci == 0)
                return dp_error_set(err, -EINVAL, "pci backend: the backend config has no spec.pci rules");
        return 0;
}

const dp_backend_ops dp_backend_pci_ops = {
        .open = pci_open,
        .discover = pci_discover,
};
