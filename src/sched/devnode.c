/* SPDX-License-Identifier: Apache-2.0
 * devnode.c — a simulated node's devices: profile, V1 plan, ledger, V2 slice
 * document (devnode.h). The only file of src/sched that sees devices/ types. */
#include <inttypes.h>
#include <stdio.h>

#include "devices/config.h"
#include "devices/device.h"
#include "devices/profile.h"
#include "devices/v1.h"
#include "sched/devnode.h"

typedef struct unit {
        size_t gpu;
        int mig; /* -1 whole */
        bool v2_held;
        char **holders;
        size_t n_holders;
} unit;

typedef struct held {
        char *resource;
        char *id;
        char *owner;
        size_t unit;
} held;

struct dp_devnode {
        dp_device_set *set;
        dp_agent_config *config;
        dp_v1_plan *plan;
        unit *units;
        size_t n_units;
        held *held;
        size_t n_held, cap_held;
};

static void unit_holders_clear(unit *u) {
        free(u->holders);
        u->holders = NULL;
        u->n_holders = 0;
}

dp_devnode *dp_devnode_free(dp_devnode *n) {
        if (!n) return NULL;
        for (size_t i = 0; i < n->n_held; i++) {
                free(n->held[i].resource);
                free(n->held[i].id);
                free(n->held[i].owner);
        }
        free(n->held);
        for (size_t i = 0; i < n->n_units; i++)
                unit_holders_clear(&n->units[i]);
        free(n->units);
        dp_v1_plan_free(n->plan);
        dp_agent_config_free(n->config);
        dp_device_set_free(n->set);
        free(n);
        return NULL;
}

int dp_devnode_new(const char *profile, const char *node_name, const char *agent_config, size_t config_len,
                   const char *config_source, dp_devnode **ret, dp_error *err) {
        _cleanup_(dp_devnode_freep) dp_devnode *n = calloc(1, sizeof(*n));
        if (!n) return -ENOMEM;
        int r = dp_profile_builtin(profile, node_name, &n->set, err);
        if (r < 0) return r;
        if (agent_config)
                r = dp_agent_config_load(agent_config, config_len, config_source, &n->config, err);
        else if (!(n->config = dp_agent_config_new_default()))
                r = -ENOMEM;
        if (r < 0) return r;
        if ((r = dp_v1_plan_build(n->set, n->config, &n->plan, err)) < 0) return r;
        size_t total = 0;
        for (size_t i = 0; i < n->set->n_devices; i++)
                total += 1 + n->set->devices[i].n_migs;
        if (!(n->units = calloc(total ? total : 1, sizeof(*n->units)))) return -ENOMEM;
        for (size_t i = 0; i < n->set->n_devices; i++) {
                n->units[n->n_units++] = (unit){.gpu = i, .mig = -1};
                for (size_t m = 0; m < n->set->devices[i].n_migs; m++)
                        n->units[n->n_units++] = (unit){.gpu = i, .mig = (int)m};
        }
        *ret = TAKE_PTR(n);
        return 0;
}

const char *dp_devnode_driver(const dp_devnode *n) { return n->set->driver_name; }

static size_t unit_of(const dp_devnode *n, const dp_v1_device *d);
static bool v2_blocked(const dp_devnode *n, size_t u);

size_t dp_devnode_v1_resource_count(const dp_devnode *n) { return n->plan->n_resources; }

const char *dp_devnode_v1_resource(const dp_devnode *n, size_t i, size_t *ret_capacity, size_t *ret_allocatable) {
        if (i >= n->plan->n_resources) return NULL;
        const dp_v1_resource *r = &n->plan->resources[i];
        if (ret_capacity) *ret_capacity = dp_v1_resource_count(r);
        if (ret_allocatable) {
                size_t a = 0;
                for (size_t k = 0; k < r->n_devices; k++)
                        if (r->devices[k].health == DP_HEALTH_HEALTHY && !v2_blocked(n, unit_of(n, &r->devices[k])))
                                a++;
                *ret_allocatable = a;
        }
        return r->name;
}

static size_t unit_of(const dp_devnode *n, const dp_v1_device *d) {
        for (size_t u = 0; u < n->n_units; u++)
                if (n->units[u].gpu == d->gpu && n->units[u].mig == d->mig) return u;
        return 0;
}

