/* SPDX-License-Identifier: Apache-2.0
 * inventory.c — device model -> DRA inventory (the only dra file that sees
 * devices/device.h). Attribute shapes: docs/dra-driver.md. */
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "devices/device.h"
#include "devices/profile.h"
#include "dra/inventory.h"
#include "model/quantity.h"

#define NAME_MAX_LEN 63

static void quantities_free(dp_dra_quantity *q, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(q[i].name, q[i].value);
        free(q);
}

static void device_done(dp_dra_device *d) {
        dp_free_many(d->name, d->model_id, d->uuid);
        for (size_t i = 0; i < d->n_attrs; i++)
                dp_free_many(d->attrs[i].name, d->attrs[i].s);
        free(d->attrs);
        quantities_free(d->capacity, d->n_capacity);
        for (size_t i = 0; i < d->n_consumes; i++) {
                free(d->consumes[i].counter_set);
                quantities_free(d->consumes[i].counters, d->consumes[i].n_counters);
                dp_strv_free_n(d->consumes[i].groups, d->consumes[i].n_groups);
        }
        free(d->consumes);
        dp_strv_free_n(d->device_nodes, d->n_device_nodes);
        free(d->fault_class);
}

dp_dra_inventory *dp_dra_inventory_free(dp_dra_inventory *inv) {
        if (!inv) return NULL;
        dp_free_many(inv->node_name, inv->driver, inv->pool, inv->cdi_kind);
        dp_strv_free_n(inv->common_device_nodes, inv->n_common_device_nodes);
        for (size_t i = 0; i < inv->n_counter_sets; i++) {
                free(inv->counter_sets[i].name);
                quantities_free(inv->counter_sets[i].counters, inv->counter_sets[i].n_counters);
        }
        free(inv->counter_sets);
        for (size_t i = 0; i < inv->n_devices; i++)
                device_done(&inv->devices[i]);
        free(inv->devices);
        free(inv);
        return NULL;
}

const dp_dra_device *dp_dra_inventory_find(const dp_dra_inventory *inv, const char *name) {
        if (!inv || !name) return NULL;
        for (size_t i = 0; i < inv->n_devices; i++)
                if (streq(inv->devices[i].name, name)) return &inv->devices[i];
        return NULL;
}

const dp_dra_attr *dp_dra_device_attr(const dp_dra_device *d, const char *name) {
        if (!d || !name) return NULL;
        for (size_t i = 0; i < d->n_attrs; i++)
                if (streq(d->attrs[i].name, name)) return &d->attrs[i];
        return NULL;
}

/* ---- building, with a sticky error ---- */

typedef struct builder {
        const dp_device_set *set;
        const dp_dra_inventory_options *o;
        dp_dra_inventory *inv;
        size_t cap_devices, cap_sets;
        bool nvidia;
        unsigned partitions;
        int r;
        dp_error *err;
} builder;

static int oom(builder *b) {
        if (b->r >= 0) b->r = dp_error_set(b->err, -ENOMEM, "out of memory");
        return b->r;
}

static char *sdup(builder *b, const char *s) {
        if (b->r < 0) return NULL;
        char *c = dp_strdup(s);
        if (!c) oom(b);
        return c;
}

/* One more element at the end of the array *v (n in use), zeroed; NULL
 * when the builder failed (now or before). The caller counts it in. */
static void *grow_one(builder *b, void **v, size_t n, size_t size) {
        if (b->r < 0) return NULL;
        char *p = realloc(*v, (n + 1) * size);
        if (!p) return oom(b), NULL;
        *v = p;
        return memset(p + n * size, 0, size);
}
#define GROW_ONE(b, arr, n) grow_one((b), (void **)&(arr), (n), sizeof(*(arr)))

static dp_dra_attr *attr_new(builder *b, dp_dra_device *d, const char *name) {
        for (size_t i = 0; b->r >= 0 && i < d->n_attrs; i++)
                if (streq(d->attrs[i].name, name)) return NULL; /* first writer wins */
        dp_dra_attr *a = GROW_ONE(b, d->attrs, d->n_attrs);
        if (!a || !(a->name = sdup(b, name))) return NULL;
        d->n_attrs++;
        return a;
}

