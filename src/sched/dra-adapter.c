/* SPDX-License-Identifier: Apache-2.0
 * dra-adapter.c — the scheduler over alloc/adapter.h (see dra-adapter.h). */
#include "alloc/adapter.h"
#include "sched/dra-adapter.h"

struct dp_sched_dra {
        dp_alloc_cluster *cluster;
        dp_alloc_claim_spec **specs;
        size_t n_specs, cap_specs;
};

int dp_sched_dra_new(const dp_object_list *view, dp_sched_dra **ret, dp_error *err) {
        dp_sched_dra *d = calloc(1, sizeof(*d));
        if (!d) return -ENOMEM;
        int r = dp_alloc_cluster_new(view, &d->cluster, err);
        if (r < 0) {
                free(d);
                return r;
        }
        *ret = d;
        return 0;
}

dp_sched_dra *dp_sched_dra_free(dp_sched_dra *d) {
        if (!d) return NULL;
        for (size_t i = 0; i < d->n_specs; i++)
                dp_alloc_claim_spec_free(d->specs[i]);
        free(d->specs);
        dp_alloc_cluster_free(d->cluster);
        free(d);
        return NULL;
}

int dp_sched_dra_prepare(dp_sched_dra *d, const dp_resource_claim *c, size_t *ret_idx, dp_error *err) {
        if (DP_GROW(d->specs, d->cap_specs, d->n_specs + 1) < 0) return -ENOMEM;
        dp_alloc_claim_spec *cs = NULL;
        int r = dp_alloc_claim_prepare(d->cluster, c, &cs, err);
        if (r < 0) return r;
        d->specs[d->n_specs] = cs;
        *ret_idx = d->n_specs++;
        return 0;
}

int dp_sched_dra_try(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                     dp_allocation_result ***ret_allocs, dp_strbuf *why, dp_error *err) {
        if (n == 0) {
                *ret_sub = 0;
                if (ret_allocs) *ret_allocs = NULL;
                return 1;
        }
        _cleanup_free_ const dp_alloc_claim **claims = calloc(n, sizeof(*claims));
        if (!claims) return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                claims[i] = &d->specs[idx[i]]->claim;
        dp_alloc_result *res = NULL;
        dp_alloc_options opts = {.explain = why != NULL};
        int r = dp_alloc_allocate(dp_alloc_cluster_snapshot(d->cluster), node, claims, n, &opts, &res, why, err);
        if (r <= 0) return r;
        unsigned sub = 0;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < res[i].n_devices; k++)
                        sub += res[i].devices[k].sub_index;
        *ret_sub = sub;
        if (ret_allocs) {
                dp_allocation_result **out = calloc(n, sizeof(*out));
                if (!out) r = -ENOMEM;
                for (size_t i = 0; r > 0 && i < n; i++)
                        r = dp_alloc_result_to_model(d->cluster, d->specs[idx[i]], &res[i], &out[i], err) < 0 ? -ENOMEM
                                                                                                              : 1;
                if (r < 0 && out) {
                        for (size_t i = 0; i < n; i++)
                                dp_allocation_result_free(out[i]);
                        free(out);
                } else
                        *ret_allocs = out;
        }
        dp_alloc_results_free(res, n);
        return r;
}
