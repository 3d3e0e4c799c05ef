/* SPDX-License-Identifier: Apache-2.0
 * dra-adapter.c — the scheduler over alloc/adapter.h (see dra-adapter.h). */
#include "alloc/adapter.h"
#include "alloc/shape.h"
#include "base/hashmap.h"
#include "sched/dra-adapter.h"

/* What one claim marked in a kept snapshot, to give it back. */
typedef struct mark {
        uint32_t dev;
        dp_alloc_consumed *cons;
        size_t n_cons;
} mark;

typedef struct claim_marks {
        mark *m;
        size_t n;
} claim_marks;

struct dp_sched_dra {
        dp_alloc_cluster *cluster;
        dp_alloc_claim_spec **specs;
        size_t n_specs, cap_specs;
        /* kept across cycles (dp_sched_dra_new_store) */
        dp_object_list view; /* owned array, borrowed objects */
        claim_marks *marks;  /* by store slot */
        size_t n_marks;
        /* per claim shape (dp_sched_dra_memo_get) */
        dp_hashmap *memos; /* shape -> memo_ent */
        uint64_t nodes_gen;
        size_t n_nodes;
};

typedef struct memo_ent {
        char *key;
        dp_sched_dra_memo m;
} memo_ent;

static void memos_free(dp_sched_dra *d) {
        size_t i = 0;
        void *v;
        while (d->memos && dp_hashmap_iter(d->memos, &i, NULL, &v)) {
                memo_ent *e = v;
                free(e->m.failed);
                free(e->key);
                free(e);
        }
        d->memos = dp_hashmap_free(d->memos);
}

/* Something was given back: nodes that failed may fit now. */
static void memos_forget_failed(dp_sched_dra *d) {
        size_t i = 0;
        void *v;
        size_t words = (d->n_nodes + 63) / 64;
        while (d->memos && dp_hashmap_iter(d->memos, &i, NULL, &v)) {
                memo_ent *e = v;
                if (e->m.failed) memset(e->m.failed, 0, words * sizeof(uint64_t));
                e->m.epoch++;
        }
}

static void marks_clear(claim_marks *cm) {
        for (size_t i = 0; i < cm->n; i++) {
                for (size_t k = 0; k < cm->m[i].n_cons; k++)
                        free((char *)cm->m[i].cons[k].name);
                free(cm->m[i].cons);
        }
        free(cm->m);
        *cm = (claim_marks){0};
}

int dp_sched_dra_new(const dp_object_list *view, const dp_alloc_cluster_options *opts, dp_sched_dra **ret,
                     dp_error *err) {
        dp_sched_dra *d = calloc(1, sizeof(*d));
        if (!d) return -ENOMEM;
        int r = dp_alloc_cluster_new_opts(view, opts, &d->cluster, err);
        if (r < 0) {
                free(d);
                return r;
        }
        *ret = d;
        return 0;
}

void dp_sched_dra_forget_claims(dp_sched_dra *d) {
        if (!d) return;
        for (size_t i = 0; i < d->n_specs; i++)
                dp_alloc_claim_spec_free(d->specs[i]);
        d->n_specs = 0;
}

dp_sched_dra *dp_sched_dra_free(dp_sched_dra *d) {
        if (!d) return NULL;
        dp_sched_dra_forget_claims(d);
        free(d->specs);
        dp_alloc_cluster_free(d->cluster);
        for (size_t i = 0; i < d->n_marks; i++)
                marks_clear(&d->marks[i]);
        free(d->marks);
        memos_free(d);
        dp_store_view_free(&d->view);
        free(d);
        return NULL;
}

