/* SPDX-License-Identifier: Apache-2.0
 * v1-preferred.c — GetPreferredAllocation: topology-aware, deterministic. */
#include "devices/v1.h"

typedef struct pick {
        const dp_v1_resource *res;
        const dp_device_set *set;
        size_t *cand; /* positions in res->devices, in resource order */
        size_t n_cand;
        bool *chosen; /* per candidate */
} pick;

/* Are the devices behind two candidates "close": NVLink for whole devices,
 * the same parent GPU for MIG instances. */
static bool linked(const pick *k, size_t a, size_t b) {
        const dp_v1_device *x = &k->res->devices[k->cand[a]], *y = &k->res->devices[k->cand[b]];
        if (x->mig >= 0 || y->mig >= 0) return x->gpu == y->gpu;
        return dp_device_set_nvlinked(k->set, x->gpu, y->gpu);
}

/* Greedy growth state: per candidate, its links to the members; per NUMA
 * node (-1..63 at index +1), whether a member sits there. Kept up to date
 * as members are added, so one step costs O(candidates). */
typedef struct growth {
        size_t *links;
        bool numa_used[65];
} growth;

static void add_member(const pick *k, bool *sel, growth *g, size_t m) {
        sel[m] = true;
        g->numa_used[k->res->devices[k->cand[m]].numa_node + 1] = true;
        for (size_t i = 0; i < k->n_cand; i++)
                if (i != m && linked(k, i, m)) g->links[i]++;
}

/* Grow `sel` (holding `have` members, reflected in `g`) greedily to `size`:
 * prefer a candidate on a NUMA node already used, then the one with most
 * links to the members, then the earliest. */
static void grow(const pick *k, bool *sel, growth *g, size_t have, size_t size) {
        while (have < size) {
                size_t best = SIZE_MAX;
                int best_numa = -1;
                size_t best_links = 0;
                for (size_t i = 0; i < k->n_cand; i++) {
                        if (sel[i]) continue;
                        int numa = have == 0 ? 1 : g->numa_used[k->res->devices[k->cand[i]].numa_node + 1];
                        if (best == SIZE_MAX || numa > best_numa || (numa == best_numa && g->links[i] > best_links)) {
                                best = i;
                                best_numa = numa;
                                best_links = g->links[i];
                        }
                }
                if (best == SIZE_MAX) return;
                add_member(k, sel, g, best);
                have++;
        }
}

/* Lower is better: (NUMA nodes used, -links among members). */
static void score(const pick *k, const bool *sel, const growth *g, size_t *ret_numas, size_t *ret_links) {
        size_t numas = 0, links = 0;
        for (size_t i = 0; i < ELEMENTSOF(g->numa_used); i++)
                numas += g->numa_used[i];
        for (size_t i = 0; i < k->n_cand; i++)
                if (sel[i]) links += g->links[i];
        *ret_numas = numas;
        *ret_links = links / 2; /* each pair counted from both ends */
}

static int topology_pick(pick *k, const bool *must, size_t n_must, size_t size) {
        _cleanup_free_ bool *sel = calloc(k->n_cand, sizeof(bool));
        _cleanup_free_ size_t *links = calloc(k->n_cand, sizeof(size_t));
        if (!sel || !links) return -ENOMEM;
        growth g = {links, {false}};
        if (n_must > 0) {
                for (size_t i = 0; i < k->n_cand; i++)
                        if (must[i]) add_member(k, sel, &g, i);
                grow(k, sel, &g, n_must, size);
                memcpy(k->chosen, sel, k->n_cand * sizeof(bool));
                return 0;
        }
        /* Try each physical device's first candidate as the seed; keep the best. */
        size_t best_numas = SIZE_MAX, best_links = 0;
        for (size_t s = 0; s < k->n_cand; s++) {
                if (s > 0 && k->res->devices[k->cand[s]].gpu == k->res->devices[k->cand[s - 1]].gpu) continue;
                memset(sel, 0, k->n_cand * sizeof(bool));
                memset(links, 0, k->n_cand * sizeof(size_t));
                memset(g.numa_used, 0, sizeof g.numa_used);
                add_member(k, sel, &g, s);
                grow(k, sel, &g, 1, size);
                size_t numas, nl;
                score(k, sel, &g, &numas, &nl);
                if (numas < best_numas || (numas == best_numas && nl > best_links)) {
                        best_numas = numas;
                        best_links = nl;
                        memcpy(k->chosen, sel, k->n_cand * sizeof(bool));
                }
        }
        return 0;
}