static void attr_str(builder *b, dp_dra_device *d, const char *name, dp_dra_value_type t, const char *v) {
        if (!v) return;
        dp_dra_attr *a = attr_new(b, d, name);
        if (!a) return;
        a->type = t;
        a->s = sdup(b, v);
}

static void attr_int(builder *b, dp_dra_device *d, const char *name, int64_t v) {
        dp_dra_attr *a = attr_new(b, d, name);
        if (!a) return;
        a->type = DP_DRA_VAL_INT;
        a->i = v;
}

static void attr_bool(builder *b, dp_dra_device *d, const char *name, bool v) {
        dp_dra_attr *a = attr_new(b, d, name);
        if (!a) return;
        a->type = DP_DRA_VAL_BOOL;
        a->b = v;
}

/* The profile's own attributes, in file order. */
static void attrs_from_model(builder *b, dp_dra_device *d, const dp_hw_attr *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                switch (v[i].type) {
                case DP_HW_ATTR_STRING: attr_str(b, d, v[i].name, DP_DRA_VAL_STRING, v[i].str); break;
                case DP_HW_ATTR_VERSION: attr_str(b, d, v[i].name, DP_DRA_VAL_VERSION, v[i].str); break;
                case DP_HW_ATTR_INT: attr_int(b, d, v[i].name, v[i].i); break;
                case DP_HW_ATTR_BOOL: attr_bool(b, d, v[i].name, v[i].b); break;
                }
        }
}

static void qty_add(builder *b, dp_dra_quantity **v, size_t *n, const char *name, const char *value) {
        for (size_t i = 0; b->r >= 0 && i < *n; i++)
                if (streq((*v)[i].name, name)) return;
        dp_dra_quantity *q = GROW_ONE(b, *v, *n);
        if (!q) return;
        q->name = sdup(b, name);
        q->value = sdup(b, value);
        if (!q->name || !q->value) {
                dp_free_many(q->name, q->value);
                return;
        }
        (*n)++;
}

/* value / parts, rounded down to whole units; NULL-free text into buf. */
static int qty_divide(builder *b, const char *value, unsigned parts, char *buf, size_t size) {
        dp_quantity q;
        dp_error e = DP_ERROR_INIT;
        if (dp_quantity_parse(value, &q, &e) < 0)
                return b->r = dp_error_set(b->err, -EINVAL, "capacity %s: %s", value, e.msg);
        __int128 unit = 1000000000;
        q.nanos /= parts;
        q.nanos -= q.nanos % unit;
        dp_quantity_format(&q, buf, size);
        return 0;
}

static dp_dra_device *device_new(builder *b, const char *name, dp_dra_kind kind, size_t physical, int unit) {
        if (b->r < 0) return NULL;
        if (strlen(name) > NAME_MAX_LEN) {
                b->r = dp_error_set(b->err, -EINVAL, "device name %s: longer than %d characters", name, NAME_MAX_LEN);
                return NULL;
        }
        if (b->inv->n_devices >= DP_DRA_MAX_DEVICES) {
                b->r = dp_error_set(b->err, -E2BIG, "more than %d devices (DP_DRA_MAX_DEVICES)", DP_DRA_MAX_DEVICES);
                return NULL;
        }
        if (DP_GROW(b->inv->devices, b->cap_devices, b->inv->n_devices + 1) < 0) return oom(b), NULL;
        dp_dra_device *d = &b->inv->devices[b->inv->n_devices];
        memset(d, 0, sizeof(*d));
        if (!(d->name = sdup(b, name))) return NULL;
        b->inv->n_devices++;
        d->kind = kind;
        d->physical = physical;
        d->unit = unit;
        d->healthy = true;
        return d;
}

static void nodes_add(builder *b, dp_dra_device *d, char *const *v, size_t n) {
        for (size_t i = 0; b->r >= 0 && i < n; i++) {
                char **slot = GROW_ONE(b, d->device_nodes, d->n_device_nodes);
                if (slot && (*slot = sdup(b, v[i]))) d->n_device_nodes++;
        }
}

