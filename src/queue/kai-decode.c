/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-decode.c — KAI-Scheduler's Queue (scheduling.run.ai/v2) through the
 * model's extension table, chained behind Kueue's (queue/decode.c): the
 * fields KAI's fair share reads, KAI's value rules (quota and limit -1 or
 * more, overQuotaWeight 0 or more; KAI:docs/queues/README.md), and a warning
 * naming a field devplane does not read.
 */
#include <math.h>
#include <stdio.h>

#include "queue/ext-decode.h"
#include "queue/kai.h"

/* the room's field walk (queue/ext-decode.h): kq, kq_unknown, KQ_FIELDS */

/* A number (KAI's fields are float64): at least `min`. */
static int get_number(dctx *c, const dp_doc_node *n, double min, double *ret) {
        if (dp_doc_is_null(n)) return 0;
        dp_doc_scalar_kind k = n->type == DP_DOC_SCALAR ? dp_doc_kind(n) : DP_DOC_STR;
        if (k != DP_DOC_INT && k != DP_DOC_FLOAT)
                return dfail(c, n, -EINVAL, "expected a number, got %s", dp_doc_type_name(n));
        char *end = NULL;
        double v = strtod(n->str, &end);
        if (!end || *end || !isfinite(v)) return dfail(c, n, -EINVAL, "expected a finite number, got %.40s", n->str);
        if (v < min) return dfail(c, n, -EINVAL, "must be %g or more, got %.40s", min, n->str);
        *ret = v;
        return 0;
}

static int resource(kq *d, const dp_doc_node *n, dp_kai_queue_resource *r_) {
        KQ_FIELDS(d, n, k, v, if (streq(k, "quota")) r = get_number(d->c, v, -1, &r_->quota);
                  else if (streq(k, "limit")) r = get_number(d->c, v, -1, &r_->limit);
                  else if (streq(k, "overQuotaWeight")) r = get_number(d->c, v, 0, &r_->over_quota_weight););
        return 0;
}

static int resources(kq *d, const dp_doc_node *n, dp_kai_queue_obj *q) {
        KQ_FIELDS(d, n, k, v, if (streq(k, "cpu")) r = resource(d, v, &q->res[DP_KAI_CPU]);
                  else if (streq(k, "memory")) r = resource(d, v, &q->res[DP_KAI_MEMORY]);
                  else if (streq(k, "gpu")) r = resource(d, v, &q->res[DP_KAI_GPU]););
        return 0;
}

static int spec(kq *d, const dp_doc_node *n, dp_kai_queue_obj *q) {
        KQ_FIELDS(d, n, k, v, if (streq(k, "parentQueue")) r = get_str(d->c, v, &q->parent_queue);
                  else if (streq(k, "displayName")) r = get_str(d->c, v, &q->display_name);
                  else if (streq(k, "priority")) r = get_int32(d->c, v, &q->priority);
                  else if (streq(k, "resources")) r = resources(d, v, q););
        return 0;
}

static const char *const top_level[] = {"apiVersion", "kind", "metadata", "status", NULL};

static int decode_queue(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq d = {c, out, o};
        dp_kai_queue_obj *q = (dp_kai_queue_obj *)o.ext;
        const dp_object_meta *m = &o.ext->meta;
        if (!(m->name && m->name[0]) && !(m->generate_name && m->generate_name[0]))
                return dfail(c, root, -EINVAL, "metadata.name: required");
        q->priority = 100; /* KAI's DefaultQueuePriority when spec.priority is unset */
        KQ_FIELDS(&d, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = spec(&d, v, q););
        if (q->parent_queue && m->name && streq(q->parent_queue, m->name))
                return dfail(c, root, -EINVAL, "spec.parentQueue: a queue cannot be its own parent");
        return 0;
}

static void queue_done(dp_object o) {
        dp_kai_queue_obj *q = (dp_kai_queue_obj *)o.ext;
        dp_free_many(q->parent_queue, q->display_name);
}

static const char *const kai_versions[] = {"scheduling.run.ai/v2", NULL};

static const dp_model_ext_kind kinds[] = {
        {"Queue", kai_versions, sizeof(dp_kai_queue_obj), false, decode_queue, queue_done},
};

const dp_model_ext dp_kai_model_ext = {kinds, ELEMENTSOF(kinds), NULL};

const dp_kai_queue_obj *dp_kai_queue_of(dp_object o) {
        if (!o.hdr || o.hdr->kind != DP_KIND_EXT || o.ext->ext != &kinds[0]) return NULL;
        return (const dp_kai_queue_obj *)o.ext;
}
