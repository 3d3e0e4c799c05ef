/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-sources.c — Kueue's DRA charging beyond the device count (v0.19,
 * pkg/dra counters.go, capacity.go, extended_resources.go):
 *   - counter sources (partitionable devices, gate
 *     KueueDRAIntegrationPartitionableDevices, on by default): a request of
 *     `count` devices of a class whose mapping has a counter source is
 *     charged count × the largest value of that counter the matching
 *     devices consume ("conservative charging");
 *   - capacity sources (consumable capacity, gate
 *     KueueDRAIntegrationConsumableCapacity, off by default): count × the
 *     largest charge over the matching devices of that capacity dimension:
 *     the request's capacity.requests entry, else the device's
 *     requestPolicy default, else its whole capacity, rounded up by the
 *     device's requestPolicy (a device that cannot satisfy it is skipped);
 *   - the extended-resource path (KEP-5004, gate
 *     KueueDRAIntegrationExtendedResource, on by default): a container's
 *     extended resource that a DeviceClass names as its extendedResourceName
 *     is charged under that class's mapping (or its own name), and may not
 *     go through a class with counter or capacity sources.
 * Matching devices are those of the source's driver in the input's
 * ResourceSlices (per pool, the newest generation, complete pools only)
 * that the source's deviceSelector, the DeviceClass's selectors and the
 * request's selectors all accept (CEL, devplane's evaluator). Errors read
 * as Kueue's field errors; they make the workload Inadmissible.
 */
#include <inttypes.h>
#include <stdio.h>

#include "base/strv.h"
#include "cel/cel.h"
#include "cel/slice-device.h"
#include "model/validate.h"
#include "queue/queue-internal.h"

static const dp_device_class *find_class(const dp_queue *q, const char *name) {
        return q_index_get(q, "D\x1f%s", name);
}

/* ---- the selectors: the source's, the class's, the request's ---- */

typedef struct progs {
        dp_cel_program **v;
        size_t n;
} progs;

static void progs_done(progs *p) {
        for (size_t i = 0; i < p->n; i++)
                dp_cel_program_free(p->v[i]);
        free(p->v);
}

static int progs_add(progs *p, const char *expr, dp_error *err) {
        dp_cel_program **v = realloc(p->v, (p->n + 1) * sizeof(*v));
        if (!v) return dp_error_set(err, -ENOMEM, "out of memory");
        p->v = v;
        int r = dp_cel_compile(expr, NULL, &v[p->n], err);
        if (r >= 0) p->n++;
        return r;
}

/* All selectors of one source's match, in Kueue's order of evaluation. */
typedef struct matcher {
        progs sel[3]; /* source deviceSelector, DeviceClass, request */
} matcher;

static void matcher_done(matcher *m) {
        for (size_t i = 0; i < ELEMENTSOF(m->sel); i++)
                progs_done(&m->sel[i]);
}

/* Compile; *ret_msg (Kueue's words) when the class is missing or a selector
 * does not compile. */
static int matcher_init(matcher *m, const dp_queue *q, const dp_kueue_dra_source *src,
                        const dp_device_request_spec *e, const char *where, char **ret_msg) {
        dp_error err = DP_ERROR_INIT;
        char body[600];
        const dp_device_class *dc = find_class(q, e->device_class_name);
        if (!dc) {
                snprintf(body, sizeof(body), "failed to get DeviceClass %s: deviceclasses.resource.k8s.io \"%s\" not found",
                         e->device_class_name, e->device_class_name);
                return (*ret_msg = dp_asprintf("%s: Internal error: %s", where, body)) ? 0 : -ENOMEM;
        }
        int r = progs_add(&m->sel[0], src->cel, &err);
        for (size_t i = 0; r >= 0 && i < dc->n_selectors; i++)
                if (dc->selectors[i].cel_expression) r = progs_add(&m->sel[1], dc->selectors[i].cel_expression, &err);
        for (size_t i = 0; r >= 0 && i < e->n_selectors; i++)
                if (e->selectors[i].cel_expression) r = progs_add(&m->sel[2], e->selectors[i].cel_expression, &err);
        if (r == -ENOMEM) return r;
        if (r < 0) return (*ret_msg = dp_asprintf("%s: Invalid value: null: CEL compilation failed: %s", where, err.msg))
                                  ? 0
                                  : -ENOMEM;
        return 0;
}

