/* SPDX-License-Identifier: Apache-2.0
 *
 * generate.c — names for objects written with metadata.generateName, as the
 * API server gives them on create, but the same on every run of the same
 * input (model.h, dp_model_generate_names).
 */
#include <stdio.h>

#include "base/hashmap.h"
#include "model/model.h"

/* The API server's generated names: the prefix cut so that prefix + suffix
 * fit a DNS label (maxGeneratedNameLength = 63 - 5), and the suffix drawn
 * from the alphabet of apimachinery's rand.String (no vowels, no 0/1/3). */
#define MAX_PREFIX (63 - DP_GENERATE_NAME_SUFFIX)
static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

static uint64_t fnv1a(const char *s, uint64_t h) {
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 1099511628211ull;
        }
        return h;
}

static char *gen_name(const char *key, const char *prefix, size_t k) {
        char num[32];
        snprintf(num, sizeof(num), "#%zu", k);
        uint64_t h = fnv1a(num, fnv1a(key, 14695981039346656037ull));
        char suffix[DP_GENERATE_NAME_SUFFIX + 1];
        for (size_t i = 0; i < DP_GENERATE_NAME_SUFFIX; i++) {
                suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
                h /= sizeof(alphabet) - 1;
        }
        suffix[DP_GENERATE_NAME_SUFFIX] = 0;
        return dp_asprintf("%.*s%s", (int)MAX_PREFIX, prefix, suffix);
}

static char *taken_key(dp_object o, const char *name) {
        const dp_object_meta *m = dp_object_meta_of(o);
        return dp_asprintf("%d/%s/%s", (int)o.hdr->kind, m->namespace ? m->namespace : "", name);
}

static void free_values(dp_hashmap *m) {
        size_t i = 0;
        void *v;
        while (dp_hashmap_iter(m, &i, NULL, &v))
                free(v);
}

typedef struct {
        dp_hashmap *taken;  /* kind/ns/name -> that key string (owned: freed as a value) */
        dp_hashmap *counts; /* kind/ns/prefix (owned key) -> a size_t counter (owned) */
} gen_ctx;

static int take(gen_ctx *g, char *key) {
        int r = dp_hashmap_put(g->taken, key, key);
        if (r < 0) free(key);
        return r;
}

int dp_model_generate_names(dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        /* most inputs name every object: nothing to make, no map of names */
        bool any = false;
        for (size_t i = 0; !any && i < l->n; i++) {
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                any = !m->name && m->generate_name;
        }
        if (!any) return 0;
        gen_ctx g = {dp_hashmap_new(), dp_hashmap_new()};
        int r = g.taken && g.counts ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                if (!m->name) continue;
                char *key = taken_key(l->items[i], m->name);
                r = key ? take(&g, key) : -ENOMEM;
                if (r == -EEXIST) r = 0; /* a duplicate: validation says so */
        }
        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                dp_object_meta *m = dp_object_meta_of(l->items[i]);
                if (m->name || !m->generate_name) continue;
                _cleanup_free_ char *ck = dp_asprintf("%d/%s/%s", (int)l->items[i].hdr->kind,
                                                      m->namespace ? m->namespace : "", m->generate_name);
                if (!ck) {
                        r = -ENOMEM;
                        break;
                }
                size_t *cnt = dp_hashmap_get(g.counts, ck);
                if (!cnt) {
                        if (!(cnt = calloc(1, sizeof(*cnt)))) {
                                r = -ENOMEM;
                                break;
                        }
                        char *kk = dp_strdup(ck); /* the map's key: freed with the counters */
                        if (!kk || dp_hashmap_put(g.counts, kk, cnt) < 0) {
                                free(kk);
                                free(cnt);
                                r = -ENOMEM;
                                break;
                        }
                }
                for (;;) {
                        char *name = gen_name(ck, m->generate_name, (*cnt)++);
                        if (!name) {
                                r = -ENOMEM;
                                break;
                        }
                        char *key = taken_key(l->items[i], name);
                        if (!key) {
                                free(name);
                                r = -ENOMEM;
                                break;
                        }
                        r = take(&g, key);
                        if (r == -EEXIST) { /* taken: the next one */
                                free(name);
                                r = 0;
                                continue;
                        }
                        if (r < 0)
                                free(name);
                        else
                                m->name = name;
                        break;
                }
        }
        if (g.taken) free_values(g.taken);
        if (g.counts) {
                size_t i = 0;
                const char *k;
                void *v;
                while (dp_hashmap_iter(g.counts, &i, &k, &v)) {
                        free(v);
                        free((char *)k);
                }
        }
        dp_hashmap_free(g.taken);
        dp_hashmap_free(g.counts);
        return r == -ENOMEM ? dp_error_set(err, -ENOMEM, "out of memory") : r;
}
