/* SPDX-License-Identifier: Apache-2.0
 * alloc-test-util.h — compact builders for allocator snapshots in C tests,
 * fuzzers and benchmarks. A test device is a name plus string attributes;
 * a test selector is "attribute == value" (or "*" for any device). */
#pragma once

#include <stdio.h>

#include "alloc/alloc.h"

typedef struct tdev {
        char name[64];
        char keys[8][64];
        char vals[8][64];
        int n;
} tdev;

typedef struct tsel {
        char key[64];
        char val[64];
} tsel;

static inline int tsel_fn(void *ud, void *selector, void *device_user, dp_error *err) {
        (void)ud;
        const tsel *s = selector;
        const tdev *d = device_user;
        if (!s || streq(s->key, "*")) return 1;
        if (streq(s->key, "!error")) return dp_error_set(err, -EINVAL, "no such key: %s", s->val);
        for (int i = 0; i < d->n; i++)
                if (streq(d->keys[i], s->key)) return streq(d->vals[i], s->val);
        return 0;
}

#define GI(x) ((__int128)(x) * 1024 * 1024 * 1024 * 1000000000)
#define QN(x) ((__int128)(x) * 1000000000)

/* A pool of `n` devices "<prefix><i>" on node `node` with attribute
 * "example.com/idx" and optional "example.com/<key>" = vals[i % nv]. */
static inline int add_simple_pool(dp_alloc_snapshot *s, tdev *store, const char *node, const char *prefix, int n,
                                  const char *key, const char *const *vals, int nv) {
        dp_alloc_slice_spec sp = {.name = node, .driver = "example.com", .pool = node, .generation = 1,
                                  .slice_count = 1, .node_name = node};
        uint32_t sl;
        int r = dp_alloc_add_slice(s, &sp, &sl);
        if (r < 0) return r;
        for (int i = 0; i < n; i++) {
                tdev *t = &store[i];
                memset(t, 0, sizeof(*t));
                snprintf(t->name, sizeof(t->name), "%s%d", prefix, i);
                dp_alloc_attr at[2] = {{.name = "idx", .type = DP_ALLOC_ATTR_INT, .i = i}};
                size_t na = 1;
                if (key) {
                        at[1] = (dp_alloc_attr){.name = key, .type = DP_ALLOC_ATTR_STRING, .s = vals[i % nv]};
                        na = 2;
                        snprintf(t->keys[0], 64, "%s", key);
                        snprintf(t->vals[0], 64, "%s", vals[i % nv]);
                        t->n = 1;
                }
                dp_alloc_device_spec d = {.name = t->name, .attrs = at, .n_attrs = na, .user = t};
                r = dp_alloc_add_device(s, sl, &d, NULL);
                if (r < 0) return r;
        }
        return 0;
}

/* Print results as one line per device, for comparisons. */
static inline void dump_result(const dp_alloc_result *r, dp_strbuf *out) {
        for (size_t i = 0; i < r->n_devices; i++) {
                const dp_alloc_device_result *d = &r->devices[i];
                dp_strbuf_printf(out, "%s=%s/%s/%s%s%s%s\n", d->request, d->driver, d->pool, d->device_name,
                                 d->admin_access ? " admin" : "", d->share_id[0] ? " share=" : "", d->share_id);
        }
        if (r->nodes == DP_ALLOC_NODES_NAME) dp_strbuf_printf(out, "node=%s\n", r->node_name);
        if (r->nodes == DP_ALLOC_NODES_TERM) dp_strbuf_printf(out, "term=%zu/%zu\n", r->n_term_exprs, r->n_term_fields);
}