static const char *const sel_names[] = {"deviceSelector", "DeviceClass selector", "request selector"};

/* 1 when every selector accepts the device, 0 when one refuses it; a CEL
 * runtime error is Kueue's message. */
static int matcher_accepts(const matcher *m, const dp_resource_slice *s, const dp_device *d, const char *where,
                           char **ret_msg) {
        /* a validated device has at most this many of the two together */
        dp_cel_attribute attrs[DP_RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE];
        dp_cel_capacity caps[DP_RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE];
        dp_cel_device dev;
        if (d->n_attributes > ELEMENTSOF(attrs) || d->n_capacity > ELEMENTSOF(caps) ||
            dp_cel_device_from_slice(s, d, attrs, caps, &dev) < 0)
                return 0;
        for (size_t k = 0; k < ELEMENTSOF(m->sel); k++)
                for (size_t i = 0; i < m->sel[k].n; i++) {
                        dp_error err = DP_ERROR_INIT;
                        dp_cel_result res = {0};
                        int r = dp_cel_eval(m->sel[k].v[i], &dev, &res, &err);
                        if (r == -ENOMEM) return r;
                        if (r < 0) {
                                *ret_msg = dp_asprintf("%s: Internal error: CEL evaluation error in %s for device %s: %s",
                                                       where, sel_names[k], d->name, err.msg);
                                return *ret_msg ? -EINVAL : -ENOMEM;
                        }
                        if (!res.matches) return 0;
                }
        return 1;
}

/* ---- the devices a source sees ---- */

/* The slices of one driver whose pool Kueue reads: the pool's newest
 * generation, and only when all its resourceSliceCount slices are there. */
typedef struct qdriver {
        const char *driver;
        const dp_resource_slice **slices;
        size_t n;
} qdriver;

void q_drivers_free(dp_queue *q) {
        for (size_t i = 0; i < q->n_drivers; i++)
                free(q->drivers[i].slices);
        free(q->drivers);
        q->drivers = NULL;
        q->n_drivers = 0;
}

/* Per (driver, pool): the newest generation and how many slices it has;
 * found through the index ("G\x1fdriver\x1fpool": index + 1 into *ret). */
typedef struct qpool {
        int64_t generation, count;
} qpool;

static size_t pool_of(const dp_queue *q, const dp_resource_slice *s) {
        return (size_t)(uintptr_t)q_index_get(q, "G\x1f%s\x1f%s", s->driver, s->pool_name ? s->pool_name : "");
}

static int pools_count(dp_queue *q, const dp_object_list *l, qpool **ret, size_t *n) {
        size_t cap = 0;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE || !l->items[i].slice->driver) continue;
                const dp_resource_slice *s = l->items[i].slice;
                size_t k = pool_of(q, s);
                if (!k) {
                        if (DP_GROW(*ret, cap, *n + 1) < 0) return -ENOMEM;
                        (*ret)[*n] = (qpool){s->pool_generation, 0};
                        k = ++*n;
                        int r = q_index_put(q, (void *)(uintptr_t)k, "G\x1f%s\x1f%s", s->driver,
                                            s->pool_name ? s->pool_name : "");
                        if (r < 0) return r;
                }
                qpool *p = &(*ret)[k - 1];
                if (s->pool_generation > p->generation) *p = (qpool){s->pool_generation, 0};
                if (s->pool_generation == p->generation) p->count++;
        }
        return 0;
}

