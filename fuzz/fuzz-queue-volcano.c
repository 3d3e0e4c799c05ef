/* SPDX-License-Identifier: Apache-2.0
 * Fuzz Volcano's Queue and the Volcano policy: decode (Kueue's table, which
 * chains Volcano's), validate, run Volcano's sessions (proportion for inputs
 * of even length, capacity for odd; reclaim on when bit 1 of the length is
 * set, preempt when bit 2 is), apply, encode, print; then every third
 * pod deleted and the sessions resumed (over time). Properties: no
 * crash or leak; decoding is all or nothing; a Running job has at least
 * minMember pods; proportion never gives a queue more than its
 * realCapability (or its guarantee, when that is larger). */
#include <math.h>

#include "queue/kueue.h"
#include "queue/volcano.h"

static void check(const dp_volcano *v, bool proportion) {
        for (size_t i = 0; i < dp_volcano_n_jobs(v); i++) {
                const dp_vc_job *j = dp_volcano_job_at(v, i);
                if (j->phase == DP_VC_RUNNING && j->n_tasks < (size_t)j->min_member) __builtin_trap();
        }
        for (size_t i = 0; proportion && i < dp_volcano_n_queues(v); i++) {
                const dp_vc_queue_info *q = dp_volcano_queue_at(v, i);
                for (ssize_t d = 0; d < 2; d++) /* cpu and memory: every input has them */
                        if (q->deserved[d] > fmax(q->real_capability[d], q->guarantee[d]) + 1) __builtin_trap();
        }
}

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
        dp_volcano_options o = {
                .plugin = size & 1 ? DP_VC_CAPACITY : DP_VC_PROPORTION, .reclaim = size & 2, .preempt = size & 4};
        dp_volcano *v = NULL;
        if (dp_model_generate_names(l, &err) >= 0 && dp_model_validate(l, &err) >= 0 && dp_volcano_new(&o, &v) >= 0) {
                int r = 0;
                for (size_t i = 0; r >= 0 && i < l->n; i++)
                        r = dp_volcano_add(v, l->items[i], &err);
                if (r >= 0 && dp_volcano_run(v, &err) >= 0) {
                        check(v, !(size & 1));
                        (void)dp_volcano_apply(v);
                        dp_doc_set *s = dp_doc_set_new();
                        dp_doc_node *d = s ? dp_volcano_encode(s, v) : NULL;
                        dp_strbuf out = DP_STRBUF_INIT;
                        if (d) dp_volcano_print(d, &out);
                        dp_strbuf_done(&out);
                        dp_doc_set_free(s);
                        /* over time: every third pod deleted, the sessions again */
                        for (size_t i = 0; i < l->n; i += 3)
                                if (l->items[i].hdr->kind == DP_KIND_POD && l->items[i].pod->meta.name)
                                        (void)dp_volcano_pod_deleted(v,
                                                                     l->items[i].pod->meta.namespace
                                                                             ? l->items[i].pod->meta.namespace
                                                                             : "default",
                                                                     l->items[i].pod->meta.name);
                        if (dp_volcano_resume(v, &err) >= 0) check(v, !(size & 1));
                }
        }
        dp_volcano_free(v);
        dp_object_list_free(l);
        return 0;
}
