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

typedef int (*kq_elem_fn)(kq *q, const dp_doc_node *n, void *elem);
/* A list of at most `max` structs (Kueue's maxItems), each decoded by fn
 * into an element of elem_size; *ret is the caller's from the first
 * allocation on (its done frees the *ret_n elements filled). */
int kq_seq(kq *q, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, kq_elem_fn fn, size_t max);

/* queue/tas-decode.c: Topology (the kinds table's entry). */
int kq_decode_topology(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out);
void kq_topology_done(dp_object o);
/* queue/tas-decode.c: an admitted pod set's topologyAssignment into a;
 * its done (NULL fields fine). */
int kq_topology_assignment(kq *q, const dp_doc_node *n, dp_kq_podset_assignment *a);
void kq_topology_assignment_done(dp_kq_podset_assignment *a);

/* queue/checks.c: the AdmissionCheck kind (the kinds table's entry); a
 * ClusterQueue's spec.admissionChecks (v1beta1: names, every flavor) and
 * spec.admissionChecksStrategy (strategy true), into cq->checks, with
 * Kueue's webhook rule that not both are set (spec: the ClusterQueue's
 * spec, checked once decoded); a Workload's status.admissionChecks. */
int kq_decode_admission_check(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out);
void kq_admission_check_done(dp_object o);
int kq_cq_checks(kq *q, const dp_doc_node *v, bool strategy, dp_cluster_queue *cq);
int kq_cq_checks_both(kq *q, const dp_doc_node *spec);
void kq_cq_checks_free(dp_cluster_queue *cq);
int kq_wl_checks(kq *q, const dp_doc_node *v, dp_kq_workload *w);
void kq_wl_checks_free(dp_kq_workload *w);