/* Replicas: spread over (distributed) or pack onto (packed) physical devices. */
static int replica_pick(pick *k, const dp_agent_config *c, const bool *must, size_t n_must, size_t size) {
        const dp_device_set *s = k->set;
        /* used[g]: replicas of device g not available (held elsewhere) or chosen here */
        size_t ng = s->n_devices * (DP_DEVICES_MIG_MAX + 1);
        _cleanup_free_ size_t *used = calloc(ng ? ng : 1, sizeof(size_t));
        _cleanup_free_ size_t *mine = calloc(ng ? ng : 1, sizeof(size_t)); /* chosen in this answer */
        if (!used || !mine) return -ENOMEM;
#define SLOT(v) ((v)->gpu * (DP_DEVICES_MIG_MAX + 1) + (size_t)((v)->mig + 1))
        for (size_t i = 0; i < k->res->n_devices; i++)
                used[SLOT(&k->res->devices[i])]++;
        for (size_t i = 0; i < k->n_cand; i++)
                used[SLOT(&k->res->devices[k->cand[i]])]--;
        size_t have = 0;
        for (size_t i = 0; i < k->n_cand; i++)
                if (must[i]) {
                        k->chosen[i] = true;
                        used[SLOT(&k->res->devices[k->cand[i]])]++;
                        mine[SLOT(&k->res->devices[k->cand[i]])]++;
                        have++;
                }
        (void)n_must;
        while (have < size) {
                /* (used, mine) compared lexicographically: packed wants both
                 * high, distributed both low; ties go to the earliest. */
                size_t best = SIZE_MAX, best_used = 0, best_mine = 0;
                bool packed = c->shared_policy == DP_SHARED_PACKED;
                for (size_t i = 0; i < k->n_cand; i++) {
                        if (k->chosen[i]) continue;
                        size_t slot = SLOT(&k->res->devices[k->cand[i]]);
                        size_t u = used[slot], m = mine[slot];
                        bool better =
                                best == SIZE_MAX || (packed ? (u > best_used || (u == best_used && m > best_mine))
                                                            : (u < best_used || (u == best_used && m < best_mine)));
                        if (better) {
                                best = i;
                                best_used = u;
                                best_mine = m;
                        }
                }
                if (best == SIZE_MAX) break;
                k->chosen[best] = true;
                used[SLOT(&k->res->devices[k->cand[best]])]++;
                mine[SLOT(&k->res->devices[k->cand[best]])]++;
                have++;
        }
#undef SLOT
        return 0;
}

static int cmp_size(const void *a, const void *b) {
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        return x < y ? -1 : x > y;
}

int dp_v1_preferred_allocation(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c,
                               const char *resource_name, const char *const *available, size_t n_available,
                               const char *const *must_include, size_t n_must_include, size_t size, char ***ret_ids,
                               dp_error *err) {
        assert_return(p && s && c && resource_name && ret_ids, -EINVAL);
        assert_return((available || n_available == 0) && (must_include || n_must_include == 0), -EINVAL);
        const dp_v1_resource *res = dp_v1_plan_find(p, resource_name);
        if (!res) return dp_error_set(err, -EINVAL, "unknown resource %.253s", resource_name);
        if (n_available > DP_V1_REQUEST_MAX || n_must_include > DP_V1_REQUEST_MAX)
                return dp_error_set(err, -E2BIG, "resource %s: more than %d ids in the request", res->name,
                                    DP_V1_REQUEST_MAX);
        _cleanup_free_ size_t *cand = calloc(n_available ? n_available : 1, sizeof(size_t));
        _cleanup_free_ uint64_t *seen = calloc(res->n_devices / 64 + 1, sizeof(uint64_t)); /* bit per device */
        if (!cand || !seen) return dp_error_set(err, -ENOMEM, "out of memory");
        /* Candidates: known, healthy, distinct; kept in resource order. */
        size_t nc = 0;
        for (size_t i = 0; i < n_available; i++) {
                const dp_v1_device *v = available[i] ? dp_v1_resource_find(res, available[i]) : NULL;
                if (!v || v->health != DP_HEALTH_HEALTHY) continue;
                size_t pos = (size_t)(v - res->devices);
                if (seen[pos / 64] & (UINT64_C(1) << (pos % 64))) continue;
                seen[pos / 64] |= UINT64_C(1) << (pos % 64);
                cand[nc++] = pos;
        }
        qsort(cand, nc, sizeof(size_t), cmp_size);
        if (size == 0 || size > nc)
                return dp_error_set(err, -EINVAL, "resource %s: cannot choose %zu of %zu available healthy devices",
                                    res->name, size, nc);
        _cleanup_free_ bool *must = calloc(nc, sizeof(bool));
        _cleanup_free_ bool *chosen = calloc(nc, sizeof(bool));
        if (!must || !chosen) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t n_must = 0;
        for (size_t i = 0; i < n_must_include; i++) {
                const char *id = must_include[i];
                const dp_v1_device *v = id ? dp_v1_resource_find(res, id) : NULL;
                if (!v)
                        return dp_error_set(err, -EINVAL, "resource %s: unknown must-include device %.128s", res->name,
                                            id ? id : "(null)");
                size_t pos = (size_t)(v - res->devices);
                size_t *hit = bsearch(&pos, cand, nc, sizeof(size_t), cmp_size);
                size_t k = hit ? (size_t)(hit - cand) : nc;
                if (k == nc)
                        return dp_error_set(err, -EINVAL,
                                            "resource %s: must-include device %s is not among the available healthy "
                                            "devices",
                                            res->name, id);
                if (!must[k]) n_must++;
                must[k] = true;
        }
        if (n_must > size)
                return dp_error_set(err, -EINVAL, "resource %s: %zu must-include devices exceed the size %zu",
                                    res->name, n_must, size);
        pick k = {res, s, cand, nc, chosen};
        int r = res->replicas > 1 ? replica_pick(&k, c, must, n_must, size) : topology_pick(&k, must, n_must, size);
        if (r < 0) return dp_error_set(err, r, "out of memory");
        char **out = calloc(size + 1, sizeof(char *));
        if (!out) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < nc && n < size; i++)
                if (chosen[i] && !(out[n++] = dp_strdup(res->devices[cand[i]].id))) {
                        dp_v1_ids_free(out);
                        return dp_error_set(err, -ENOMEM, "out of memory");
                }
        *ret_ids = out;
        return 0;
}