/* Two units overlap when they are the same or one is the other's parent. */
static bool overlap(const unit *a, const unit *b) {
        return a->gpu == b->gpu && (a->mig == b->mig || a->mig < 0 || b->mig < 0);
}

static bool v2_blocked(const dp_devnode *n, size_t u) {
        for (size_t i = 0; i < n->n_units; i++)
                if (n->units[i].v2_held && overlap(&n->units[i], &n->units[u])) return true;
        return false;
}

static bool is_held(const dp_devnode *n, const char *resource, const char *id) {
        for (size_t i = 0; i < n->n_held; i++)
                if (streq(n->held[i].resource, resource) && streq(n->held[i].id, id)) return true;
        return false;
}

static int record(dp_devnode *n, const dp_v1_resource *res, const char *id, const char *owner) {
        const dp_v1_device *d = dp_v1_resource_find(res, id);
        if (!d) return -ENOENT;
        if (DP_GROW(n->held, n->cap_held, n->n_held + 1) < 0) return -ENOMEM;
        held *h = &n->held[n->n_held];
        h->resource = dp_strdup(res->name);
        h->id = dp_strdup(id);
        h->owner = dp_strdup(owner);
        h->unit = unit_of(n, d);
        unit *u = &n->units[h->unit];
        char **nh = realloc(u->holders, (u->n_holders + 1) * sizeof(char *));
        if (!h->resource || !h->id || !h->owner || !nh) {
                free(h->resource);
                free(h->id);
                free(h->owner);
                if (nh) u->holders = nh;
                return -ENOMEM;
        }
        u->holders = nh;
        u->holders[u->n_holders++] = h->owner;
        n->n_held++;
        return 0;
}

int dp_devnode_v1_allocate(dp_devnode *n, const char *resource, size_t count, const char *owner, dp_strbuf *ids,
                           dp_error *err) {
        const dp_v1_resource *res = dp_v1_plan_find(n->plan, resource);
        if (!res) return dp_error_set(err, -ENOENT, "resource %s is not advertised on this node", resource);
        _cleanup_free_ const char **avail = calloc(res->n_devices + 1, sizeof(char *));
        if (!avail) return -ENOMEM;
        size_t n_avail = 0;
        for (size_t i = 0; i < res->n_devices; i++)
                if (res->devices[i].health == DP_HEALTH_HEALTHY && !is_held(n, res->name, res->devices[i].id) &&
                    !v2_blocked(n, unit_of(n, &res->devices[i])))
                        avail[n_avail++] = res->devices[i].id;
        if (n_avail < count)
                return dp_error_set(err, -ENOSPC, "%s: %zu requested, %zu healthy and unallocated", resource, count,
                                    n_avail);
        char **chosen = NULL;
        int r = dp_v1_preferred_allocation(n->plan, n->set, n->config, resource, avail, n_avail, NULL, 0, count,
                                           &chosen, err);
        if (r < 0) return r;
        dp_v1_container_response *resp = NULL;
        r = dp_v1_allocate(n->plan, n->set, n->config, resource, (const char *const *)chosen, count, &resp, err);
        dp_v1_container_response_free(resp);
        for (size_t i = 0; r >= 0 && chosen[i]; i++) {
                r = record(n, res, chosen[i], owner);
                if (r >= 0) {
                        const dp_v1_device *d = dp_v1_resource_find(res, chosen[i]);
                        dp_devnode_unit u;
                        dp_devnode_unit_get(n, unit_of(n, d), &u);
                        if (ids->len) dp_strbuf_putc(ids, ',');
                        dp_strbuf_puts(ids, u.id);
                        if (res->replicas > 1) dp_strbuf_printf(ids, ":replica-%u", d->replica);
                }
        }
        dp_v1_ids_free(chosen);
        return r < 0 ? r : 0;
}

