/* SPDX-License-Identifier: Apache-2.0
 *
 * validate-pools.c — rules that span objects: duplicate objects, and the
 * pool rules of resource.k8s.io (a pool is (driver, pool name); only slices
 * at the pool's highest generation count):
 *   - slices of one generation agree on resourceSliceCount, and there are
 *     not more of them than it says;
 *   - device names and counter-set names are unique in the pool;
 *   - a device consumes only counters of a counter set of its pool (checked
 *     once the pool is complete: a missing slice may hold the set), and never
 *     more of a counter than its set holds.
 * An incomplete pool (fewer slices than resourceSliceCount) is not an error:
 * drivers publish slices one by one and the allocator skips such pools.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "model/decode-internal.h"

static int fail_at(const dp_resource_slice *s, dp_error *err, int code, const char *fmt, ...) _printf_(4, 5);
static int fail_at(const dp_resource_slice *s, dp_error *err, int code, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return dp_error_set(err, code, "%s: ResourceSlice %s: %s", s->hdr.source ? s->hdr.source : "<input>",
                            s->meta.name ? s->meta.name : "(unnamed)", msg);
}

/* "a/b/c" in one allocation (no printf: one per object and slice) */
static char *join3(const char *a, const char *b, const char *c) {
        size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
        char *k = malloc(la + lb + lc + 3), *p = k;
        if (!k) return NULL;
        memcpy(p, a, la);
        p += la;
        *p++ = '/';
        memcpy(p, b, lb);
        p += lb;
        if (c) {
                *p++ = '/';
                memcpy(p, c, lc);
                p += lc;
        }
        *p = 0;
        return k;
}

typedef struct pool {
        const char *driver, *name;
        char *key; /* "driver/name": a driver name has no '/' */
        const dp_resource_slice **slices; /* all generations */
        size_t n, cap;
} pool;

static int check_pool(pool *p, dp_error *err) {
        int64_t gen = 0;
        for (size_t i = 0; i < p->n; i++)
                gen = DP_MAX(gen, p->slices[i]->pool_generation);
        const dp_resource_slice *first = NULL;
        size_t count = 0;
        for (size_t i = 0; i < p->n; i++) {
                const dp_resource_slice *s = p->slices[i];
                if (s->pool_generation != gen) continue;
                count++;
                if (!first)
                        first = s;
                else if (s->pool_resource_slice_count != first->pool_resource_slice_count)
                        return fail_at(s, err, -EINVAL,
                                       "spec.pool.resourceSliceCount: %" PRId64 " disagrees with ResourceSlice %s "
                                       "(%" PRId64 ") of the same pool %s and generation %" PRId64,
                                       s->pool_resource_slice_count, first->meta.name ? first->meta.name : "",
                                       first->pool_resource_slice_count, p->name, gen);
        }
        if (first && (int64_t)count > first->pool_resource_slice_count)
                return fail_at(first, err, -EINVAL,
                               "spec.pool: pool %s of driver %s has %zu slices at generation %" PRId64
                               " but resourceSliceCount says %" PRId64,
                               p->name, p->driver, count, gen, first->pool_resource_slice_count);
        bool complete = first && (int64_t)count == first->pool_resource_slice_count;

        _cleanup_(dp_hashmap_freep) dp_hashmap *devices = dp_hashmap_new();
        _cleanup_(dp_hashmap_freep) dp_hashmap *sets = dp_hashmap_new();
        if (!devices || !sets) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < p->n; i++) {
                const dp_resource_slice *s = p->slices[i];
                if (s->pool_generation != gen) continue;
                for (size_t j = 0; j < s->n_devices; j++) {
                        int r = dp_hashmap_put(devices, s->devices[j].name, (void *)s);
                        if (r == -EEXIST) {
                                const dp_resource_slice *o = dp_hashmap_get(devices, s->devices[j].name);
                                return fail_at(s, err, -EINVAL,
                                               "spec.devices[%zu].name: duplicate device name %s in pool %s (also in "
                                               "ResourceSlice %s)",
                                               j, s->devices[j].name, p->name, o->meta.name ? o->meta.name : "");
                        }
                        if (r < 0) return dp_error_set(err, r, "out of memory");
                }
                for (size_t j = 0; j < s->n_shared_counters; j++) {
                        int r = dp_hashmap_put(sets, s->shared_counters[j].name, (void *)&s->shared_counters[j]);
                        if (r == -EEXIST)
                                return fail_at(s, err, -EINVAL,
                                               "spec.sharedCounters[%zu].name: duplicate counter set %s in pool %s", j,
                                               s->shared_counters[j].name, p->name);
                        if (r < 0) return dp_error_set(err, r, "out of memory");
                }
        }
        for (size_t i = 0; i < p->n; i++) {
                const dp_resource_slice *s = p->slices[i];
                if (s->pool_generation != gen) continue;
                for (size_t j = 0; j < s->n_devices; j++)
                        for (size_t k = 0; k < s->devices[j].n_consumes_counters; k++) {
                                const dp_counter_consumption *cc = &s->devices[j].consumes_counters[k];
                                const dp_counter_set *set = dp_hashmap_get(sets, cc->counter_set);
                                if (!set && !complete) continue;
                                dctx c;
                                DCTX_INIT(&c, err);
                                path_key(&c, "spec");
                                path_key(&c, "devices");
                                path_index(&c, j);
                                path_key(&c, "consumesCounters");
                                path_index(&c, k);
                                int r;
                                if (!set)
                                        r = dfail(&c, NULL, -EINVAL,
                                                  "counterSet: unknown counter set %s (pool %s has no such set)",
                                                  cc->counter_set, p->name);
                                else
                                        r = check_consumption(&c, cc, set);
                                if (r < 0) {
                                        dp_error_prefix(err, "%s: ResourceSlice %s",
                                                        s->hdr.source ? s->hdr.source : "<input>",
                                                        s->meta.name ? s->meta.name : "(unnamed)");
                                        return r;
                                }
                        }
        }
        return 0;
}

