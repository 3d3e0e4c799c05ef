/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-decode.c — Volcano's Queue (scheduling.volcano.sh/v1beta1) through
 * the model's extension table, chained after Kueue's (queue/decode.c): the
 * model matches a kind by name and apiVersion, so this Queue and KAI's
 * (scheduling.run.ai) do not meet. Strict fields: a field Volcano may have and
 * devplane does not read is one warning naming it; a bad value is one error
 * with the field path (exit 2). Volcano's PodGroups are the model's own
 * (DP_KIND_POD_GROUP, DP_POD_GROUP_VOLCANO).
 */
#include "queue/ext-decode.h"
#include "queue/kai.h"
#include "queue/volcano.h"

static const char *const top_fields[] = {"apiVersion", "kind", "metadata", NULL};
/* Volcano's, read by its other plugins or controllers, not modelled here
 * (docs/queues-volcano.md) */
static const char *const spec_not_modelled[] = {"affinity", "type", "extendClusters", NULL};
static const char *const queue_states[] = {"Open", "Closed", "Closing", "Unknown", NULL};

static int nonneg_quantities(kq *q, const dp_doc_node *v, dp_named_quantity **ret, size_t *ret_n) {
        int r = get_quantity_map(q->c, v, ret, ret_n);
        for (size_t i = 0; r >= 0 && i < *ret_n; i++)
                if ((*ret)[i].value.nanos < 0) {
                        size_t m = path_key(q->c, (*ret)[i].name);
                        r = dfail(q->c, v, -EINVAL, "must be greater than or equal to 0");
                        path_pop(q->c, m);
                }
        return r;
}

static int guarantee(kq *q, const dp_doc_node *n, dp_vc_queue *vq) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "resource")) r = nonneg_quantities(q, v, &vq->guarantee, &vq->n_guarantee););
        return 0;
}

static int dequeue_strategy(kq *q, const dp_doc_node *v, dp_vc_queue *vq) {
        _cleanup_free_ char *s = NULL;
        int r = get_str(q->c, v, &s);
        if (r < 0 || !s) return r;
        if (!streq(s, "fifo") && !streq(s, "traverse"))
                return dfail(q->c, v, -EINVAL, "unsupported value \"%.60s\": supported values: fifo, traverse", s);
        vq->fifo = streq(s, "fifo");
        return 0;
}

static int weight(kq *q, const dp_doc_node *v, dp_vc_queue *vq) {
        if (dp_doc_is_null(v)) return 0;
        int r = get_int32(q->c, v, &vq->weight);
        if (r >= 0 && vq->weight <= 0) return dfail(q->c, v, -EINVAL, "queue weight must be a positive integer");
        return r;
}

static int spec(kq *q, const dp_doc_node *n, dp_vc_queue *vq) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "weight")) r = weight(q, v, vq);
                  else if (streq(k, "capability")) r = nonneg_quantities(q, v, &vq->capability, &vq->n_capability);
                  else if (streq(k, "deserved")) r = nonneg_quantities(q, v, &vq->deserved, &vq->n_deserved);
                  else if (streq(k, "guarantee")) r = guarantee(q, v, vq);
                  else if (streq(k, "reclaimable")) r = get_bool(q->c, v, &vq->reclaimable);
                  else if (streq(k, "parent")) r = get_str(q->c, v, &vq->parent);
                  else if (streq(k, "priority")) r = get_int32(q->c, v, &vq->priority);
                  else if (streq(k, "dequeueStrategy")) r = dequeue_strategy(q, v, vq);
                  else if (in_list(k, spec_not_modelled)) r = 0;);
        return 0;
}

/* status is the controller's record: only the state is read (a Closed queue
 * takes no new job); the counters are Volcano's to recompute. */
static int status(kq *q, const dp_doc_node *n, dp_vc_queue *vq) {
        int e = expect_map(q->c, n);
        if (e <= 0) return e;
        const dp_doc_node *st = dp_doc_get(n, "state");
        if (!st) return 0;
        size_t m = path_key(q->c, "state");
        int r = get_str(q->c, st, &vq->state);
        if (r >= 0 && vq->state && !in_list(vq->state, queue_states))
                r = dfail(q->c, st, -EINVAL,
                          "unsupported value \"%.60s\": supported values: Open, Closed, Closing, Unknown", vq->state);
        if (r >= 0) path_pop(q->c, m);
        return r;
}

static int decode_queue(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        const dp_object_meta *meta = &o.ext->meta;
        if (!(meta->name && meta->name[0]) && !(meta->generate_name && meta->generate_name[0]))
                return dfail(c, root, -EINVAL, "metadata.name: required");
        dp_vc_queue *vq = (dp_vc_queue *)o.ext;
        vq->weight = 1;
        vq->reclaimable = true;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_fields)) r = 0; else if (streq(k, "spec")) r = spec(&q, v, vq);
                  else if (streq(k, "status")) r = status(&q, v, vq););
        if (vq->parent && meta->name && streq(vq->parent, meta->name))
                return dfail(c, root, -EINVAL, "spec.parent: a Queue cannot be its own parent");
        return 0;
}

static void quantities_free(dp_named_quantity *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

static void queue_done(dp_object o) {
        dp_vc_queue *vq = (dp_vc_queue *)o.ext;
        quantities_free(vq->capability, vq->n_capability);
        quantities_free(vq->deserved, vq->n_deserved);
        quantities_free(vq->guarantee, vq->n_guarantee);
        dp_free_many(vq->parent, vq->state);
}

static const char *const volcano_versions[] = {"scheduling.volcano.sh/v1beta1", NULL};

static const dp_model_ext_kind kinds[] = {
        {"Queue", volcano_versions, sizeof(dp_vc_queue), false, decode_queue, queue_done},
};

/* KAI-Scheduler's Queue (queue/kai-decode.c) is chained behind. */
const dp_model_ext dp_volcano_model_ext = {kinds, ELEMENTSOF(kinds), &dp_kai_model_ext};

bool dp_volcano_is_queue(dp_object o) { return o.hdr && o.hdr->kind == DP_KIND_EXT && o.ext->ext == &kinds[0]; }
