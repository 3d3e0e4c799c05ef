/* SPDX-License-Identifier: Apache-2.0
 *
 * tas-decode.c — Kueue's Topology (kueue.x-k8s.io v1beta2 and v1beta1), the
 * object Topology-Aware Scheduling groups nodes by: spec.levels[].nodeLabel,
 * the highest level first. The rules are the CRD's (apis/kueue/v1beta2
 * topology_types.go markers): 1 to 16 levels, each a valid label key (at
 * most 316 characters), unique, and kubernetes.io/hostname only as the
 * lowest. A level's `alias` (newer Kueue) is accepted and not read.
 */
#include "base/strv.h"
#include "queue/decode-kq.h"

#define TOPOLOGY_LABEL_MAX 316 /* TopologyLevel.nodeLabel maxLength */
#define HOSTNAME_LABEL "kubernetes.io/hostname"

static int level_elem(kq *q, const dp_doc_node *n, char **ret) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "nodeLabel")) r = get_str(q->c, v, ret); else if (streq(k, "alias")) r = 0;);
        if (!*ret || !(*ret)[0]) return dfail(q->c, n, -EINVAL, "nodeLabel: required");
        dp_error e = DP_ERROR_INIT;
        if (strlen(*ret) > TOPOLOGY_LABEL_MAX || dp_validate_qualified_name(*ret, &e) < 0)
                return dfail(q->c, n, -EINVAL, "nodeLabel: invalid label key \"%.80s\": %s", *ret,
                             e.msg[0] ? e.msg : "must be at most 316 characters");
        return 0;
}

static int levels(kq *q, const dp_doc_node *n, dp_kq_topology *t) {
        int r = expect_seq(q->c, n);
        if (r <= 0) return r;
        if (n->n > DP_KUEUE_MAX_TOPOLOGY_LEVELS)
                return dfail(q->c, n, -E2BIG, "must have at most %d items, has %zu", DP_KUEUE_MAX_TOPOLOGY_LEVELS,
                             n->n);
        if (!(t->levels = calloc(n->n + 1, sizeof(char *)))) return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(q->c, i);
                r = level_elem(q, n->items[i], &t->levels[i]);
                t->n_levels = i + 1;
                if (r < 0) return r;
                for (size_t k = 0; k < i; k++)
                        if (streq(t->levels[k], t->levels[i]))
                                return dfail(q->c, n->items[i], -EINVAL, "nodeLabel: must be unique (\"%s\" twice)",
                                             t->levels[i]);
                if (streq(t->levels[i], HOSTNAME_LABEL) && i + 1 < n->n)
                        return dfail(q->c, n->items[i], -EINVAL,
                                     "nodeLabel: the kubernetes.io/hostname label can only be used at the lowest "
                                     "level of topology");
                path_pop(q->c, m);
        }
        return 0;
}

static int spec(kq *q, const dp_doc_node *n, dp_kq_topology *t) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "levels")) r = levels(q, v, t););
        return 0;
}

static const char *const top_level[] = {"apiVersion", "kind", "metadata", "status", NULL};

int kq_decode_topology(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_kq_topology *t = (dp_kq_topology *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = spec(&q, v, t););
        if (!t->n_levels) return dfail(c, root, -EINVAL, "spec.levels: required (at least one level)");
        return 0;
}

void kq_topology_done(dp_object o) {
        dp_kq_topology *t = (dp_kq_topology *)o.ext;
        for (size_t i = 0; i < t->n_levels; i++)
                free(t->levels[i]);
        free(t->levels);
}

/* ---- an admitted pod set's topologyAssignment ----
 *
 * v1beta1 lists the domains: {levels, domains: [{values, count}]}. v1beta2
 * packs them into slices (KEP 2724 "Since v1beta2"): each slice covers
 * domainCount domains; per level either one `universal` value for all of
 * them or `individual` roots, each between a common prefix and suffix; the
 * pods per domain likewise `universal` or `individual`. Both become the
 * same list of domains. */

#define TOPO_SLICES_MAX 1000    /* TopologyAssignment.slices maxItems */
#define TOPO_DOMAINS_MAX 100000 /* roots and podCounts.individual maxItems */

typedef struct slice_level {
        char *universal, *prefix, *suffix;
        char **roots;
        size_t n_roots;
} slice_level;