static int driver_add(dp_queue *q, const dp_resource_slice *s) {
        size_t k = (size_t)(uintptr_t)q_index_get(q, "S\x1f%s", s->driver);
        if (!k) {
                qdriver *v = realloc(q->drivers, (q->n_drivers + 1) * sizeof(*v));
                if (!v) return -ENOMEM;
                q->drivers = v;
                v[q->n_drivers] = (qdriver){s->driver, NULL, 0};
                k = ++q->n_drivers;
                int r = q_index_put(q, (void *)(uintptr_t)k, "S\x1f%s", s->driver);
                if (r < 0) return r;
        }
        qdriver *d = &q->drivers[k - 1];
        const dp_resource_slice **v = realloc(d->slices, (d->n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        d->slices = v;
        v[d->n++] = s;
        return 0;
}

static int index_slices(dp_queue *q, const dp_object_list *l) {
        _cleanup_free_ qpool *pv = NULL;
        size_t np = 0;
        int r = pools_count(q, l, &pv, &np);
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                if (l->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE || !l->items[i].slice->driver) continue;
                const dp_resource_slice *s = l->items[i].slice;
                const qpool *p = &pv[pool_of(q, s) - 1];
                if (s->pool_generation == p->generation && p->count == s->pool_resource_slice_count)
                        r = driver_add(q, s);
        }
        return r;
}

typedef int (*device_fn)(const dp_device *d, void *userdata);

/* Call fn for every device the source matches; the number matched in *n. */
static int each_match(const dp_queue *q, const dp_kueue_dra_source *src, const matcher *m, const char *where,
                      device_fn fn, void *userdata, int64_t *n, char **ret_msg) {
        *n = 0;
        size_t k = (size_t)(uintptr_t)q_index_get(q, "S\x1f%s", src->driver);
        const qdriver *d = k ? &q->drivers[k - 1] : NULL;
        for (size_t i = 0; d && i < d->n; i++) {
                const dp_resource_slice *s = d->slices[i];
                for (size_t j = 0; j < s->n_devices; j++) {
                        int r = matcher_accepts(m, s, &s->devices[j], where, ret_msg);
                        if (r < 0) return *ret_msg ? 0 : r;
                        if (!r) continue;
                        (*n)++;
                        if ((r = fn(&s->devices[j], userdata)) < 0) return r;
                }
        }
        return 0;
}

/* count × v, saturating; v is whole units of the quantity (rounded up). */
static int64_t charge_times(const dp_quantity *v, int64_t count) {
        int64_t x = v->nanos < 0 ? 0 : dp_quantity_value(v), out;
        return __builtin_mul_overflow(x, count > 1 ? count : 1, &out) ? INT64_MAX : out;
}

/* ---- counter sources ---- */

typedef struct counter_max {
        const char *name;
        bool found;
        dp_quantity max;
} counter_max;

static int counter_seen(const dp_device *d, void *userdata) {
        counter_max *c = userdata;
        for (size_t i = 0; i < d->n_consumes_counters; i++)
                for (size_t k = 0; k < d->consumes_counters[i].n_counters; k++) {
                        const dp_named_quantity *q = &d->consumes_counters[i].counters[k];
                        if (!streq(q->name, c->name)) continue;
                        if (!c->found || dp_quantity_cmp(&q->value, &c->max) > 0) c->max = q->value;
                        c->found = true;
                }
        return 0;
}

static int counter_charge(const dp_queue *q, const dp_kueue_dra_source *src, const char *quota,
                          const dp_device_request_spec *e, const matcher *m, const char *where,
                          dp_queue_request **out, size_t *n_out, char **ret_msg) {
        counter_max c = {.name = src->name};
        int64_t matched = 0;
        int r = each_match(q, src, m, where, counter_seen, &c, &matched, ret_msg);
        if (r < 0 || *ret_msg) return r;
        if (matched < e->count)
                *ret_msg = dp_asprintf("%s: Internal error: insufficient matching devices for counter driver: %" PRId64
                                       " device(s) match but %" PRId64 " requested",
                                       where, matched, e->count);
        else if (!c.found)
                *ret_msg = dp_asprintf("%s: Internal error: matched devices have no consumesCounters entry for counter "
                                       "\"%s\"",
                                       where, src->name);
        else
                return q_request_add(out, n_out, quota, charge_times(&c.max, e->count));
        return *ret_msg ? 0 : -ENOMEM;
}

/* ---- capacity sources ---- */

/* The charge one device asks (Kueue's chargeForDevice, roundToPolicy):
 * false when its requestPolicy cannot satisfy it. */
static bool device_capacity_charge(const dp_device_capacity *cap, const dp_quantity *explicit_req, dp_quantity *ret) {
        dp_quantity base = explicit_req ? *explicit_req : cap->has_default ? cap->default_ : cap->value;
        if (!cap->has_request_policy) return *ret = base, true;
        if (cap->n_valid_values) {
                for (size_t i = 0; i < cap->n_valid_values; i++)
                        if (dp_quantity_cmp(&cap->valid_values[i], &base) >= 0) return *ret = cap->valid_values[i], true;
                return false;
        }
        const dp_capacity_range *vr = cap->valid_range;
        if (!vr) return *ret = base, true;
        /* whole units, as Kueue's SafeValue */
        int64_t val = DP_MAX(dp_quantity_value(&base), dp_quantity_value(&vr->min));
        int64_t min = dp_quantity_value(&vr->min);
        int64_t step = vr->has_step ? dp_quantity_value(&vr->step) : 0;
        if (step > 0 && (val - min) % step) val = min + ((val - min) / step + 1) * step;
        if (vr->has_max && val > dp_quantity_value(&vr->max)) return false;
        *ret = dp_quantity_from_int(val, base.format);
        return true;
}

typedef struct capacity_max {
        const char *dimension;
        const dp_quantity *explicit_req;
        bool has_dimension, has_charge;
        dp_quantity max;
} capacity_max;

static int capacity_seen(const dp_device *d, void *userdata) {
        capacity_max *c = userdata;
        for (size_t i = 0; i < d->n_capacity; i++) {
                if (!streq(d->capacity[i].name, c->dimension)) continue;
                c->has_dimension = true;
                dp_quantity q;
                if (!device_capacity_charge(&d->capacity[i], c->explicit_req, &q)) continue;
                if (!c->has_charge || dp_quantity_cmp(&q, &c->max) > 0) c->max = q;
                c->has_charge = true;
        }
        return 0;
}

static int capacity_charge(const dp_queue *q, const dp_kueue_dra_source *src, const char *quota,
                           const dp_device_request_spec *e, const matcher *m, const char *where,
                           dp_queue_request **out, size_t *n_out, char **ret_msg) {
        capacity_max c = {.dimension = src->name};
        for (size_t i = 0; i < e->n_capacity_requests; i++)
                if (streq(e->capacity_requests[i].name, src->name)) c.explicit_req = &e->capacity_requests[i].value;
        int64_t matched = 0;
        int r = each_match(q, src, m, where, capacity_seen, &c, &matched, ret_msg);
        if (r < 0 || *ret_msg) return r;
        if (matched < e->count)
                *ret_msg = dp_asprintf("%s: Internal error: insufficient matching devices for capacity driver: %" PRId64
                                       " device(s) match but %" PRId64 " requested",
                                       where, matched, e->count);
        else if (!c.has_dimension)
                *ret_msg = dp_asprintf("%s: Internal error: matched devices have no capacity dimension \"%s\"", where,
                                       src->name);
        else if (!c.has_charge)
                *ret_msg = dp_asprintf("%s: Invalid value: null: capacity request cannot be satisfied by any matched "
                                       "device's RequestPolicy for dimension \"%s\"",
                                       where, src->name);
        else
                return q_request_add(out, n_out, quota, charge_times(&c.max, e->count));
        return *ret_msg ? 0 : -ENOMEM;
}

/* ---- one request ---- */

#define MAX_SOURCES_PER_CLASS 64

int q_dra_source_charge(const dp_queue *q, const dp_device_request_spec *e, size_t ps,
                        size_t claim, size_t req, dp_queue_request **out, size_t *n_out, char **ret_msg) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        const dp_kueue_dra_source *src[MAX_SOURCES_PER_CLASS];
        const char *quota[MAX_SOURCES_PER_CLASS];
        dp_kueue_source_kind kind = DP_KUEUE_SOURCE_COUNTER;
        size_t n = dp_kueue_config_sources(cfg, e->device_class_name, kind, src, quota, MAX_SOURCES_PER_CLASS);
        if (!n) {
                kind = DP_KUEUE_SOURCE_CAPACITY;
                n = dp_kueue_config_sources(cfg, e->device_class_name, kind, src, quota, MAX_SOURCES_PER_CLASS);
        }
        if (!n) return 0;
        n = DP_MIN(n, (size_t)MAX_SOURCES_PER_CLASS);
        _cleanup_free_ char *where = dp_asprintf(
                "spec.podSets[%zu].template.spec.resourceClaims[%zu].devices.requests[%zu]", ps, claim, req);
        if (!where) return -ENOMEM;
        /* the capacity path charges every source under the class's own mapping */
        const char *cap_quota = dp_kueue_config_map(cfg, e->device_class_name);
        for (size_t i = 0; i < n && !*ret_msg; i++) {
                matcher m = {0};
                int r = matcher_init(&m, q, src[i], e, where, ret_msg);
                if (r >= 0 && !*ret_msg)
                        r = kind == DP_KUEUE_SOURCE_COUNTER
                                    ? counter_charge(q, src[i], quota[i], e, &m, where, out, n_out, ret_msg)
                                    : capacity_charge(q, src[i], cap_quota, e, &m, where, out, n_out, ret_msg);
                matcher_done(&m);
                if (r < 0) return r;
        }
        return 1;
}