/* As the adapter marks the claims of its object list (alloc/adapter.c). */
static int mark_claim(dp_sched_dra *d, const dp_resource_claim *cl, claim_marks *cm) {
        char holder[600];
        snprintf(holder, sizeof(holder), "%s/%s", cl->meta.namespace ? cl->meta.namespace : "", cl->meta.name);
        dp_alloc_snapshot *snap = dp_alloc_cluster_snapshot(d->cluster);
        const dp_allocation_result *a = cl->allocation;
        if (!(cm->m = calloc(a->n_results + 1, sizeof(*cm->m)))) return -ENOMEM;
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *r = &a->results[i];
                if (r->has_admin_access && r->admin_access) continue;
                uint32_t dev;
                if (dp_alloc_find_device(snap, r->driver, r->pool, r->device, &dev) < 0) continue; /* gone */
                mark *m = &cm->m[cm->n];
                m->dev = dev;
                if (!(m->cons = calloc(r->n_consumed_capacity + 1, sizeof(*m->cons)))) return -ENOMEM;
                for (size_t k = 0; k < r->n_consumed_capacity; k++) {
                        const char *n = r->consumed_capacity[k].name;
                        char *q = strchr(n, '/') ? dp_strdup(n) : dp_asprintf("%s/%s", r->driver, n);
                        if (!q) return -ENOMEM;
                        m->cons[m->n_cons++] = (dp_alloc_consumed){q, r->consumed_capacity[k].value.nanos};
                }
                cm->n++;
                int k = dp_alloc_mark_allocated(snap, dev, holder, r->share_id, m->cons, m->n_cons);
                if (k < 0) {
                        cm->n--;
                        for (size_t j = 0; j < m->n_cons; j++)
                                free((char *)m->cons[j].name);
                        free(m->cons);
                        return k;
                }
        }
        return 0;
}

int dp_sched_dra_claim_changed(dp_sched_dra *d, const dp_store *st, size_t slot) {
        if (slot >= d->n_marks) {
                size_t n = dp_store_slots(st);
                if (slot >= n) return 0;
                if (DP_EXTEND(d->marks, d->n_marks, n) < 0) return -ENOMEM;
        }
        claim_marks *cm = &d->marks[slot];
        dp_alloc_snapshot *snap = dp_alloc_cluster_snapshot(d->cluster);
        if (cm->n) memos_forget_failed(d);
        for (size_t i = cm->n; i-- > 0;) {
                int r = dp_alloc_release(snap, cm->m[i].dev, cm->m[i].cons, cm->m[i].n_cons);
                if (r < 0 && r != -EINVAL) return r;
        }
        marks_clear(cm);
        dp_object o;
        if (dp_store_slot(st, slot, &o, NULL) != DP_KIND_RESOURCE_CLAIM || !o.hdr || !o.claim->allocation) return 0;
        return mark_claim(d, o.claim, cm);
}

int dp_sched_dra_new_store(const dp_store *st, const dp_alloc_cluster_options *opts, dp_sched_dra **ret,
                           dp_error *err) {
        static const dp_kind kinds[] = {DP_KIND_RESOURCE_SLICE, DP_KIND_DEVICE_CLASS, DP_KIND_NODE, DP_KIND_NAMESPACE,
                                        DP_KIND_DEVICE_TAINT_RULE};
        dp_sched_dra *d = calloc(1, sizeof(*d));
        if (!d) return -ENOMEM;
        int r = dp_store_view(st, kinds, ELEMENTSOF(kinds), &d->view);
        if (r >= 0) r = dp_alloc_cluster_new_opts(&d->view, opts, &d->cluster, err);
        if (r < 0) {
                dp_store_view_free(&d->view);
                free(d);
                return r;
        }
        /* claims in store order, as a fresh snapshot marks them */
        size_t n = dp_store_slots(st);
        if (!(d->marks = calloc(n + 1, sizeof(*d->marks)))) return dp_sched_dra_free(d), -ENOMEM;
        d->n_marks = n;
        for (size_t i = 0; i < n && r >= 0; i++) {
                dp_object o;
                if (dp_store_slot(st, i, &o, NULL) == DP_KIND_RESOURCE_CLAIM && o.hdr && o.claim->allocation)
                        r = mark_claim(d, o.claim, &d->marks[i]);
        }
        if (r < 0) return dp_sched_dra_free(d), r;
        *ret = d;
        return 0;
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

/* The allocator's answer for claims idx[0..n) (n > 0) on node: its return,
 * and when it is > 0 the results in *ret_res and in *ret_sub the sum of the
 * devices' sub-indexes (how deep into shared devices: the score's tie-break). */
static int try_allocate(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, dp_alloc_result **ret_res,
                        unsigned *ret_sub, dp_strbuf *why, dp_error *err) {
        const dp_alloc_claim *one[8];
        _cleanup_free_ const dp_alloc_claim **heap = n > ELEMENTSOF(one) ? calloc(n, sizeof(*heap)) : NULL;
        const dp_alloc_claim **claims = n > ELEMENTSOF(one) ? heap : one;
        if (!claims) return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                claims[i] = &d->specs[idx[i]]->claim;
        dp_alloc_options opts = {.explain = why != NULL};
        int r = dp_alloc_allocate(dp_alloc_cluster_snapshot(d->cluster), node, claims, n, &opts, ret_res, why, err);
        if (r <= 0) return r;
        unsigned sub = 0;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < (*ret_res)[i].n_devices; k++)
                        sub += (*ret_res)[i].devices[k].sub_index;
        *ret_sub = sub;
        return r;
}