typedef struct slice {
        int32_t domain_count;
        slice_level *levels;
        size_t n_levels;
        bool has_universal;
        int32_t universal; /* podCounts.universal */
        int32_t *counts;   /* podCounts.individual */
        size_t n_counts;
} slice;

static int domain_elem(kq *q, const dp_doc_node *n, void *elem) {
        dp_kq_topology_domain *d = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "values")) r = get_strv(q->c, v, &d->values, &d->n_values);
                  else if (streq(k, "count")) r = get_int32(q->c, v, &d->count););
        return 0;
}

static int individual(kq *q, const dp_doc_node *n, slice_level *l) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "prefix")) r = get_str(q->c, v, &l->prefix);
                  else if (streq(k, "suffix")) r = get_str(q->c, v, &l->suffix);
                  else if (streq(k, "roots")) r = get_strv(q->c, v, &l->roots, &l->n_roots););
        if (l->n_roots > TOPO_DOMAINS_MAX)
                return dfail(q->c, n, -E2BIG, "roots: must have at most %d items", TOPO_DOMAINS_MAX);
        return 0;
}

static int level_values(kq *q, const dp_doc_node *n, void *elem) {
        slice_level *l = elem;
        bool ind = false;
        KQ_FIELDS(
                q, n, k, v, if (streq(k, "universal")) r = get_str(q->c, v, &l->universal);
                else if (streq(k, "individual")) {
                        ind = true;
                        r = individual(q, v, l);
                });
        if (!l->universal == !ind) return dfail(q->c, n, -EINVAL, "exactly one of universal, individual must be set");
        return 0;
}

static int pod_counts(kq *q, const dp_doc_node *n, slice *s) {
        KQ_FIELDS(
                q, n, k, v,
                if (streq(k, "universal")) {
                        s->has_universal = true;
                        r = get_int32(q->c, v, &s->universal);
                } else if (streq(k, "individual")) {
                        r = expect_seq(q->c, v);
                        if (r > 0 && v->n > TOPO_DOMAINS_MAX)
                                r = dfail(q->c, v, -E2BIG, "must have at most %d items", TOPO_DOMAINS_MAX);
                        if (r > 0 && !(s->counts = calloc(v->n + 1, sizeof(int32_t))))
                                r = dp_error_set(q->c->err, -ENOMEM, "out of memory");
                        for (size_t i = 0; r > 0 && i < v->n; i++)
                                if ((r = get_int32(q->c, v->items[i], &s->counts[s->n_counts++])) >= 0) r = 1;
                });
        if (s->has_universal == !!s->counts)
                return dfail(q->c, n, -EINVAL, "exactly one of universal, individual must be set");
        return 0;
}

static int slice_elem(kq *q, const dp_doc_node *n, void *elem) {
        slice *s = elem;
        KQ_FIELDS(q, n, k, v, if (streq(k, "domainCount")) r = get_int32(q->c, v, &s->domain_count);
                  else if (streq(k, "valuesPerLevel")) r =
                          kq_seq(q, v, (void **)&s->levels, &s->n_levels, sizeof(slice_level), level_values,
                                 DP_KUEUE_MAX_TOPOLOGY_LEVELS);
                  else if (streq(k, "podCounts")) r = pod_counts(q, v, s););
        if (s->domain_count < 1 || s->domain_count > TOPO_DOMAINS_MAX)
                return dfail(q->c, n, -EINVAL, "domainCount: must be between 1 and %d", TOPO_DOMAINS_MAX);
        if (s->counts && s->n_counts != (size_t)s->domain_count)
                return dfail(q->c, n, -EINVAL, "podCounts.individual: must have domainCount (%d) items",
                             s->domain_count);
        for (size_t i = 0; i < s->n_levels; i++)
                if (!s->levels[i].universal && s->levels[i].n_roots != (size_t)s->domain_count)
                        return dfail(q->c, n, -EINVAL,
                                     "valuesPerLevel[%zu].individual.roots: must have domainCount (%d) items", i,
                                     s->domain_count);
        return 0;
}

typedef struct slices {
        slice *v;
        size_t n;
} slices;

