/* SPDX-License-Identifier: Apache-2.0
 * nodesel.c — v1.NodeSelector matching against a node's name and labels, and
 * deep copies of selectors into the snapshot. */
#include <stdio.h>

#include "alloc/internal.h"

static const char *label_value(const dp_alloc_snapshot *s, const node *n, const char *key) {
        for (uint32_t i = 0; i < n->n_labels; i++)
                if (streq(s->strs[s->labels[n->label_off + 2 * i]], key))
                        return s->strs[s->labels[n->label_off + 2 * i + 1]];
        return NULL;
}

static bool parse_int(const char *v, long long *ret) {
        char *end;
        if (!v || !*v) return false;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || *end) return false;
        *ret = x;
        return true;
}

static bool req_match(const dp_alloc_ns_req *r, const char *have) {
        bool in = false;
        switch (r->op) {
        case DP_ALLOC_NS_IN:
        case DP_ALLOC_NS_NOT_IN:
                for (size_t i = 0; have && i < r->n_values; i++)
                        if (streq(r->values[i], have)) in = true;
                return r->op == DP_ALLOC_NS_IN ? in : !in;
        case DP_ALLOC_NS_EXISTS: return have != NULL;
        case DP_ALLOC_NS_DOES_NOT_EXIST: return have == NULL;
        case DP_ALLOC_NS_GT:
        case DP_ALLOC_NS_LT: {
                long long a, b;
                if (!have || r->n_values != 1 || !parse_int(have, &a) || !parse_int(r->values[0], &b)) return false;
                return r->op == DP_ALLOC_NS_GT ? a > b : a < b;
        }
        }
        return false;
}

bool nodesel_match(const dp_alloc_snapshot *s, const dp_alloc_node_selector *ns, const node *n) {
        for (size_t t = 0; t < ns->n_terms; t++) {
                const dp_alloc_ns_term *term = &ns->terms[t];
                if (term->n_exprs == 0 && term->n_fields == 0) continue; /* an empty term matches nothing */
                bool ok = true;
                for (size_t i = 0; ok && i < term->n_exprs; i++)
                        ok = req_match(&term->exprs[i], label_value(s, n, term->exprs[i].key));
                for (size_t i = 0; ok && i < term->n_fields; i++)
                        ok = streq(term->fields[i].key, "metadata.name") &&
                             req_match(&term->fields[i], s->strs[n->name]);
                if (ok) return true;
        }
        return false;
}

static int copy_reqs(dp_alloc_snapshot *s, const dp_alloc_ns_req *src, size_t n, const dp_alloc_ns_req **ret) {
        dp_alloc_ns_req *dst = snap_alloc(s, n * sizeof(*dst));
        if (!dst) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint32_t k = snap_intern(s, src[i].key);
                const char **vals = snap_alloc(s, src[i].n_values * sizeof(char *));
                if (k == NONE_ID || !vals) return -ENOMEM;
                for (size_t j = 0; j < src[i].n_values; j++) {
                        uint32_t v = snap_intern(s, src[i].values[j]);
                        if (v == NONE_ID) return -ENOMEM;
                        vals[j] = s->strs[v];
                }
                dst[i] = (dp_alloc_ns_req){s->strs[k], src[i].op, vals, src[i].n_values};
        }
        *ret = dst;
        return 0;
}

dp_alloc_node_selector *nodesel_copy(dp_alloc_snapshot *s, const dp_alloc_node_selector *ns) {
        dp_alloc_node_selector *c = snap_alloc(s, sizeof(*c));
        dp_alloc_ns_term *terms = snap_alloc(s, ns->n_terms * sizeof(*terms));
        if (!c || !terms) return NULL;
        for (size_t t = 0; t < ns->n_terms; t++) {
                if (copy_reqs(s, ns->terms[t].exprs, ns->terms[t].n_exprs, &terms[t].exprs) < 0 ||
                    copy_reqs(s, ns->terms[t].fields, ns->terms[t].n_fields, &terms[t].fields) < 0)
                        return NULL;
                terms[t].n_exprs = ns->terms[t].n_exprs;
                terms[t].n_fields = ns->terms[t].n_fields;
        }
        c->terms = terms;
        c->n_terms = ns->n_terms;
        return c;
}
