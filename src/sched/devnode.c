/* SPDX-License-Identifier: Apache-2.0
 * devnode.c — a simulated node's devices: profile, V1 plan, ledger, V2 slice
 * document (devnode.h). The only file of src/sched that sees devices/ types. */
#include <inttypes.h>
#include <stdio.h>

#include "devices/config.h"
#include "devices/device.h"
#include "devices/profile.h"
#include "devices/v1.h"
#include "dra/inventory.h"
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
        dp_dra_inventory *inv;
        int dra_partitions;
        bool dra_allow_multiple;
        unit *units;
        size_t n_units;
        held *held;
        size_t n_held, cap_held;
};

static void held_done(held *h) {
        free(h->resource);
        free(h->id);
        free(h->owner);
}

static void unit_holders_clear(unit *u) {
        free(u->holders);
        u->holders = NULL;
        u->n_holders = 0;
}

dp_devnode *dp_devnode_free(dp_devnode *n) {
        if (!n) return NULL;
        for (size_t i = 0; i < n->n_held; i++)
                held_done(&n->held[i]);
        free(n->held);
        for (size_t i = 0; i < n->n_units; i++)
                unit_holders_clear(&n->units[i]);
        free(n->units);
        dp_v1_plan_free(n->plan);
        dp_dra_inventory_free(n->inv);
        dp_agent_config_free(n->config);
        dp_device_set_free(n->set);
        free(n);
        return NULL;
}

static int rebuild_inventory(dp_devnode *n, dp_error *err);

bool dp_devnode_profile_is_file(const char *profile) {
        return profile && !dp_profile_builtin_text(profile, NULL) && (strchr(profile, '/') || strchr(profile, '.'));
}

int dp_devnode_profile_check(const char *text, size_t len, const char *source, const char *node_name, dp_error *err) {
        dp_device_set *set = NULL;
        int r = dp_profile_load(text, len, source, node_name, &set, err);
        dp_device_set_free(set);
        return r;
}

int dp_devnode_profile_load(const char *profile, const char *profile_text, size_t profile_len, const char *node_name,
                            dp_device_set **ret, dp_error *err) {
        return profile_text ? dp_profile_load(profile_text, profile_len, profile, node_name, ret, err)
                            : dp_profile_resolve(profile, node_name, ret, err);
}

int dp_devnode_new(const char *profile, const char *profile_text, size_t profile_len, const char *node_name,
                   const char *agent_config, size_t config_len, const char *config_source, dp_devnode **ret,
                   dp_error *err) {
        _cleanup_(dp_devnode_freep) dp_devnode *n = calloc(1, sizeof(*n));
        if (!n) return -ENOMEM;
        n->dra_partitions = -1;
        int r = dp_devnode_profile_load(profile, profile_text, profile_len, node_name, &n->set, err);
        if (r < 0) return r;
        if (agent_config)
                r = dp_agent_config_load(agent_config, config_len, config_source, &n->config, err);
        else if (!(n->config = dp_agent_config_new_default()))
                r = -ENOMEM;
        if (r < 0) return r;
        if ((r = dp_v1_plan_build(n->set, n->config, &n->plan, err)) < 0) return r;
        if ((r = rebuild_inventory(n, err)) < 0) return r;
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

const char *dp_devnode_driver(const dp_devnode *n) { return n ? n->set->driver_name : NULL; }

static size_t unit_of(const dp_devnode *n, const dp_v1_device *d);
static bool v2_blocked(const dp_devnode *n, size_t u);

size_t dp_devnode_v1_resource_count(const dp_devnode *n) { return n ? n->plan->n_resources : 0; }

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
        if (!n) return;
        size_t k = 0;
        for (size_t i = 0; i < n->n_held; i++) {
                if (startswith(n->held[i].owner, owner_prefix))
                        held_done(&n->held[i]);
                else
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
        if (!n) return;
        for (size_t i = 0; i < n->n_units; i++)
                n->units[i].v2_held = false;
}

int dp_devnode_v2_hold(dp_devnode *n, size_t unit_index) {
        if (!n) return -ENOENT;
        if (unit_index >= n->n_units) return -ENOENT;
        n->units[unit_index].v2_held = true;
        return 0;
}

bool dp_devnode_v1_blocks(const dp_devnode *n, size_t u) {
        if (!n) return false;
        if (u >= n->n_units) return false;
        for (size_t i = 0; i < n->n_units; i++)
                if (n->units[i].n_holders && overlap(&n->units[i], &n->units[u])) return true;
        return false;
}

int dp_devnode_set_health(dp_devnode *n, const char *id, bool healthy, dp_error *err) {
        if (!n) return dp_error_set(err, -ENOENT, "device %s: the node has no device model (a Node object)", id);
        dp_health h = healthy ? DP_HEALTH_HEALTHY : DP_HEALTH_UNHEALTHY;
        dp_hw_device *d = dp_device_set_find(n->set, id);
        dp_mig_device *m = d ? NULL : dp_device_set_find_mig(n->set, id);
        if (!d && !m) return dp_error_set(err, -ENOENT, "node %s: no device %s", n->set->node_name, id);
        if (d)
                d->health = h;
        else
                m->health = h;
        dp_v1_plan_update_health(n->plan, n->set);
        return rebuild_inventory(n, err);
}

/* ---- units ---- */

size_t dp_devnode_unit_count(const dp_devnode *n) { return n ? n->n_units : 0; }

int dp_devnode_unit_get(const dp_devnode *n, size_t i, dp_devnode_unit *ret) {
        if (!n) return -ENOENT;
        if (i >= n->n_units) return -ENOENT;
        const unit *u = &n->units[i];
        const dp_hw_device *d = &n->set->devices[u->gpu];
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

int dp_devnode_unit_find(const dp_devnode *n, const char *id) {
        if (!n) return -ENOENT;
        for (size_t i = 0; i < n->n_units; i++) {
                dp_devnode_unit u;
                dp_devnode_unit_get(n, i, &u);
                if (streq(u.id, id)) return (int)i;
        }
        return -ENOENT;
}

/* ---- V2: the DRA driver's inventory (dra/inventory.h) ---- */

const dp_dra_inventory *dp_devnode_inventory(const dp_devnode *n) { return n ? n->inv : NULL; }

static int rebuild_inventory(dp_devnode *n, dp_error *err) {
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = n->dra_partitions;
        o.allow_multiple = n->dra_allow_multiple;
        dp_dra_inventory *inv = NULL;
        int r = dp_dra_inventory_build(n->set, &o, &inv, err);
        if (r < 0) return r;
        dp_dra_inventory_free(n->inv);
        n->inv = inv;
        return 0;
}

int dp_devnode_set_dra(dp_devnode *n, int partitions, bool allow_multiple, dp_error *err) {
        int old_p = n->dra_partitions;
        bool old_m = n->dra_allow_multiple;
        n->dra_partitions = partitions;
        n->dra_allow_multiple = allow_multiple;
        int r = rebuild_inventory(n, err);
        if (r < 0) {
                n->dra_partitions = old_p;
                n->dra_allow_multiple = old_m;
        }
        return r;
}

int dp_devnode_unit_of_v2(const dp_devnode *n, const char *name) {
        if (!n) return -ENOENT;
        const dp_dra_device *d = dp_dra_inventory_find(n->inv, name);
        if (!d) return -ENOENT;
        /* a partition lives on its physical device; MIG instances are units of their own */
        if (d->kind == DP_DRA_KIND_MIG) return dp_devnode_unit_find(n, d->model_id);
        return dp_devnode_unit_find(n, n->set->devices[d->physical].id);
}
