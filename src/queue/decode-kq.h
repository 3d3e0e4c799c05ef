/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-kq.h — what the Kueue kinds' decoders share (queue/decode.c,
 * queue/tas-decode.c) beyond what every decoder of the room shares
 * (queue/ext-decode.h: the context, the field walk): the name check and
 * the Topology decoder.
 */
#pragma once

#include "queue/ext-decode.h"
#include "queue/kueue.h"

/* Every Kueue object is named (metadata.name, or generateName). */
int kq_need_name(dctx *c, const dp_doc_node *root, dp_object o);

/* queue/tas-decode.c: Topology (the kinds table's entry). */
int kq_decode_topology(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out);
void kq_topology_done(dp_object o);
