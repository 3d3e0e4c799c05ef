/* SPDX-License-Identifier: Apache-2.0
 * firstfit.c — "the first node, in name order, where the claims fit".
 *
 * Allocation in a snapshot is monotone: commits and marks only take devices,
 * counters and capacity away, never give them back (there is no release).
 * So once claims of a given shape failed on a node they fail there for the
 * snapshot's lifetime, and a frontier per shape (the first node not yet
 * known to fail) turns "scan every node for every claim" from quadratic into
 * linear. The shape is the exact serialisation of everything that decides
 * feasibility (selector ids, counts, modes, tolerations, capacity, names the
 * constraints refer to: dp_alloc_claims_shape in shape.c, which the
 * scheduler uses for its own memo too), never a hash alone. */
#include <stdio.h>

#include "alloc/internal.h"
#include "alloc/shape.h"

static int prefix_lines(void *userdata, size_t node_index, const char *name, const char *text, size_t len);

int dp_alloc_allocate_first_fit(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims,
                                const dp_alloc_options *opts, size_t *ret_node, dp_alloc_result **ret_results,
                                dp_strbuf *why, dp_error *err) {
        assert_return(s && (claims || n_claims == 0) && ret_node && ret_results, -EINVAL);
        int r = dp_alloc_freeze(s, err);
        if (r < 0) return r;
        _cleanup_strbuf_ dp_strbuf key = DP_STRBUF_INIT;
        dp_alloc_claims_shape(claims, n_claims, &key);
        if (dp_strbuf_failed(&key)) return alloc_oom(err, "describing the shape of the claims");
        /* allocationMode All leaves shared devices with no room left out of
         * "all": a smaller "all" may fit where a larger one did not, so claims
         * with such a request are not monotone and keep no frontier */
        bool monotone = true;
        for (size_t c = 0; c < n_claims; c++)
                for (size_t i = 0; i < claims[c]->n_requests; i++)
                        for (size_t k = 0; k < claims[c]->requests[i].n_subs; k++)
                                if (claims[c]->requests[i].subs[k].all) monotone = false;
        void *v = monotone ? dp_hashmap_get(s->frontier, dp_strbuf_str(&key)) : NULL;
        size_t start = v ? (size_t)((uintptr_t)v - 1) : 0;
        dp_alloc_options quiet = opts ? *opts : (dp_alloc_options){0};
        quiet.explain = false;
        for (size_t i = start; i < s->n_nodes; i++) {
                r = dp_alloc_allocate(s, s->strs[s->nodes[i].name], claims, n_claims, &quiet, ret_results, NULL, err);
                if (r < 0) return r;
                if (r > 0) {
                        *ret_node = i;
                        break;
                }
        }
        size_t frontier = r > 0 ? *ret_node : s->n_nodes;
        if (monotone && frontier != start) {
                int q;
                if (v) {
                        q = dp_hashmap_replace(s->frontier, dp_strbuf_str(&key), (void *)(uintptr_t)(frontier + 1));
                } else {
                        /* the key lives as long as the snapshot: keep it among its blocks */
                        char *k = NULL;
                        q = DP_GROW(s->blocks, s->cap_blocks, s->n_blocks + 1);
                        if (q == 0 && !(k = dp_strbuf_steal(&key))) q = -ENOMEM;
                        if (q == 0) q = dp_hashmap_put(s->frontier, k, (void *)(uintptr_t)(frontier + 1));
                        if (q == 0) s->blocks[s->n_blocks++] = k;
                        else free(k);
                }
                if (q < 0) {
                        if (r > 0) *ret_results = dp_alloc_results_free(*ret_results, n_claims);
                        return alloc_oom(err, "recording the first node where claims of this shape may fit");
                }
        }
        if (r > 0) return 1;
        if (why && (!opts || opts->explain)) {
                r = dp_alloc_explain_nodes(s, claims, n_claims, opts, prefix_lines, why, err);
                if (r < 0) return r;
        }
        if (s->n_nodes == 0 && why) dp_strbuf_puts(why, "no nodes\n");
        return 0;
}

/* "node: line" for each line of a node's reasons (the form of `why` above). */
static int prefix_lines(void *userdata, size_t node_index, const char *name, const char *text, size_t len) {
        dp_strbuf *why = userdata;
        (void)node_index;
        size_t name_len = strlen(name);
        const char *p = text, *end = text + len;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                dp_strbuf_append(why, name, name_len);
                dp_strbuf_append(why, ": ", 2);
                dp_strbuf_append(why, p, n);
                dp_strbuf_putc(why, '\n');
                p += n + (nl ? 1 : 0);
        }
        return 0;
}

int dp_alloc_explain_nodes(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims,
                           const dp_alloc_options *opts, dp_alloc_node_reason_fn fn, void *userdata, dp_error *err) {
        assert_return(s && (claims || n_claims == 0) && fn, -EINVAL);
        int r = dp_alloc_freeze(s, err);
        if (r < 0) return r;
        dp_alloc_options o = opts ? *opts : (dp_alloc_options){0};
        o.explain = true;
        /* one buffer for every node's reasons */
        _cleanup_strbuf_ dp_strbuf one = DP_STRBUF_INIT;
        for (size_t i = 0; i < s->n_nodes; i++) {
                const char *name = s->strs[s->nodes[i].name];
                dp_alloc_result *none = NULL;
                dp_strbuf_truncate(&one, 0);
                r = dp_alloc_allocate(s, name, claims, n_claims, &o, &none, &one, err);
                if (r < 0) return r;
                if (dp_strbuf_failed(&one)) return alloc_oom(err, "explaining why the claims do not fit node %s", name);
                if (r > 0) { /* cannot happen: allocation is monotone */
                        dp_alloc_results_free(none, n_claims);
                        continue;
                }
                r = fn(userdata, i, name, dp_strbuf_str(&one), one.len);
                if (r < 0) return r;
        }
        return 0;
}
