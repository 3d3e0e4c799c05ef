/* SPDX-License-Identifier: Apache-2.0
 * Fuzz KAI-Scheduler's Queue decoder and its admission: decode (with the
 * KAI extension table), validate, build the queue tree and groups, the fair
 * share, Allocate/Reclaim/Preempt, apply, encode, print. Properties: no
 * crash, leak or hang; decoding is all or nothing; every fair share is a
 * number at least 0 (unless a capacity or quota overflowed to infinity);
 * a started group has started pods, a pending one no started pods; an
 * evicted group was running, preemptible and names who evicted it; the
 * pods admission placed on nodes are exactly the started ones. */
#include <math.h>

#include "queue/kai.h"

static void check(const dp_kai *k) {
        for (size_t i = 0; i < k->n_q; i++)
                for (int r = 0; r < DP_KAI_NRES; r++)
                        if (!isnan(k->q[i].fair[r]) && k->q[i].fair[r] < 0) __builtin_trap();
        for (size_t i = 0; i < k->n_g; i++) {
                const dp_kai_group *g = &k->g[i];
                if (g->state == DP_KAI_ADMITTED && !g->started) __builtin_trap();
                if (g->state == DP_KAI_PENDING && g->started) __builtin_trap();
                if (g->state == DP_KAI_EVICTED && (!g->preemptible || !g->n_running || !g->by)) __builtin_trap();
                size_t placed = 0;
                for (size_t p = g->first_pod; p != (size_t)-1; p = k->pods[p].next)
                        placed += !k->pods[p].running && k->pods[p].node != (size_t)-1;
                if (placed != g->started) __builtin_trap();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return 0;
        l->ext = &dp_kai_model_ext;
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer((const char *)data, size, "fuzz", l, &err) < 0) {
                if (l->n != 0 || !err.msg[0]) __builtin_trap();
                dp_object_list_free(l);
                return 0;
        }
        dp_kai *k = NULL;
        if (dp_model_generate_names(l, &err) >= 0 && dp_model_validate(l, &err) >= 0 &&
            dp_kai_warn_input(l, &err) >= 0 && dp_kai_new(l, &k, &err) >= 0 && dp_kai_admit(k) >= 0) {
                check(k);
                (void)dp_kai_apply(k, l, &err);
                dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *d = s ? dp_kai_encode(s, k) : NULL;
                dp_strbuf out = DP_STRBUF_INIT;
                if (d) dp_kai_print(d, &out);
                dp_strbuf_done(&out);
                dp_doc_set_free(s);
        }
        dp_kai_free(k);
        dp_object_list_free(l);
        return 0;
}