/* The fault class the options name for a device (by model id or UUID), or NULL. */
static const char *fault_of(const builder *b, const char *model_id, const char *uuid) {
        const char *cls = NULL;
        for (size_t i = 0; i < b->o->n_faults; i++)
                if (streq_ptr(b->o->faults[i].device, model_id) || streq_ptr(b->o->faults[i].device, uuid))
                        cls = b->o->faults[i].fault_class;
        return cls;
}

/* The fault class of an unhealthy device: its own fault's, else (a MIG
 * instance down because its GPU is: parent_id/parent_uuid) the GPU's, else
 * "unhealthy". */
static void set_health(builder *b, dp_dra_device *d, bool healthy, const char *model_id, const char *uuid,
                       const char *parent_id, const char *parent_uuid) {
        d->healthy = healthy;
        if (healthy) return;
        const char *cls = fault_of(b, model_id, uuid);
        if (!cls && (parent_id || parent_uuid)) cls = fault_of(b, parent_id, parent_uuid);
        d->fault_class = sdup(b, cls ? cls : "unhealthy");
}

static dp_dra_counter_set *counter_set_new(builder *b, const char *name) {
        if (b->r < 0) return NULL;
        if (DP_GROW(b->inv->counter_sets, b->cap_sets, b->inv->n_counter_sets + 1) < 0) return oom(b), NULL;
        dp_dra_counter_set *cs = &b->inv->counter_sets[b->inv->n_counter_sets];
        memset(cs, 0, sizeof(*cs));
        if (!(cs->name = sdup(b, name))) return NULL;
        b->inv->n_counter_sets++;
        return cs;
}

static dp_dra_consumption *consume_new(builder *b, dp_dra_device *d, const char *set, const char *const *groups,
                                       size_t n_groups) {
        dp_dra_consumption *c = GROW_ONE(b, d->consumes, d->n_consumes);
        if (!c || !(c->counter_set = sdup(b, set))) return NULL;
        d->n_consumes++;
        if (n_groups) {
                if (!(c->groups = calloc(n_groups, sizeof(char *)))) return oom(b), NULL;
                for (size_t i = 0; i < n_groups; i++)
                        if ((c->groups[i] = sdup(b, groups[i]))) c->n_groups++;
        }
        return c;
}

/* NVIDIA-style placement attributes shared by a GPU and its sub-devices. */
static void attrs_placement(builder *b, dp_dra_device *d, const dp_hw_device *g) {
        if (!b->nvidia) return;
        if (g->pci_bus_id) {
                attr_str(b, d, "resource.kubernetes.io/pciBusID", DP_DRA_VAL_STRING, g->pci_bus_id);
                if (g->numa_node >= 0) {
                        /* The model has no root-complex data: one root per NUMA node
                         * within the device's PCI domain. */
                        char root[32];
                        snprintf(root, sizeof(root), "pci%.4s:%02x", g->pci_bus_id, (unsigned)g->numa_node);
                        attr_str(b, d, "resource.kubernetes.io/pcieRoot", DP_DRA_VAL_STRING, root);
                }
        }
        if (g->numa_node >= 0) attr_int(b, d, "numa", g->numa_node);
}

static void attrs_gpu_identity(builder *b, dp_dra_device *d, const dp_hw_device *g) {
        attrs_from_model(b, d, g->attrs, g->n_attrs);
        if (!b->nvidia) return;
        attr_str(b, d, "productName", DP_DRA_VAL_STRING, g->product);
        attr_str(b, d, "architecture", DP_DRA_VAL_STRING, g->architecture);
}

static void memory_capacity(builder *b, dp_dra_device *d, uint64_t bytes) {
        char buf[64];
        dp_device_bytes_text(bytes, buf, sizeof(buf));
        qty_add(b, &d->capacity, &d->n_capacity, "memory", buf);
}

static const char *gpu_memory_text(const dp_hw_device *g, char *buf, size_t size) {
        for (size_t i = 0; i < g->n_capacities; i++)
                if (streq(g->capacities[i].name, "memory")) return g->capacities[i].value;
        dp_device_bytes_text(g->memory_bytes, buf, size);
        return buf;
}