/* ---- the extended-resource path ---- */

/* Whether DeviceClass a wins over b for an extended resource, as Kubernetes
 * picks: the newer, ties to the first name. */
static bool class_wins(const dp_device_class *a, const dp_device_class *b) {
        const char *ta = a->meta.creation_timestamp ? a->meta.creation_timestamp : "";
        const char *tb = b->meta.creation_timestamp ? b->meta.creation_timestamp : "";
        int c = strcmp(ta, tb);
        return c > 0 || (c == 0 && strcmp(a->meta.name, b->meta.name) < 0);
}

int q_index_device_classes(dp_queue *q, const dp_object_list *l) {
        int r = index_slices(q, l);
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                if (l->items[i].hdr->kind != DP_KIND_DEVICE_CLASS) continue;
                const dp_device_class *dc = l->items[i].device_class;
                if (!dc->meta.name) continue;
                r = q_index_put(q, (void *)dc, "D\x1f%s", dc->meta.name);
                const char *ern = dc->extended_resource_name;
                if (r < 0 || !ern || q_index_get(q, "E\x1f%s", ern)) continue;
                /* the first class of this name: the winner among it and the later ones */
                const dp_device_class *best = dc;
                for (size_t j = i + 1; j < l->n; j++)
                        if (l->items[j].hdr->kind == DP_KIND_DEVICE_CLASS &&
                            streq_ptr(l->items[j].device_class->extended_resource_name, ern) &&
                            l->items[j].device_class->meta.name && class_wins(l->items[j].device_class, best))
                                best = l->items[j].device_class;
                r = q_index_put(q, (void *)best, "E\x1f%s", ern);
        }
        return r;
}

