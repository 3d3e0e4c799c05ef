/* SPDX-License-Identifier: Apache-2.0
 * Fuzz explain's what-if answers (queue/explain*.c): the what-if flags'
 * parsers, from comment lines at the top of the input ("#!quota ARG",
 * "#!preemption ARG", "#!nodes ARG", "#!weight ARG", "#!check ARG"; the YAML
 * reader skips them), then the Kueue input decoded, admitted under the flags and
 * explained for its first workloads that are not admitted or were
 * preempted (the trials: quota, policy changes, workloads deleted by hand).
 * Properties: no crash or leak; a refused flag or input has a message;
 * explain leaves every workload in the state admission settled it in. */
#include <stdio.h>

#include "queue/queue.h"

#define MAX_INPUT 8192 /* each explain admits the input again some 40 times */

/* The flag lines; 0, or -1 when one is refused (then with a message). */
static int flags(const char *s, size_t size, dp_queue_options *o) {
        static const struct {
                const char *word;
                int (*add)(dp_queue_options *, const char *, dp_error *);
        } kinds[] = {{"#!quota ", dp_queue_options_add_quota},
                     {"#!preemption ", dp_queue_options_add_preemption},
                     {"#!nodes ", dp_queue_options_add_nodes},
                     {"#!weight ", dp_queue_options_add_weight},
                     {"#!check ", dp_queue_options_add_check}};
        for (const char *p = s, *end = s + size; p < end && *p == '#';) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                        size_t w = strlen(kinds[k].word);
                        if (len < w || memcmp(p, kinds[k].word, w) != 0) continue;
                        char arg[256];
                        snprintf(arg, sizeof(arg), "%.*s", (int)DP_MIN(len - w, sizeof(arg) - 1), p + w);
                        dp_error err = DP_ERROR_INIT;
                        if (kinds[k].add(o, arg, &err) < 0) {
                                if (!err.msg[0]) __builtin_trap();
                                return -1;
                        }
                }
                p += len + 1;
        }
        return 0;
}

static void explain_some(dp_queue *q) {
        size_t n = dp_queue_n_workloads(q), done = 0;
        dp_qw_state *before = calloc(n + 1, sizeof(*before));
        if (!before) return;
        for (size_t i = 0; i < n; i++)
                before[i] = dp_queue_workload_at(q, i)->state;
        for (size_t i = 0; i < n && done < 3; i++) {
                const dp_queue_workload *w = dp_queue_workload_at(q, i);
                if (w->state == DP_QW_ADMITTED && !w->preempted_by) continue;
                done++;
                dp_strbuf out = DP_STRBUF_INIT;
                int r = dp_queue_explain(q, w->ns, w->name, &out);
                dp_strbuf_done(&out);
                if (r == -ENOMEM) break;
                for (size_t k = 0; k < n; k++)
                        if (dp_queue_workload_at(q, k)->state != before[k]) __builtin_trap();
        }
        free(before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > MAX_INPUT) return 0;
        dp_queue_options o = {0};
        dp_object_list *l = flags((const char *)data, size, &o) < 0 ? NULL : dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        dp_queue *q = NULL;
        if (l) {
                l->ext = &dp_queue_model_ext;
                int r = dp_model_decode_buffer((const char *)data, size, "fuzz", l, &err);
                if (r >= 0) r = dp_model_generate_names(l, &err);
                if (r >= 0) r = dp_model_validate(l, &err);
                if (r >= 0) r = dp_queue_new_opts(l, &o, &q, &err);
                if (r >= 0) r = dp_queue_admit(q, &err);
                if (r < 0 && r != -ENOMEM && !err.msg[0]) __builtin_trap();
                if (r >= 0) explain_some(q);
        }
        dp_queue_free(q);
        dp_object_list_free(l);
        dp_queue_options_done(&o);
        return 0;
}