static void add_whole(builder *b, const dp_hw_device *g, size_t pos) {
        dp_dra_device *d = device_new(b, g->id, DP_DRA_KIND_GPU, pos, -1);
        if (!d) return;
        d->model_id = sdup(b, g->id);
        d->uuid = sdup(b, g->uuid);
        if (b->nvidia) attr_str(b, d, "type", DP_DRA_VAL_STRING, "gpu");
        attr_int(b, d, "index", g->index);
        attr_str(b, d, "uuid", DP_DRA_VAL_STRING, g->uuid);
        attrs_gpu_identity(b, d, g);
        attrs_placement(b, d, g);
        if (b->nvidia) attr_bool(b, d, "nvidia.com/healthy", g->health == DP_HEALTH_HEALTHY);
        for (size_t i = 0; i < g->n_capacities; i++)
                qty_add(b, &d->capacity, &d->n_capacity, g->capacities[i].name, g->capacities[i].value);
        if (g->memory_bytes) memory_capacity(b, d, g->memory_bytes);
        nodes_add(b, d, g->device_nodes, g->n_device_nodes);
        set_health(b, d, g->health == DP_HEALTH_HEALTHY, g->id, g->uuid, NULL, NULL);
        d->allow_multiple = b->o->allow_multiple;
}

/* The device name is the model's id (dp_mig_id_new: a DNS label), the
 * name V1 output uses too. */
static void add_mig(builder *b, const dp_hw_device *g, size_t pos, const dp_mig_device *m, const char *set,
                    const char *group) {
        dp_dra_device *d = device_new(b, m->id, DP_DRA_KIND_MIG, pos, (int)m->index);
        if (!d) return;
        d->model_id = sdup(b, m->id);
        d->uuid = sdup(b, m->uuid);
        dp_health h = dp_mig_effective_health(b->set, m);
        if (b->nvidia) attr_str(b, d, "type", DP_DRA_VAL_STRING, "mig");
        attr_int(b, d, "index", g->index);
        attr_str(b, d, "uuid", DP_DRA_VAL_STRING, m->uuid);
        attr_str(b, d, "parentUUID", DP_DRA_VAL_STRING, g->uuid);
        attr_str(b, d, "profile", DP_DRA_VAL_STRING, m->profile);
        if (b->nvidia) attr_str(b, d, "nvidia.com/migProfile", DP_DRA_VAL_STRING, m->profile);
        attrs_gpu_identity(b, d, g);
        attrs_placement(b, d, g);
        if (b->nvidia) attr_bool(b, d, "nvidia.com/healthy", h == DP_HEALTH_HEALTHY);
        if (m->memory_bytes) memory_capacity(b, d, m->memory_bytes);
        dp_dra_consumption *c = consume_new(b, d, set, &group, group ? 1 : 0);
        if (c && m->memory_bytes) {
                char buf[64];
                dp_device_bytes_text(m->memory_bytes, buf, sizeof(buf));
                qty_add(b, &c->counters, &c->n_counters, "memory", buf);
        }
        nodes_add(b, d, g->device_nodes, g->n_device_nodes);
        nodes_add(b, d, m->device_nodes, m->n_device_nodes);
        set_health(b, d, h == DP_HEALTH_HEALTHY, m->id, m->uuid, g->id, g->uuid);
}

/* A counter-consuming partition of GPU g: `share` of every counter in cs
 * (share 0 = all of it). */