void dp_devnode_v1_release(dp_devnode *n, const char *owner_prefix) {
        size_t k = 0;
        for (size_t i = 0; i < n->n_held; i++) {
                if (startswith(n->held[i].owner, owner_prefix)) {
                        free(n->held[i].resource);
                        free(n->held[i].id);
                        free(n->held[i].owner);
                } else
                        n->held[k++] = n->held[i];
        }
        n->n_held = k;
        /* rebuild holder lists (they point at owners) */
        for (size_t u = 0; u < n->n_units; u++)
                n->units[u].n_holders = 0;
        for (size_t i = 0; i < n->n_held; i++) {
                unit *u = &n->units[n->held[i].unit];
                u->holders[u->n_holders++] = n->held[i].owner;
        }
}

void dp_devnode_v2_clear(dp_devnode *n) {
        for (size_t i = 0; i < n->n_units; i++)
                n->units[i].v2_held = false;
}

int dp_devnode_v2_hold(dp_devnode *n, size_t unit_index) {
        if (unit_index >= n->n_units) return -ENOENT;
        n->units[unit_index].v2_held = true;
        return 0;
}

bool dp_devnode_v1_blocks(const dp_devnode *n, size_t u) {
        if (u >= n->n_units) return false;
        for (size_t i = 0; i < n->n_units; i++)
                if (n->units[i].n_holders && overlap(&n->units[i], &n->units[u])) return true;
        return false;
}

int dp_devnode_set_health(dp_devnode *n, const char *id, bool healthy, dp_error *err) {
        dp_health h = healthy ? DP_HEALTH_HEALTHY : DP_HEALTH_UNHEALTHY;
        dp_device *d = dp_device_set_find(n->set, id);
        dp_mig_device *m = d ? NULL : dp_device_set_find_mig(n->set, id);
        if (!d && !m) return dp_error_set(err, -ENOENT, "node %s: no device %s", n->set->node_name, id);
        if (d)
                d->health = h;
        else
                m->health = h;
        dp_v1_plan_update_health(n->plan, n->set);
        return 0;
}

/* ---- units ---- */

size_t dp_devnode_unit_count(const dp_devnode *n) { return n->n_units; }

int dp_devnode_unit_get(const dp_devnode *n, size_t i, dp_devnode_unit *ret) {
        if (i >= n->n_units) return -ENOENT;
        const unit *u = &n->units[i];
        const dp_device *d = &n->set->devices[u->gpu];
        dp_devnode_unit x = {.v1_holders = (const char *const *)u->holders, .n_v1_holders = u->n_holders};
        if (u->mig < 0) {
                x.id = d->id;
                x.uuid = d->uuid;
                x.profile = d->type;
                x.parent = -1;
                x.mig_mode = d->mig_enabled;
                x.healthy = d->health == DP_HEALTH_HEALTHY;
        } else {
                const dp_mig_device *m = &d->migs[u->mig];
                x.id = m->id;
                x.uuid = m->uuid;
                x.profile = m->profile;
                for (size_t p = 0; p < i; p++)
                        if (n->units[p].gpu == u->gpu && n->units[p].mig < 0) x.parent = (int)p;
                x.healthy = dp_mig_effective_health(n->set, m) == DP_HEALTH_HEALTHY;
        }
        *ret = x;
        return 0;
}

/* V2 device names are DNS labels: a MIG id's dots become dashes. */
static bool v2_name_eq(const char *id, const char *v2) {
        for (; *id && *v2; id++, v2++)
                if (*id != *v2 && !(*id == '.' && *v2 == '-')) return false;
        return *id == *v2;
}

int dp_devnode_unit_find(const dp_devnode *n, const char *id) {
        for (size_t i = 0; i < n->n_units; i++) {
                dp_devnode_unit u;
                dp_devnode_unit_get(n, i, &u);
                if (streq(u.id, id) || v2_name_eq(u.id, id)) return (int)i;
        }
        return -ENOENT;
}

/* ---- V2 slice ---- */

static int add_attr(dp_doc_set *s, dp_doc_node *attrs, const char *name, const char *kind, dp_doc_node *v) {
        dp_doc_node *a = dp_doc_new_map(s);
        if (!a || dp_doc_map_add(s, a, kind, v) < 0) return -ENOMEM;
        return dp_doc_map_add(s, attrs, name, a);
}