static void slices_done(slices *s) {
        for (size_t i = 0; i < s->n; i++) {
                slice *x = &s->v[i];
                for (size_t l = 0; l < x->n_levels; l++) {
                        dp_free_many(x->levels[l].universal, x->levels[l].prefix, x->levels[l].suffix);
                        dp_strv_free_n(x->levels[l].roots, x->levels[l].n_roots);
                }
                dp_free_many(x->levels, x->counts);
        }
        free(s->v);
}

/* The slices' domains appended to a (the levels checked by the caller). */
static int expand(kq *q, const dp_doc_node *n, const slice *v, size_t ns, dp_kq_podset_assignment *a) {
        size_t total = 0;
        for (size_t i = 0; i < ns; i++) {
                if (v[i].n_levels != a->n_topo_levels)
                        return dfail(q->c, n, -EINVAL,
                                     "slices[%zu].valuesPerLevel: must have one entry per level (%zu)", i,
                                     a->n_topo_levels);
                total += (size_t)v[i].domain_count;
        }
        if (total > TOPO_DOMAINS_MAX) return dfail(q->c, n, -E2BIG, "slices: more than %d domains", TOPO_DOMAINS_MAX);
        if (!(a->topo_domains = calloc(total + 1, sizeof(*a->topo_domains)))) return -ENOMEM;
        for (size_t i = 0; i < ns; i++)
                for (int32_t d = 0; d < v[i].domain_count; d++) {
                        dp_kq_topology_domain *x = &a->topo_domains[a->n_topo_domains++];
                        x->count = v[i].has_universal ? v[i].universal : v[i].counts[d];
                        if (!(x->values = calloc(v[i].n_levels + 1, sizeof(char *)))) return -ENOMEM;
                        for (size_t l = 0; l < v[i].n_levels; l++, x->n_values++) {
                                const slice_level *sl = &v[i].levels[l];
                                x->values[l] = sl->universal ? strdup(sl->universal)
                                                             : dp_asprintf("%s%s%s", sl->prefix ? sl->prefix : "",
                                                                           sl->roots[d], sl->suffix ? sl->suffix : "");
                                if (!x->values[l]) return -ENOMEM;
                        }
                }
        return 0;
}

int kq_topology_assignment(kq *q, const dp_doc_node *n, dp_kq_podset_assignment *a) {
        _cleanup_(slices_done) slices sl = {0};
        bool packed = false;
        KQ_FIELDS(
                q, n, k, v, if (streq(k, "levels")) r = get_strv(q->c, v, &a->topo_levels, &a->n_topo_levels);
                else if (streq(k, "domains")) r = kq_seq(q, v, (void **)&a->topo_domains, &a->n_topo_domains,
                                                         sizeof(dp_kq_topology_domain), domain_elem, TOPO_DOMAINS_MAX);
                else if (streq(k, "slices")) {
                        packed = true;
                        r = kq_seq(q, v, (void **)&sl.v, &sl.n, sizeof(slice), slice_elem, TOPO_SLICES_MAX);
                });
        if (!a->n_topo_levels || a->n_topo_levels > DP_KUEUE_MAX_TOPOLOGY_LEVELS)
                return dfail(q->c, n, -EINVAL, "levels: must have 1 to %d items", DP_KUEUE_MAX_TOPOLOGY_LEVELS);
        if (packed && a->n_topo_domains)
                return dfail(q->c, n, -EINVAL, "only one of domains (v1beta1), slices (v1beta2) may be set");
        int r = packed ? expand(q, n, sl.v, sl.n, a) : 0;
        if (r == -ENOMEM) return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; r >= 0 && i < a->n_topo_domains; i++) {
                if (a->topo_domains[i].n_values != a->n_topo_levels)
                        return dfail(q->c, n, -EINVAL, "domains[%zu].values: must have one value per level (%zu)", i,
                                     a->n_topo_levels);
                if (a->topo_domains[i].count < 1)
                        return dfail(q->c, n, -EINVAL, "domains[%zu].count: must be at least 1", i);
        }
        return r;
}

void kq_topology_assignment_done(dp_kq_podset_assignment *a) {
        for (size_t i = 0; i < a->n_topo_domains; i++)
                dp_strv_free_n(a->topo_domains[i].values, a->topo_domains[i].n_values);
        dp_strv_free_n(a->topo_levels, a->n_topo_levels);
        free(a->topo_domains);
}
