/* SPDX-License-Identifier: Apache-2.0
 * cluster-input.c — the input flags of simulate and explain (cluster-input.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "kube/kube.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

int dp_tool_input_init(dp_tool_input *t, const char *cmd, int argc) {
        *t = (dp_tool_input){.cmd = cmd};
        size_t n = (size_t)argc + 1;
        t->paths = calloc(n, sizeof(char *));
        t->whatif.cordon = calloc(n, sizeof(char *));
        t->whatif.fail = calloc(n, sizeof(char *));
        t->whatif.mode = calloc(n, sizeof(char *));
        if (!t->paths || !t->whatif.cordon || !t->whatif.fail || !t->whatif.mode) {
                dp_tool_input_done(t);
                return -ENOMEM;
        }
        return 0;
}

void dp_tool_input_done(dp_tool_input *t) {
        free(t->paths);
        free(t->whatif.cordon);
        free(t->whatif.fail);
        free(t->whatif.mode);
        *t = (dp_tool_input){0};
}

int dp_tool_input_option(dp_tool_input *t, int c, const char *arg) {
        switch (c) {
        case 'f': t->paths[t->n_paths++] = arg; return 1;
        case DP_OPT_KUBECONFIG: t->kubeconfig = arg; return 1;
        case DP_OPT_CONTEXT: t->context = arg; return 1;
        case DP_OPT_IN_CLUSTER: t->in_cluster = true; return 1;
        case DP_OPT_SA_DIR: t->sa_dir = arg; return 1;
        case DP_OPT_CORDON: t->whatif.cordon[t->whatif.n_cordon++] = (char *)arg; return 1;
        case DP_OPT_FAIL_DEVICE: t->whatif.fail[t->whatif.n_fail++] = (char *)arg; return 1;
        case DP_OPT_MODE: t->whatif.mode[t->whatif.n_mode++] = (char *)arg; return 1;
        case DP_OPT_SCORING:
                if (!streq(arg, "binpack") && !streq(arg, "spread") && !streq(arg, "none")) {
                        fprintf(stderr, "devplane %s: --scoring %s: must be binpack, spread or none\n", t->cmd, arg);
                        return -1;
                }
                t->scoring = 1 + (streq(arg, "binpack") ? DP_SCORE_BINPACK
                                  : streq(arg, "spread") ? DP_SCORE_SPREAD
                                                         : DP_SCORE_NONE);
                return 1;
        case DP_OPT_ALL_SCHEDULERS: t->all_schedulers = true; return 1;
        case DP_OPT_GATES:
                if (dp_alloc_parse_feature_gate(arg, &t->gates) < 0) {
                        fprintf(stderr, "devplane %s: --feature-gates %s: known: %s\n", t->cmd, arg,
                                DP_ALLOC_FEATURE_GATES);
                        return -1;
                }
                return 1;
        default: return 0;
        }
}

void dp_tool_warn_skipped(const char *cmd, const dp_object_list *l) {
        for (size_t i = 0; l && i < l->n_skipped; i++) {
                const dp_skipped_kind *k = &l->skipped[i];
                fprintf(stderr, "devplane %s: warning: skipped %zu %s object%s%s%s%s (first: %s): not a kind devplane "
                                "models\n",
                        cmd, k->count, k->kind, k->count == 1 ? "" : "s", k->api_version ? " (" : "",
                        k->api_version ? k->api_version : "", k->api_version ? ")" : "", k->first);
        }
        for (size_t i = 0; l && i < l->n_warnings; i++)
                fprintf(stderr, "devplane %s: warning: %s\n", cmd, l->warnings[i]);
}

/* The exit status: 3 (DP_EXIT_NO_MEMORY, with what was being read and how
 * big the input was) for out of memory, 2 for anything else. */
static int fail(const dp_tool_input *t, int r, const dp_error *err) {
        if (r == -ENOMEM) return dp_tool_out_of_memory(t->cmd, NULL, t->paths, t->n_paths);
        fprintf(stderr, "devplane %s: %s\n", t->cmd, dp_error_msg(err));
        return 2;
}

int dp_tool_input_load(dp_tool_input *t, dp_sim_input **ret) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        int r;
        if (t->context && !t->kubeconfig) {
                fprintf(stderr, "devplane %s: --context needs --kubeconfig\n", t->cmd);
                return 2;
        }
        if (t->kubeconfig && t->in_cluster) {
                fprintf(stderr, "devplane %s: --kubeconfig and --in-cluster exclude each other\n", t->cmd);
                return 2;
        }
        if (t->kubeconfig || t->in_cluster) {
                _cleanup_(dp_kube_config_freep) dp_kube_config *cfg = NULL;
                r = t->kubeconfig ? dp_kube_config_load(t->kubeconfig, t->context, &cfg, &err)
                                  : dp_kube_config_in_cluster(t->sa_dir, &cfg, &err);
                _cleanup_(dp_kube_snapshot_freep) dp_kube_snapshot *snap = NULL;
                if (r >= 0) r = dp_kube_snapshot_take(cfg, 0, &snap, &err);
                if (r < 0) return fail(t, r, &err);
                _cleanup_free_ dp_sim_text *texts = calloc(snap->n + 1, sizeof(*texts));
                if (!texts) return fail(t, -ENOMEM, &err);
                for (size_t i = 0; i < snap->n; i++)
                        texts[i] = (dp_sim_text){snap->pages[i].body, snap->pages[i].len, snap->pages[i].source};
                r = dp_sim_load_texts(texts, snap->n, t->paths, t->n_paths, &in, &err);
        } else {
                r = dp_sim_load_or_builtin(t->paths, t->n_paths, &in, &err);
        }
        if (r >= 0) {
                dp_tool_warn_skipped(t->cmd, in->objs);
                in->alloc = t->gates;
                if (t->scoring) in->policy = (dp_score_policy)(t->scoring - 1);
                in->all_schedulers = t->all_schedulers;
                /* progress only where a person watches: never into a file or pipe */
                in->progress = isatty(STDERR_FILENO);
                in->progress_t0_ms = (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
                r = dp_sim_set_whatif(in, &t->whatif, &err);
        }
        if (r < 0) return fail(t, r, &err);
        *ret = TAKE_PTR(in);
        return 0;
}