static int add_str_attr(dp_doc_set *s, dp_doc_node *attrs, const char *domain, const char *name, const char *v) {
        int r = add_attr(s, attrs, name, "string", dp_doc_new_str(s, v));
        if (r < 0 || !domain) return r;
        _cleanup_free_ char *q = dp_asprintf("%s/%s", domain, name);
        return q ? add_attr(s, attrs, q, "string", dp_doc_new_str(s, v)) : -ENOMEM;
}

static int add_bool_attr(dp_doc_set *s, dp_doc_node *attrs, const char *domain, const char *name, bool v) {
        int r = add_attr(s, attrs, name, "bool", dp_doc_new_bool(s, v));
        if (r < 0 || !domain) return r;
        _cleanup_free_ char *q = dp_asprintf("%s/%s", domain, name);
        return q ? add_attr(s, attrs, q, "bool", dp_doc_new_bool(s, v)) : -ENOMEM;
}

static char *bytes_quantity(uint64_t b) {
        if (b && b % (1ull << 30) == 0) return dp_asprintf("%" PRIu64 "Gi", b >> 30);
        if (b && b % (1ull << 20) == 0) return dp_asprintf("%" PRIu64 "Mi", b >> 20);
        return dp_asprintf("%" PRIu64, b);
}

static int add_cap(dp_doc_set *s, dp_doc_node *caps, const char *name, const char *value) {
        dp_doc_node *c = dp_doc_new_map(s);
        if (!c || dp_doc_map_add(s, c, "value", dp_doc_new_str(s, value)) < 0) return -ENOMEM;
        return dp_doc_map_add(s, caps, name, c);
}

static dp_doc_node *unit_doc(const dp_devnode *n, dp_doc_set *s, size_t i) {
        dp_devnode_unit u;
        dp_devnode_unit_get(n, i, &u);
        const unit *in = &n->units[i];
        const dp_device *d = &n->set->devices[in->gpu];
        /* A second spelling of the common attributes under the V1 domain
         * ("nvidia.com/migProfile"), which selectors written for NVIDIA
         * drivers use, when it differs from the driver name. */
        const char *dom = n->set->domain && !streq(n->set->domain, n->set->driver_name) ? n->set->domain : NULL;
        dp_doc_node *dev = dp_doc_new_map(s), *attrs = dp_doc_new_map(s), *caps = dp_doc_new_map(s);
        if (!dev || !attrs || !caps) return NULL;
        _cleanup_free_ char *v2name = dp_strdup(u.id);
        if (!v2name) return NULL;
        for (char *p = v2name; *p; p++)
                if (*p == '.') *p = '-';
        if (dp_doc_map_add(s, dev, "name", dp_doc_new_str(s, v2name)) < 0) return NULL;
        int r = add_attr(s, attrs, "index", "int", dp_doc_new_int(s, in->mig < 0 ? d->index : d->migs[in->mig].index));
        if (r >= 0) r = add_str_attr(s, attrs, NULL, "uuid", u.uuid);
        if (r >= 0) r = add_str_attr(s, attrs, dom, "type", in->mig < 0 ? "gpu" : "mig");
        if (r >= 0) r = add_bool_attr(s, attrs, dom, "healthy", u.healthy);
        if (r >= 0 && in->mig >= 0) {
                r = add_str_attr(s, attrs, dom, "migProfile", u.profile);
                if (r >= 0) r = add_str_attr(s, attrs, dom, "parentUUID", d->uuid);
                if (r >= 0) r = add_attr(s, attrs, "parentIndex", "int", dp_doc_new_int(s, d->index));
        }
        bool has_memory = false;
        for (size_t a = 0; r >= 0 && a < d->n_attrs; a++) {
                const dp_attr *x = &d->attrs[a];
                if (streq(x->name, "index") || streq(x->name, "uuid") || streq(x->name, "type") ||
                    streq(x->name, "healthy"))
                        continue;
                switch (x->type) {
                case DP_ATTR_STRING: r = add_attr(s, attrs, x->name, "string", dp_doc_new_str(s, x->str)); break;
                case DP_ATTR_VERSION: r = add_attr(s, attrs, x->name, "version", dp_doc_new_str(s, x->str)); break;
                case DP_ATTR_INT: r = add_attr(s, attrs, x->name, "int", dp_doc_new_int(s, x->i)); break;
                case DP_ATTR_BOOL: r = add_attr(s, attrs, x->name, "bool", dp_doc_new_bool(s, x->b)); break;
                }
        }
        if (in->mig < 0)
                for (size_t c = 0; r >= 0 && c < d->n_capacities; c++) {
                        has_memory |= streq(d->capacities[c].name, "memory");
                        r = add_cap(s, caps, d->capacities[c].name, d->capacities[c].value);
                }
        if (r >= 0 && !has_memory) {
                _cleanup_free_ char *q = bytes_quantity(in->mig < 0 ? d->memory_bytes : d->migs[in->mig].memory_bytes);
                r = q ? add_cap(s, caps, "memory", q) : -ENOMEM;
        }
        if (r < 0 || dp_doc_map_add(s, dev, "attributes", attrs) < 0 || dp_doc_map_add(s, dev, "capacity", caps) < 0)
                return NULL;
        bool v1 = dp_devnode_v1_blocks(n, i);
        if (!u.healthy || v1) {
                dp_doc_node *taints = dp_doc_new_seq(s);
                if (!taints) return NULL;
                for (int k = 0; k < 2; k++) {
                        if (!(k ? v1 : !u.healthy)) continue;
                        dp_doc_node *t = dp_doc_new_map(s);
                        if (!t ||
                            dp_doc_map_add(s, t, "key",
                                           dp_doc_new_str(s, k ? DP_DEVNODE_V1_TAINT : DP_DEVNODE_UNHEALTHY_TAINT)) <
                                    0 ||
                            dp_doc_map_add(s, t, "effect", dp_doc_new_str(s, "NoSchedule")) < 0 ||
                            dp_doc_seq_add(s, taints, t) < 0)
                                return NULL;
                }
                if (dp_doc_map_add(s, dev, "taints", taints) < 0) return NULL;
        }
        return dev;
}

