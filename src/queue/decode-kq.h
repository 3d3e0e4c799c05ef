/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-kq.h — what the queue room's decoders share (queue/decode.c for
 * Kueue's kinds, queue/jobset.c for JobSet): the model's decoding context,
 * the list warnings go to, and the field walk that warns on a field it does
 * not know instead of failing.
 */
#pragma once

#include "model/decode-internal.h"
#include "queue/kueue.h"

/* What one object's decoders share: the model's context, the list the
 * warnings go to and the object they are about. */
typedef struct kq {
        dctx *c;
        dp_object_list *out;
        dp_object o;
} kq;

/* A field Kueue (or the JobSet API) may define that devplane does not read:
 * one warning naming it, and decoding goes on. 0 or -ENOMEM. */
int kq_unknown(kq *q, size_t mark, const dp_doc_node *key_node, const char *key);

/* DECODE_FIELDS with kq_unknown for the keys BODY does not take. */
#define KQ_FIELDS(q, map_, k, v, BODY)                                                                                 \
        do {                                                                                                           \
                int _e = expect_map((q)->c, (map_));                                                                   \
                if (_e <= 0) return _e;                                                                                \
                for (size_t _i = 0; _i < (map_)->n; _i++) {                                                            \
                        const char *k = (map_)->pairs[_i].key;                                                         \
                        const dp_doc_node *v = (map_)->pairs[_i].value;                                                \
                        const dp_doc_node *_kn = (map_)->pairs[_i].key_node;                                           \
                        size_t _mark = path_key((q)->c, k);                                                            \
                        int r;                                                                                         \
                        BODY else r = kq_unknown((q), _mark, _kn ? _kn : v, k);                                        \
                        if (r < 0) return r;                                                                           \
                        path_pop((q)->c, _mark);                                                                       \
                }                                                                                                      \
        } while (0)