int dp_sched_dra_try_count(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                           size_t *ret_units, dp_strbuf *why, dp_error *err) {
        *ret_sub = 0;
        *ret_units = 0;
        if (n == 0) return 1;
        dp_alloc_result *res = NULL;
        int r = try_allocate(d, node, idx, n, &res, ret_sub, why, err);
        if (r <= 0) return r;
        for (size_t i = 0; i < n; i++)
                *ret_units += res[i].n_devices;
        dp_alloc_results_free(res, n);
        return r;
}

int dp_sched_dra_try(dp_sched_dra *d, const char *node, const size_t *idx, size_t n, unsigned *ret_sub,
                     dp_allocation_result ***ret_allocs, dp_strbuf *why, dp_error *err) {
        *ret_sub = 0;
        if (n == 0) {
                if (ret_allocs) *ret_allocs = NULL;
                return 1;
        }
        dp_alloc_result *res = NULL;
        int r = try_allocate(d, node, idx, n, &res, ret_sub, why, err);
        if (r <= 0) return r;
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

static bool fixed_shape(const dp_alloc_claim *const *claims, size_t n, size_t *ret_units) {
        size_t units = 0;
        for (size_t c = 0; c < n; c++)
                for (size_t i = 0; i < claims[c]->n_requests; i++) {
                        const dp_alloc_request *r = &claims[c]->requests[i];
                        if (r->first_available || r->n_subs != 1 || r->subs[0].all || r->subs[0].count <= 0)
                                return false;
                        units += (size_t)r->subs[0].count;
                }
        *ret_units = units;
        return true;
}

int dp_sched_dra_memo_get(dp_sched_dra *d, const size_t *idx, size_t n, uint64_t nodes_gen, size_t n_nodes,
                          dp_sched_dra_memo **ret) {
        *ret = NULL;
        if (n == 0 || n > 32) return 0;
        const dp_alloc_claim *claims[32];
        for (size_t i = 0; i < n; i++)
                claims[i] = &d->specs[idx[i]]->claim;
        if (d->memos && (d->nodes_gen != nodes_gen || d->n_nodes != n_nodes)) memos_free(d);
        if (!d->memos && !(d->memos = dp_hashmap_new())) return -ENOMEM;
        d->nodes_gen = nodes_gen;
        d->n_nodes = n_nodes;
        _cleanup_strbuf_ dp_strbuf key = DP_STRBUF_INIT;
        dp_alloc_claims_shape(claims, n, &key);
        if (dp_strbuf_failed(&key)) return -ENOMEM;
        memo_ent *e = dp_hashmap_get(d->memos, dp_strbuf_str(&key));
        if (e) {
                *ret = &e->m;
                return 0;
        }
        if (!(e = calloc(1, sizeof(*e)))) return -ENOMEM;
        e->m.failed = calloc((n_nodes + 63) / 64 + 1, sizeof(uint64_t));
        e->key = dp_strbuf_steal(&key);
        if (!e->m.failed || !e->key || dp_hashmap_put(d->memos, e->key, e) < 0) {
                free(e->m.failed);
                free(e->key);
                free(e);
                return -ENOMEM;
        }
        int r = 0;
        if (fixed_shape(claims, n, &e->m.units)) {
                r = dp_alloc_selectors_infallible(dp_alloc_cluster_snapshot(d->cluster), claims, n);
                e->m.fixed = r > 0;
        }
        if (r < 0) return r;
        *ret = &e->m;
        return 0;
}