static dp_dra_device *add_part_mode(builder *b, const dp_hw_device *g, size_t pos, const char *name, dp_dra_kind kind,
                                    int unit, const dp_dra_counter_set *cs, unsigned share, const char *const *groups,
                                    size_t n_groups, const char *mode) {
        dp_dra_device *d = device_new(b, name, kind, pos, unit);
        if (!d) return NULL;
        d->model_id = sdup(b, g->id);
        if (kind == DP_DRA_KIND_FULL)
                d->uuid = sdup(b, g->uuid);
        else {
                char salt[96];
                snprintf(salt, sizeof(salt), "%s-partition", g->id);
                d->uuid = dp_device_uuid_derive(b->nvidia ? "GPU-" : "gpu-", b->set->node_name, salt, (unsigned)unit);
                if (!d->uuid) oom(b);
        }
        if (b->nvidia) attr_str(b, d, "type", DP_DRA_VAL_STRING, kind == DP_DRA_KIND_FULL ? "gpu" : "partition");
        if (mode) attr_str(b, d, "mode", DP_DRA_VAL_STRING, mode);
        attr_int(b, d, "index", g->index);
        attr_str(b, d, "uuid", DP_DRA_VAL_STRING, d->uuid);
        if (kind != DP_DRA_KIND_FULL) attr_str(b, d, "parentUUID", DP_DRA_VAL_STRING, g->uuid);
        attrs_gpu_identity(b, d, g);
        attrs_placement(b, d, g);
        if (b->nvidia) attr_bool(b, d, "nvidia.com/healthy", g->health == DP_HEALTH_HEALTHY);
        dp_dra_consumption *c = consume_new(b, d, cs->name, groups, n_groups);
        for (size_t i = 0; c && i < cs->n_counters; i++) {
                char buf[DP_QUANTITY_MAX_LEN];
                const char *v = cs->counters[i].value;
                if (share > 1) {
                        if (qty_divide(b, v, share, buf, sizeof(buf)) < 0) return NULL;
                        v = buf;
                }
                qty_add(b, &c->counters, &c->n_counters, cs->counters[i].name, v);
                qty_add(b, &d->capacity, &d->n_capacity, cs->counters[i].name, v);
        }
        nodes_add(b, d, g->device_nodes, g->n_device_nodes);
        set_health(b, d, g->health == DP_HEALTH_HEALTHY, g->id, g->uuid, NULL, NULL);
        d->allow_multiple = b->o->allow_multiple;
        return d;
}

static dp_dra_device *add_part(builder *b, const dp_hw_device *g, size_t pos, const char *name, dp_dra_kind kind,
                               int unit, const dp_dra_counter_set *cs, unsigned share, const char *group) {
        return add_part_mode(b, g, pos, name, kind, unit, cs, share, &group, group ? 1 : 0, NULL);
}

static void add_partitioned(builder *b, const dp_hw_device *g, size_t pos) {
        char name[128], membuf[64];
        snprintf(name, sizeof(name), "%s-counters", g->id);
        dp_dra_counter_set *cs = counter_set_new(b, name);
        if (!cs) return;
        for (size_t i = 0; i < g->n_capacities; i++)
                qty_add(b, &cs->counters, &cs->n_counters, g->capacities[i].name, g->capacities[i].value);
        if (!g->n_capacities) qty_add(b, &cs->counters, &cs->n_counters, "memory", gpu_memory_text(g, membuf, 64));
        /* counter sets may move when the array grows: keep a copy of the index */
        size_t k = b->inv->n_counter_sets - 1;
        for (unsigned j = 0; b->r >= 0 && j < b->partitions; j++) {
                snprintf(name, sizeof(name), "%s-partition-%u", g->id, j);
                add_part(b, g, pos, name, DP_DRA_KIND_PARTITION, (int)j, &b->inv->counter_sets[k], b->partitions, NULL);
        }
        snprintf(name, sizeof(name), "%s-full", g->id);
        if (b->r >= 0) add_part(b, g, pos, name, DP_DRA_KIND_FULL, -1, &b->inv->counter_sets[k], 0, NULL);
}

/* The counter set <gpu>-<suffix> {memory: the GPU's}. Its index (counter
 * sets move when the array grows), or -1 when the builder failed. */
static ssize_t memory_counter_set(builder *b, const dp_hw_device *g, const char *suffix) {
        char name[128], membuf[64];
        snprintf(name, sizeof(name), "%s-%s", g->id, suffix);
        dp_dra_counter_set *cs = counter_set_new(b, name);
        if (!cs) return -1;
        qty_add(b, &cs->counters, &cs->n_counters, "memory", gpu_memory_text(g, membuf, sizeof(membuf)));
        return (ssize_t)(b->inv->n_counter_sets - 1);
}