/* The first container (init containers first) requesting name, for the path. */
static char *container_path(const dp_pod *p, size_t ps, const char *name) {
        for (int pass = 0; pass < 2; pass++) {
                const dp_container *cs = pass ? p->containers : p->init_containers;
                size_t nc = pass ? p->n_containers : p->n_init_containers;
                for (size_t c = 0; c < nc; c++)
                        for (size_t i = 0; i < cs[c].n_requests; i++)
                                if (streq(cs[c].requests[i].name, name))
                                        return dp_asprintf("spec.podSets[%zu].template.spec.%s[%zu]", ps,
                                                           pass ? "containers" : "initContainers", c);
        }
        return dp_asprintf("spec.podSets[%zu].template.spec", ps);
}

/* A class with counter or capacity sources cannot back an extended resource. */
static int sourced_class(const dp_kueue_config *cfg, const dp_pod *p, size_t ps, const char *name,
                         const dp_device_class *dc, char **ret_msg) {
        const dp_kueue_dra_source *v[1];
        const char *quota[1];
        bool counters = dp_kueue_config_sources(cfg, dc->meta.name, DP_KUEUE_SOURCE_COUNTER, v, quota, 1) > 0;
        if (!counters && !dp_kueue_config_sources(cfg, dc->meta.name, DP_KUEUE_SOURCE_CAPACITY, v, quota, 1)) return 0;
        _cleanup_free_ char *path = container_path(p, ps, name);
        if (!path) return -ENOMEM;
        *ret_msg = dp_asprintf("%s: Invalid value: \"%s\": extended resource %s resolves to DeviceClass %s with %s "
                               "configured; use ResourceClaimTemplates with %s",
                               path, name, name, dc->meta.name, counters ? "counters" : "capacity sources",
                               counters ? "CEL selectors for counter-based quota"
                                        : "capacity.requests for capacity-based quota");
        return *ret_msg ? 1 : -ENOMEM;
}