static int check_pools(const dp_object_list *l, dp_error *err) {
        pool *pools = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        /* pools in the order they first appear, found by key (index + 1) */
        _cleanup_(dp_hashmap_freep) dp_hashmap *index = dp_hashmap_new();
        if (!index) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                if (l->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE) continue;
                const dp_resource_slice *s = l->items[i].slice;
                _cleanup_free_ char *key = join3(s->driver, s->pool_name, NULL);
                if (!key) {
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                size_t j = (size_t)(uintptr_t)dp_hashmap_get(index, key);
                if (j) {
                        j--;
                } else {
                        if (DP_GROW(pools, cap, n + 1) < 0 || dp_hashmap_put(index, key, (void *)(uintptr_t)(n + 1)) < 0) {
                                r = dp_error_set(err, -ENOMEM, "out of memory");
                                break;
                        }
                        j = n;
                        pools[n++] = (pool){.driver = s->driver, .name = s->pool_name, .key = TAKE_PTR(key)};
                }
                if (DP_GROW(pools[j].slices, pools[j].cap, pools[j].n + 1) < 0) {
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                pools[j].slices[pools[j].n++] = s;
        }
        for (size_t j = 0; j < n && r >= 0; j++)
                r = check_pool(&pools[j], err);
        index = dp_hashmap_free(index);
        for (size_t j = 0; j < n; j++) {
                free(pools[j].slices);
                free(pools[j].key);
        }
        free(pools);
        return r;
}

static int check_duplicates(const dp_object_list *l, dp_error *err) {
        _cleanup_(dp_hashmap_freep) dp_hashmap *seen = dp_hashmap_new();
        if (!seen) return dp_error_set(err, -ENOMEM, "out of memory");
        char **keys = calloc(l->n ? l->n : 1, sizeof(char *));
        if (!keys) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = 0;
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                if (!m->name) continue; /* generateName: the API server would pick a fresh name */
                char kind[24], *d = kind + sizeof kind;
                unsigned v = (unsigned)l->items[i].hdr->kind;
                *--d = 0;
                do
                        *--d = (char)('0' + v % 10);
                while ((v /= 10));
                /* extension kinds share one dp_kind: their own names tell them apart */
                const char *kn = l->items[i].hdr->kind == DP_KIND_EXT ? dp_object_kind_name(l->items[i]) : d;
                keys[i] = join3(kn, m->namespace ? m->namespace : "", m->name);
                if (!keys[i]) {
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                r = dp_hashmap_put(seen, keys[i], (void *)&l->items[i]);
                if (r == -EEXIST) {
                        const dp_object *o = dp_hashmap_get(seen, keys[i]);
                        char who[640];
                        dp_object_describe(l->items[i], who, sizeof(who));
                        r = dp_error_set(err, -EINVAL,
                                         "%s: %s: metadata.name: duplicate object, also defined in %s (document %zu)",
                                         l->items[i].hdr->source ? l->items[i].hdr->source : "<input>", who,
                                         o->hdr->source ? o->hdr->source : "<input>", o->hdr->doc_index + 1);
                } else if (r < 0) {
                        r = dp_error_set(err, r, "out of memory");
                }
        }
        seen = dp_hashmap_free(seen);
        for (size_t i = 0; i < l->n; i++)
                free(keys[i]);
        free(keys);
        return r;
}

int dp_model_validate(const dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        for (size_t i = 0; i < l->n; i++) {
                int r = dp_object_validate(l->items[i], err);
                if (r < 0) return r;
        }
        int r = check_duplicates(l, err);
        if (r < 0) return r;
        return check_pools(l, err);
}
