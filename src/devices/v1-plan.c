/* SPDX-License-Identifier: Apache-2.0
 * v1-plan.c — devices -> V1 resource names and advertised ids (ListAndWatch). */
#include <stdio.h>

#include "devices/decode.h"
#include "devices/v1.h"

static void resource_done(dp_v1_resource *r) {
        dp_free_many(r->name, r->base_name);
        for (size_t i = 0; i < r->n_devices; i++)
                free(r->devices[i].id);
        dp_free_many(r->devices, r->by_id);
}

dp_v1_plan *dp_v1_plan_free(dp_v1_plan *p) {
        if (!p) return NULL;
        for (size_t i = 0; i < p->n_resources; i++)
                resource_done(&p->resources[i]);
        free(p->resources);
        free(p);
        return NULL;
}

typedef struct builder {
        dp_v1_plan *p;
        size_t cap;
        size_t *dev_cap; /* per resource */
        size_t dev_cap_n;
} builder;

static dp_v1_resource *get_resource(builder *b, const char *name) {
        for (size_t i = 0; i < b->p->n_resources; i++)
                if (streq(b->p->resources[i].base_name, name)) return &b->p->resources[i];
        if (DP_GROW(b->p->resources, b->cap, b->p->n_resources + 1) < 0) return NULL;
        if (DP_GROW(b->dev_cap, b->dev_cap_n, b->p->n_resources + 1) < 0) return NULL;
        dp_v1_resource *r = &b->p->resources[b->p->n_resources];
        r->base_name = dp_strdup(name);
        if (!r->base_name) return NULL;
        b->dev_cap[b->p->n_resources] = 0;
        r->replicas = 1;
        b->p->n_resources++;
        return r;
}

static int add_device(builder *b, dp_v1_resource *r, const dp_device_set *s, const dp_agent_config *c, size_t gpu,
                      int mig) {
        size_t ri = (size_t)(r - b->p->resources);
        if (DP_GROW(r->devices, b->dev_cap[ri], r->n_devices + 1) < 0) return -ENOMEM;
        const dp_hw_device *d = &s->devices[gpu];
        dp_v1_device *v = &r->devices[r->n_devices];
        /* The kubelet always sees uuids, whatever deviceIDStrategy says (as
         * NVIDIA's plugin does): the strategy shapes only what the container
         * gets (dp_v1_allocate). */
        (void)c;
        if (mig < 0) {
                v->id = dp_strdup(d->uuid);
                v->health = d->health;
        } else {
                const dp_mig_device *m = &d->migs[mig];
                v->id = dp_strdup(m->uuid);
                v->health = dp_mig_effective_health(s, m);
        }
        if (!v->id) return -ENOMEM;
        v->numa_node = d->numa_node;
        v->gpu = gpu;
        v->mig = mig;
        v->replica = 0;
        r->n_devices++;
        return 0;
}

/* Expand a resource's devices into replicas "<id>::<n>". */
static int replicate(dp_v1_resource *r, unsigned replicas) {
        size_t total;
        if (dp_mul_overflow(r->n_devices, replicas, &total)) return -ENOMEM;
        dp_v1_device *nd = calloc(total ? total : 1, sizeof(dp_v1_device));
        if (!nd) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < r->n_devices; i++)
                for (unsigned n = 0; n < replicas; n++) {
                        nd[k] = r->devices[i];
                        nd[k].replica = n;
                        nd[k].id = dp_asprintf("%s::%u", r->devices[i].id, n);
                        if (!nd[k].id) {
                                for (size_t j = 0; j < k; j++)
                                        free(nd[j].id);
                                free(nd);
                                return -ENOMEM;
                        }
                        k++;
                }
        for (size_t i = 0; i < r->n_devices; i++)
                free(r->devices[i].id);
        free(r->devices);
        r->devices = nd;
        r->n_devices = k;
        r->replicas = replicas;
        return 0;
}

static int cmp_by_id(const void *a, const void *b) {
        const dp_v1_device *x = *(const dp_v1_device *const *)a, *y = *(const dp_v1_device *const *)b;
        int c = strcmp(x->id, y->id);
        return c ? c : (x > y) - (x < y);
}

/* The id index of a finished device list (ids and positions no longer change). */
static int index_resource(dp_v1_resource *r) {
        free(r->by_id);
        r->by_id = calloc(r->n_devices ? r->n_devices : 1, sizeof(*r->by_id));
        if (!r->by_id) return -ENOMEM;
        for (size_t i = 0; i < r->n_devices; i++)
                r->by_id[i] = &r->devices[i];
        if (r->n_devices > 1) qsort(r->by_id, r->n_devices, sizeof(*r->by_id), cmp_by_id);
        return 0;
}

static int cmp_resource(const void *a, const void *b) {
        return strcmp(((const dp_v1_resource *)a)->name, ((const dp_v1_resource *)b)->name);
}

