/* SPDX-License-Identifier: Apache-2.0
 *
 * ext-decode.h — what the queue room's decoders of other projects' kinds
 * share (Kueue's in queue/decode.c, Volcano's in queue/volcano-decode.c):
 * the model's decoding context, the list warnings go to, the object they are
 * about, and the field walk that turns a field devplane does not read into
 * one warning naming it instead of an error.
 */
#pragma once

#include "model/decode-internal.h"

typedef struct kq {
        dctx *c;
        dp_object_list *out;
        dp_object o;
} kq;

/* A field the project may define (a newer release's) that devplane does not
 * read: one warning "SOURCE: Kind name: PATH: unknown field "k" (line N): not
 * a field devplane reads, ignored" in q->out, and decoding goes on. 0 or
 * -ENOMEM. (queue/decode.c) */
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