static void add_compat(builder *b, const dp_hw_device *g, size_t pos) {
        char name[128];
        ssize_t k = memory_counter_set(b, g, "memory");
        if (k < 0) return;
        if (g->n_migs)
                for (size_t m = 0; b->r >= 0 && m < g->n_migs; m++)
                        add_mig(b, g, pos, &g->migs[m], b->inv->counter_sets[k].name, "mig");
        else
                for (unsigned j = 0; b->r >= 0 && j < b->partitions; j++) {
                        snprintf(name, sizeof(name), "%s-mig-%u", g->id, j);
                        dp_dra_device *d = add_part(b, g, pos, name, DP_DRA_KIND_PARTITION, (int)j,
                                                    &b->inv->counter_sets[k], b->partitions, "mig");
                        if (d) d->allow_multiple = false;
                }
        for (unsigned j = 0; b->r >= 0 && j < b->partitions; j++) {
                snprintf(name, sizeof(name), "%s-vgpu-%u", g->id, j);
                add_part(b, g, pos, name, DP_DRA_KIND_PARTITION, (int)(DP_DRA_MAX_PARTITIONS + j),
                         &b->inv->counter_sets[k], b->partitions, "vgpu");
        }
        if (b->r >= 0) add_part(b, g, pos, g->id, DP_DRA_KIND_FULL, -1, &b->inv->counter_sets[k], 0, "vgpu");
}

/* The profile's partition modes (spec.partitionModes): counter set
 * gpu-<i>-memory {memory}; per mode, gpu-<i>-<mode>-<j> each drawing the
 * mode's memory (default: the GPU's / count) or, for the whole mode, gpu-<i>
 * drawing all of it; each with the mode's groups and attribute `mode`. Mode
 * k's partition j is sub-unit k * DP_DRA_MAX_PARTITIONS + j. */
static void add_modes(builder *b, const dp_hw_device *g, size_t pos) {
        char name[128];
        ssize_t k = memory_counter_set(b, g, "memory");
        if (k < 0) return;
        for (size_t mi = 0; b->r >= 0 && mi < b->set->n_partition_modes; mi++) {
                const dp_partition_mode *m = &b->set->partition_modes[mi];
                const char *const *groups = (const char *const *)m->groups;
                if (m->whole) {
                        add_part_mode(b, g, pos, g->id, DP_DRA_KIND_FULL, -1, &b->inv->counter_sets[k], 0, groups,
                                      m->n_groups, m->name);
                        continue;
                }
                uint64_t bytes = m->memory_bytes ? m->memory_bytes : g->memory_bytes / (m->count ? m->count : 1);
                char qbuf[64];
                dp_device_bytes_text(bytes, qbuf, sizeof(qbuf));
                dp_dra_quantity q = {(char *)"memory", qbuf};
                dp_dra_counter_set one = {b->inv->counter_sets[k].name, &q, 1};
                for (unsigned j = 0; b->r >= 0 && j < m->count; j++) {
                        snprintf(name, sizeof(name), "%s-%s-%u", g->id, m->name, j);
                        add_part_mode(b, g, pos, name, DP_DRA_KIND_PARTITION,
                                      (int)(mi * DP_DRA_MAX_PARTITIONS + j), &one, 0, groups, m->n_groups, m->name);
                }
        }
}

static void add_mig_parent(builder *b, const dp_hw_device *g, size_t pos) {
        ssize_t k = memory_counter_set(b, g, "counters");
        for (size_t m = 0; k >= 0 && b->r >= 0 && m < g->n_migs; m++)
                add_mig(b, g, pos, &g->migs[m], b->inv->counter_sets[k].name, NULL);
}