int dp_v1_plan_build(const dp_device_set *s, const dp_agent_config *c, dp_v1_plan **ret, dp_error *err) {
        assert_return(s && c && ret, -EINVAL);
        int r = dp_agent_config_check(c, s, err);
        if (r < 0) return r;
        _cleanup_(dp_v1_plan_freep) dp_v1_plan *p = calloc(1, sizeof(*p));
        if (!p) return dp_error_set(err, -ENOMEM, "out of memory");
        builder b = {p, 0, NULL, 0};
        char name[512];
        for (size_t i = 0; i < s->n_devices && r >= 0; i++) {
                const dp_hw_device *d = &s->devices[i];
                if (!d->mig_enabled || c->mig_strategy == DP_MIG_NONE) {
                        dp_pathf(name, sizeof name, "%s/%s", s->domain, d->type);
                        dp_v1_resource *res = get_resource(&b, name);
                        r = res ? add_device(&b, res, s, c, i, -1) : -ENOMEM;
                        continue;
                }
                for (size_t j = 0; j < d->n_migs && r >= 0; j++) {
                        if (c->mig_strategy == DP_MIG_SINGLE)
                                dp_pathf(name, sizeof name, "%s/gpu", s->domain);
                        else
                                dp_pathf(name, sizeof name, "%s/mig-%s", s->domain, d->migs[j].profile);
                        if (!dp_resource_name_part_valid(strchr(name, '/') + 1)) {
                                free(b.dev_cap);
                                return dp_error_set(err, -EINVAL,
                                                    "device %s: resource name %s is not valid (the part after '/' "
                                                    "must be at most 63 characters)",
                                                    d->migs[j].id, name);
                        }
                        dp_v1_resource *res = get_resource(&b, name);
                        r = res ? add_device(&b, res, s, c, i, (int)j) : -ENOMEM;
                }
        }
        free(b.dev_cap);
        if (r < 0) return dp_error_set(err, r, "out of memory");

        /* Sharing (timeSlicing, or mps when present): replicas and renaming. */
        size_t n_shared;
        bool fail1, rename_default;
        const dp_ts_resource *shared = dp_agent_config_replicated(c, &n_shared, &fail1, &rename_default);
        for (size_t i = 0; i < p->n_resources; i++) {
                dp_v1_resource *res = &p->resources[i];
                const dp_ts_resource *ts = NULL;
                for (size_t k = 0; k < n_shared; k++)
                        if (streq(shared[k].name, res->base_name)) ts = &shared[k];
                if (ts && ts->replicas > 1) {
                        for (size_t k = 0; c->mps && k < res->n_devices; k++)
                                if (res->devices[k].mig >= 0)
                                        return dp_error_set(err, -EINVAL,
                                                            "%s: sharing.mps: %s: sharing using MPS is not supported "
                                                            "for MIG devices",
                                                            c->source, res->base_name);
                        if ((r = replicate(res, ts->replicas)) < 0) return dp_error_set(err, r, "out of memory");
                        res->fail_requests_greater_than_one = fail1;
                        if (ts->rename)
                                res->name = dp_strdup(ts->rename);
                        else if (rename_default)
                                res->name = dp_asprintf("%s.shared", res->base_name);
                        else
                                res->name = dp_strdup(res->base_name);
                } else {
                        res->name = dp_strdup(res->base_name);
                }
                if (!res->name) return dp_error_set(err, -ENOMEM, "out of memory");
                if (!dp_resource_name_part_valid(strchr(res->name, '/') + 1))
                        return dp_error_set(err, -EINVAL, "%s: resource %s renamed to %s: not a valid resource name",
                                            c->source, res->base_name, res->name);
        }
        for (size_t i = 0; i < p->n_resources; i++)
                for (size_t j = i + 1; j < p->n_resources; j++)
                        if (streq(p->resources[i].name, p->resources[j].name))
                                return dp_error_set(err, -EINVAL,
                                                    "%s: sharing: resources %s and %s would both be "
                                                    "advertised as %s",
                                                    c->source, p->resources[i].base_name, p->resources[j].base_name,
                                                    p->resources[i].name);
        for (size_t i = 0; i < p->n_resources; i++)
                if (index_resource(&p->resources[i]) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        if (p->n_resources > 1) qsort(p->resources, p->n_resources, sizeof(dp_v1_resource), cmp_resource);
        *ret = TAKE_PTR(p);
        return 0;
}

int dp_v1_plan_update_health(dp_v1_plan *p, const dp_device_set *s) {
        assert_return(p && s, -EINVAL);
        int changed = 0;
        for (size_t i = 0; i < p->n_resources; i++) {
                dp_v1_resource *r = &p->resources[i];
                bool any = false;
                for (size_t k = 0; k < r->n_devices; k++) {
                        dp_v1_device *v = &r->devices[k];
                        if (v->gpu >= s->n_devices) continue;
                        const dp_hw_device *d = &s->devices[v->gpu];
                        dp_health h = d->health;
                        if (v->mig >= 0 && (size_t)v->mig < d->n_migs) h = dp_mig_effective_health(s, &d->migs[v->mig]);
                        if (h != v->health) {
                                v->health = h;
                                any = true;
                        }
                }
                if (any) {
                        r->generation++;
                        changed++;
                }
        }
        return changed;
}

dp_v1_resource *dp_v1_plan_find(const dp_v1_plan *p, const char *name) {
        for (size_t i = 0; p && name && i < p->n_resources; i++)
                if (streq(p->resources[i].name, name)) return &p->resources[i];
        return NULL;
}

dp_v1_device *dp_v1_resource_find(const dp_v1_resource *r, const char *id) {
        if (!r || !id) return NULL;
        if (r->by_id) {
                size_t lo = 0, hi = r->n_devices; /* first entry with an id >= id */
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (strcmp(r->by_id[mid]->id, id) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                return lo < r->n_devices && streq(r->by_id[lo]->id, id) ? (dp_v1_device *)r->by_id[lo] : NULL;
        }
        for (size_t i = 0; i < r->n_devices; i++)
                if (streq(r->devices[i].id, id)) return &r->devices[i];
        return NULL;
}

size_t dp_v1_resource_count(const dp_v1_resource *r) { return r ? r->n_devices : 0; }

size_t dp_v1_resource_count_healthy(const dp_v1_resource *r) {
        size_t n = 0;
        for (size_t i = 0; r && i < r->n_devices; i++)
                n += r->devices[i].health == DP_HEALTH_HEALTHY;
        return n;
}