/* The quota key of pod set request i under the extended-resource path:
 * NULL when it stays as it is; *ret_msg when Kueue refuses it. */
static int extended_key(const dp_queue *q, const dp_kueue_config *cfg, const dp_queue_podset *ps, size_t ps_index,
                        size_t i, const char **ret_key, char **ret_msg) {
        const char *name = ps->requests[i].name;
        *ret_key = NULL;
        if (ps->requests[i].value <= 0 || !dp_is_extended_resource_name(name)) return 0;
        const dp_device_class *dc = q_index_get(q, "E\x1f%s", name);
        if (!dc) return 0;
        int r = sourced_class(cfg, ps->tmpl, ps_index, name, dc, ret_msg);
        if (r != 0) return r < 0 ? r : 0;
        /* Kueue also checks each container's request is an integer: the API
         * server's validation (and devplane's) already refuses anything else */
        const char *key = dp_kueue_config_map(cfg, dc->meta.name);
        *ret_key = key && !streq(key, name) ? key : NULL;
        return 0;
}

int q_dra_extended(const dp_queue *q, dp_queue_workload *w, size_t ps_index) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        dp_queue_podset *ps = &w->podsets[ps_index];
        if ((cfg && (cfg->dra_disabled || cfg->extended_resource_disabled)) || !ps->tmpl || w->dra_message) return 0;
        /* decide every name first (a moved request must not be looked at again) */
        size_t n = ps->n_requests;
        _cleanup_free_ const char **keys = calloc(n + 1, sizeof(*keys));
        if (!keys) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int r = extended_key(q, cfg, ps, ps_index, i, &keys[i], &w->dra_message);
                if (r < 0 || w->dra_message) return r;
        }
        /* then move those charged under their class's mapping, from the end */
        for (size_t i = n; i-- > 0;) {
                if (!keys[i]) continue;
                int64_t v = ps->requests[i].value;
                free(ps->requests[i].name);
                memmove(&ps->requests[i], &ps->requests[i + 1], (ps->n_requests - i - 1) * sizeof(*ps->requests));
                ps->n_requests--;
                int r = q_request_add(&ps->requests, &ps->n_requests, keys[i], v);
                if (r < 0) return r;
        }
        return 0;
}