int dp_dra_inventory_build(const dp_device_set *set, const dp_dra_inventory_options *opts, dp_dra_inventory **ret,
                           dp_error *err) {
        assert_return(set && ret, -EINVAL);
        dp_dra_inventory_options defaults = DP_DRA_INVENTORY_OPTIONS_INIT;
        const dp_dra_inventory_options *o = opts ? opts : &defaults;
        const char *driver = o->driver ? o->driver : set->driver_name;
        if (!driver || !*driver) return dp_error_set(err, -EINVAL, "no DRA driver name");
        if (!set->node_name || !*set->node_name) return dp_error_set(err, -EINVAL, "no node name");
        int parts = o->partitions < 0 ? (int)set->partitions : o->partitions;
        if (o->compat_groups && parts == 0) parts = 4;
        if (parts < 0 || parts > DP_DRA_MAX_PARTITIONS)
                return dp_error_set(err, -E2BIG, "partitions: must be from 0 to %d, got %d", DP_DRA_MAX_PARTITIONS,
                                    parts);
        for (size_t i = 0; i < o->n_faults; i++) {
                const char *id = o->faults[i].device;
                if (!id || !o->faults[i].fault_class || !*o->faults[i].fault_class)
                        return dp_error_set(err, -EINVAL, "faults[%zu]: device and class are required", i);
                if (!dp_device_set_find(set, id) && !dp_device_set_find_mig(set, id))
                        return dp_error_set(err, -ENOENT, "faults[%zu]: unknown device %s", i, id);
        }

        builder b = {.set = set, .o = o, .partitions = (unsigned)parts, .err = err};
        b.nvidia = o->style == DP_DRA_STYLE_NVIDIA ||
                   (o->style == DP_DRA_STYLE_AUTO && set->domain && streq(set->domain, "nvidia.com"));
        if (!(b.inv = calloc(1, sizeof(*b.inv)))) return dp_error_set(err, -ENOMEM, "out of memory");
        b.inv->node_name = sdup(&b, set->node_name);
        b.inv->pool = sdup(&b, set->node_name);
        b.inv->driver = sdup(&b, driver);
        b.inv->cdi_kind = sdup(&b, set->cdi_kind ? set->cdi_kind : "devplane.io/gpu");
        if (set->n_common_device_nodes && b.r >= 0) {
                if (!(b.inv->common_device_nodes = calloc(set->n_common_device_nodes, sizeof(char *)))) oom(&b);
                for (size_t i = 0; b.r >= 0 && i < set->n_common_device_nodes; i++)
                        if ((b.inv->common_device_nodes[i] = sdup(&b, set->common_device_nodes[i])))
                                b.inv->n_common_device_nodes++;
        }
        for (size_t i = 0; b.r >= 0 && i < set->n_devices; i++) {
                const dp_hw_device *g = &set->devices[i];
                if (set->n_partition_modes)
                        add_modes(&b, g, i);
                else if (o->compat_groups)
                        add_compat(&b, g, i);
                else if (g->mig_enabled && g->n_migs)
                        add_mig_parent(&b, g, i);
                else if (parts > 0)
                        add_partitioned(&b, g, i);
                else
                        add_whole(&b, g, i);
        }
        if (b.r < 0) {
                dp_dra_inventory_free(b.inv);
                return b.r;
        }
        *ret = b.inv;
        return 0;
}

/* ---- conveniences ---- */

int dp_dra_device_set_load(const char *profile, const char *node_name, dp_device_set **ret, dp_error *err) {
        assert_return(profile && node_name && ret, -EINVAL);
        return dp_profile_resolve(profile, node_name, ret, err);
}

dp_device_set *dp_dra_device_set_free(dp_device_set *set) { return dp_device_set_free(set); }

int dp_dra_device_set_health(dp_device_set *set, const char *id, bool healthy, dp_error *err) {
        assert_return(set && id, -EINVAL);
        dp_health h = healthy ? DP_HEALTH_HEALTHY : DP_HEALTH_UNHEALTHY;
        dp_hw_device *d = dp_device_set_find(set, id);
        if (d) {
                d->health = h;
                return 0;
        }
        dp_mig_device *m = dp_device_set_find_mig(set, id);
        if (m) {
                m->health = h;
                return 0;
        }
        return dp_error_set(err, -ENOENT, "unknown device %s", id);
}
