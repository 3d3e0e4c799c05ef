/* SPDX-License-Identifier: Apache-2.0
 *
 * tas-decode.c — Kueue's Topology (kueue.x-k8s.io v1beta2 and v1beta1), the
 * object Topology-Aware Scheduling groups nodes by: spec.levels[].nodeLabel,
 * the highest level first. The rules are the CRD's (apis/kueue/v1beta2
 * topology_types.go markers): 1 to 16 levels, each a valid label key (at
 * most 316 characters), unique, and kubernetes.io/hostname only as the
 * lowest. A level's `alias` (newer Kueue) is accepted and not read.
 */
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
