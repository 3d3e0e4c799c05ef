/* SPDX-License-Identifier: Apache-2.0
 * Fuzz Kueue's kinds and admission: decode (with the queue's extension
 * table), validate, admit, apply, encode. Properties: no crash or leak;
 * decoding is all or nothing; every workload ends admitted, pending or
 * inadmissible, and an admitted one has a ClusterQueue; a preempted one
 * names its preemptor and is not admitted by the cycle that preempted it;
 * a partially admitted pod set runs between its minimum and its count.
 * Seeds include pod groups, JobSets (their Jobs stood up by apply),
 * partial admission and admission checks.
 * Fair sharing is on for inputs of odd length, so both orders are fuzzed. */
#include "queue/queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return 0;
        l->ext = &dp_queue_model_ext;
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer((const char *)data, size, "fuzz", l, &err) < 0) {
                if (l->n != 0 || !err.msg[0]) __builtin_trap();
                dp_object_list_free(l);
                return 0;
        }
        dp_queue *q = NULL;
        if (dp_model_generate_names(l, &err) >= 0 && dp_model_validate(l, &err) >= 0 &&
            dp_queue_new(l, &q, &err) >= 0 && (dp_queue_set_fair_sharing(q, size & 1), dp_queue_admit(q, &err) >= 0)) {
                for (size_t i = 0; i < dp_queue_n_workloads(q); i++) {
                        const dp_queue_workload *w = dp_queue_workload_at(q, i);
                        if (w->state == DP_QW_ADMITTED && !w->cluster_queue) __builtin_trap();
                        if (w->times_preempted && !w->preempted_by) __builtin_trap();
                        if (w->state == DP_QW_ADMITTED && w->times_preempted && w->cycle <= w->preempted_cycle)
                                __builtin_trap();
                        /* partial admission: never more than asked, never below the minimum
                         * (a Workload admitted in the input keeps the counts it shows) */
                        for (size_t p = 0; w->state == DP_QW_ADMITTED && !w->preadmitted && p < w->n_podsets; p++) {
                                const dp_queue_podset *ps = &w->podsets[p];
                                int32_t least = ps->has_min_count ? ps->min_count : ps->count;
                                if (ps->admitted_count > ps->count || ps->admitted_count < DP_MIN(least, ps->count))
                                        __builtin_trap();
                        }
                }
                (void)dp_queue_apply_owners(q, l, &err);
                dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *d = s ? dp_queue_encode(s, q) : NULL;
                dp_strbuf out = DP_STRBUF_INIT;
                if (d) dp_queue_print(d, &out);
                dp_strbuf_done(&out);
                dp_doc_set_free(s);
        }
        dp_queue_free(q);
        dp_object_list_free(l);
        return 0;
}