dp_doc_node *dp_devnode_v2_slice(const dp_devnode *n, dp_doc_set *s, int64_t generation) {
        dp_doc_node *root = dp_doc_new_map(s), *meta = dp_doc_new_map(s), *spec = dp_doc_new_map(s),
                    *pool = dp_doc_new_map(s), *devs = dp_doc_new_seq(s);
        if (!root || !meta || !spec || !pool || !devs) return NULL;
        _cleanup_free_ char *name = dp_asprintf("%s-%s", n->set->node_name, n->set->driver_name);
        if (!name) return NULL;
        for (char *p = name; *p; p++)
                if (*p == '.') *p = '-';
        if (dp_doc_map_add(s, root, "apiVersion", dp_doc_new_str(s, "resource.k8s.io/v1")) < 0 ||
            dp_doc_map_add(s, root, "kind", dp_doc_new_str(s, "ResourceSlice")) < 0 ||
            dp_doc_map_add(s, meta, "name", dp_doc_new_str(s, name)) < 0 ||
            dp_doc_map_add(s, root, "metadata", meta) < 0 ||
            dp_doc_map_add(s, spec, "driver", dp_doc_new_str(s, n->set->driver_name)) < 0 ||
            dp_doc_map_add(s, spec, "nodeName", dp_doc_new_str(s, n->set->node_name)) < 0 ||
            dp_doc_map_add(s, pool, "name", dp_doc_new_str(s, n->set->node_name)) < 0 ||
            dp_doc_map_add(s, pool, "generation", dp_doc_new_int(s, generation)) < 0 ||
            dp_doc_map_add(s, pool, "resourceSliceCount", dp_doc_new_int(s, 1)) < 0 ||
            dp_doc_map_add(s, spec, "pool", pool) < 0)
                return NULL;
        for (size_t i = 0; i < n->n_units; i++) {
                const unit *u = &n->units[i];
                if (u->mig < 0 && n->set->devices[u->gpu].mig_enabled && n->set->devices[u->gpu].n_migs) continue;
                dp_doc_node *d = unit_doc(n, s, i);
                if (!d || dp_doc_seq_add(s, devs, d) < 0) return NULL;
        }
        if (dp_doc_map_add(s, spec, "devices", devs) < 0 || dp_doc_map_add(s, root, "spec", spec) < 0) return NULL;
        return root;
}
