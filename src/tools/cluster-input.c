/* SPDX-License-Identifier: Apache-2.0
 * cluster-input.c — the input flags of simulate and explain (cluster-input.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/fileio.h"
#include "kube/kube.h"
#include "model/quantity.h"
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
        free(t->namespace);
        free(t->replay);
        free(t->paths);
        free(t->whatif.cordon);
        free(t->whatif.fail);
        free(t->whatif.mode);
        dp_queue_options_done(&t->queue);
        dp_kueue_config_free(t->kueue);
        *t = (dp_tool_input){0};
}

/* Append " FLAG 'VALUE'" (quoted only where the shell needs it) to
 * t->replay, so a command printed as a hint runs as printed. */
static int replay_add(dp_tool_input *t, const char *flag, const char *arg) {
        dp_strbuf sb = DP_STRBUF_INIT;
        if (t->replay) dp_strbuf_puts(&sb, t->replay);
        dp_strbuf_printf(&sb, " %s", flag);
        if (arg) {
                bool plain = *arg != 0;
                for (const char *p = arg; *p && plain; p++)
                        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+%",
                                       *p) != NULL;
                dp_strbuf_putc(&sb, ' ');
                if (!plain) dp_strbuf_putc(&sb, '\'');
                for (const char *p = arg; *p; p++)
                        if (*p == '\'')
                                dp_strbuf_puts(&sb, "'\\''");
                        else
                                dp_strbuf_putc(&sb, *p);
                if (!plain) dp_strbuf_putc(&sb, '\'');
        }
        char *r = dp_strbuf_steal(&sb);
        if (!r) return -ENOMEM;
        free(t->replay);
        t->replay = r;
        return 0;
}

/* --live-max-bytes: a byte count, with a Kubernetes quantity's suffix
 * (512Mi, 2Gi, 1G). */
static int parse_bytes(const char *arg, uint64_t *ret) {
        dp_quantity q;
        if (dp_quantity_parse(arg, &q, NULL) < 0 || !dp_quantity_is_integer(&q)) return -EINVAL;
        int64_t v = dp_quantity_value(&q);
        if (v <= 0) return -EINVAL;
        *ret = (uint64_t)v;
        return 0;
}

static int option_value(dp_tool_input *t, int c, const char *arg);

/* --queue-policy: whose admission decides which queued pods run (Kueue's
 * always runs on Kueue's objects; kai: src/queue/kai.h; volcano:
 * src/queue/volcano.h). t->queue_policy is the index here + 1. */
static const dp_tool_word queue_policies[] = {{"kueue", 0}, {"kai", 1}, {"volcano", 2}, {NULL, 0}};
enum { QP_VOLCANO = 2 };
static const dp_tool_word volcano_plugins[] = {
        {"proportion", DP_VC_PROPORTION}, {"capacity", DP_VC_CAPACITY}, {NULL, 0}};

/* --queue-policy, --volcano-plugin, --volcano-actions: 1, or -1 after the message */
static int queue_option(dp_tool_input *t, int c, const char *arg) {
        dp_error e = DP_ERROR_INIT;
        int v = 0;
        if (c == DP_OPT_QUEUE_POLICY) {
                v = dp_tool_word_value(t->cmd, "--queue-policy", arg, queue_policies, "kueue, kai or volcano");
                if (v >= 0) t->queue_policy = v + 1;
        } else if (c == DP_OPT_VOLCANO_PLUGIN) {
                v = dp_tool_word_value(t->cmd, "--volcano-plugin", arg, volcano_plugins, "proportion or capacity");
                if (v >= 0) t->volcano.plugin = v;
        } else if (dp_volcano_options_actions(&t->volcano, arg, &e) < 0) {
                dp_tool_print_error(t->cmd, dp_error_msg(&e), NULL);
                return -1;
        }
        return v < 0 ? -1 : 1;
}

static const char *replay_flag(int c) {
        switch (c) {
        case 'f': return "-f";
        case DP_OPT_KUBECONFIG: return "--kubeconfig";
        case DP_OPT_CONTEXT: return "--context";
        case DP_OPT_IN_CLUSTER: return "--in-cluster";
        case DP_OPT_SA_DIR: return "--service-account-dir";
        case DP_OPT_CORDON: return "--cordon";
        case DP_OPT_FAIL_DEVICE: return "--fail-device";
        case DP_OPT_MODE: return "--mode";
        case DP_OPT_GATES: return "--feature-gates";
        case DP_OPT_SCHEDULER_CONFIG: return "--scheduler-config";
        case DP_OPT_KUEUE_CONFIG: return "--kueue-config";
        case DP_OPT_SET_QUOTA: return "--set-quota";
        case DP_OPT_SET_WEIGHT: return "--set-weight";
        case DP_OPT_SET_PREEMPTION: return "--set-preemption";
        case DP_OPT_ADD_NODES: return "--add-nodes";
        case DP_OPT_SET_CHECK: return "--set-check";
        case DP_OPT_LIVE_TIMEOUT: return "--live-timeout"; /* a cluster that needed them needs them again */
        case DP_OPT_LIVE_MAX_BYTES: return "--live-max-bytes";
        case DP_OPT_QUEUE_POLICY: return "--queue-policy"; /* the pods it holds back are explained by it */
        case DP_OPT_VOLCANO_PLUGIN: return "--volcano-plugin";
        case DP_OPT_VOLCANO_ACTIONS: return "--volcano-actions";
        default: return NULL;
        }
}

int dp_tool_input_option(dp_tool_input *t, int c, const char *arg) {
        int r = option_value(t, c, arg);
        if (r <= 0) return r;
        const char *flag = replay_flag(c);
        if (flag && replay_add(t, flag, c == DP_OPT_IN_CLUSTER ? NULL : arg) < 0) {
                fprintf(stderr, "devplane %s: out of memory\n", t->cmd);
                return -1;
        }
        return 1;
}

static int option_value(dp_tool_input *t, int c, const char *arg) {
        switch (c) {
        case DP_OPT_LIVE_TIMEOUT: {
                char *end = NULL;
                errno = 0;
                double v = strtod(arg, &end);
                if (errno || end == arg || *end || !(v > 0) || v > 86400) {
                        fprintf(stderr, "devplane %s: --live-timeout %s: must be a number of seconds (0 < s <= 86400)\n",
                                t->cmd, arg);
                        return -1;
                }
                t->limits.deadline_ms = (unsigned)(v * 1000 + 0.5) ? (unsigned)(v * 1000 + 0.5) : 1;
                return 1;
        }
        case DP_OPT_LIVE_MAX_BYTES:
                if (parse_bytes(arg, &t->limits.max_bytes) < 0) {
                        fprintf(stderr, "devplane %s: --live-max-bytes %s: must be a size in bytes (512Mi, 2Gi)\n",
                                t->cmd, arg);
                        return -1;
                }
                return 1;
        case 'f': t->paths[t->n_paths++] = arg; return 1;
        case DP_OPT_KUBECONFIG: t->kubeconfig = arg; return 1;
        case DP_OPT_CONTEXT: t->context = arg; return 1;
        case DP_OPT_IN_CLUSTER: t->in_cluster = true; return 1;
        case DP_OPT_SA_DIR: t->sa_dir = arg; return 1;
        case DP_OPT_CORDON: t->whatif.cordon[t->whatif.n_cordon++] = (char *)arg; return 1;
        case DP_OPT_FAIL_DEVICE: t->whatif.fail[t->whatif.n_fail++] = (char *)arg; return 1;
        case DP_OPT_MODE: t->whatif.mode[t->whatif.n_mode++] = (char *)arg; return 1;
        case DP_OPT_SCORING:
                if (!streq(arg, "binpack") && !streq(arg, "spread") && !streq(arg, "none") && !streq(arg, "default")) {
                        fprintf(stderr, "devplane %s: --scoring %s: must be default, binpack, spread or none\n", t->cmd,
                                arg);
                        return -1;
                }
                t->scoring = 1 + (streq(arg, "binpack")  ? DP_SCORE_BINPACK
                                  : streq(arg, "spread") ? DP_SCORE_SPREAD
                                  : streq(arg, "none")   ? DP_SCORE_NONE
                                                         : DP_SCORE_DEFAULT);
                return 1;
        case DP_OPT_SCHEDULER_CONFIG: t->scheduler_config = arg; return 1;
        case DP_OPT_KUEUE_CONFIG: t->kueue_config = arg; return 1;
        case DP_OPT_SET_QUOTA:
        case DP_OPT_SET_WEIGHT:
        case DP_OPT_SET_PREEMPTION:
        case DP_OPT_SET_CHECK:
        case DP_OPT_ADD_NODES: {
                dp_error e = DP_ERROR_INIT;
                int r = c == DP_OPT_SET_QUOTA        ? dp_queue_options_add_quota(&t->queue, arg, &e)
                        : c == DP_OPT_SET_WEIGHT     ? dp_queue_options_add_weight(&t->queue, arg, &e)
                        : c == DP_OPT_SET_PREEMPTION ? dp_queue_options_add_preemption(&t->queue, arg, &e)
                        : c == DP_OPT_SET_CHECK      ? dp_queue_options_add_check(&t->queue, arg, &e)
                                                     : dp_queue_options_add_nodes(&t->queue, arg, &e);
                if (r < 0) fprintf(stderr, "devplane %s: %s\n", t->cmd, dp_error_msg(&e));
                return r < 0 ? -1 : 1;
        }
        case DP_OPT_ALL_SCHEDULERS: t->all_schedulers = true; return 1;
        case DP_OPT_NO_PREEMPTION: t->no_preemption = true; return 1;
        case DP_OPT_DRA_PREEMPTION: t->dra_preemption = true; return 1;
        case DP_OPT_KUEUE_FAIR_SHARING: t->kueue_fair_sharing = true; return 1;
        case DP_OPT_QUEUE_POLICY:
        case DP_OPT_VOLCANO_PLUGIN:
        case DP_OPT_VOLCANO_ACTIONS: return queue_option(t, c, arg);
        case DP_OPT_GATES: return dp_tool_feature_gate(t->cmd, arg, &t->gates) < 0 ? -1 : 1;
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
        const char *hint = "";
        if (r == -ETIMEDOUT && (t->kubeconfig || t->in_cluster))
                hint = " (--live-timeout SECONDS allows longer)";
        else if (r == -E2BIG && (t->kubeconfig || t->in_cluster))
                hint = " (--live-max-bytes allows more; or save the lists with `kubectl get ... -o json` and pass "
                       "the file with -f)";
        dp_tool_print_error(t->cmd, dp_error_msg(err), hint);
        return 2;
}

/* The live cluster's lists as texts for dp_sim_load_texts. */
static int load_live(dp_tool_input *t, dp_sim_input **ret, dp_error *err) {
        _cleanup_(dp_kube_config_freep) dp_kube_config *cfg = NULL;
        int r = t->kubeconfig ? dp_kube_config_load_flags(t->kubeconfig, t->context, DP_KUBE_CONFIG_EXEC, &cfg, err)
                              : dp_kube_config_in_cluster(t->sa_dir, &cfg, err);
        _cleanup_(dp_kube_snapshot_freep) dp_kube_snapshot *snap = NULL;
        if (r >= 0) r = dp_kube_snapshot_take(cfg, &t->limits, &snap, err);
        if (r < 0) return r;
        if (snap->dra_note) {
                _cleanup_free_ char *m = dp_escape_dup(snap->dra_note);
                fprintf(stderr, "devplane %s: %s%s\n", t->cmd, snap->dra ? "" : "warning: ", m ? m : "");
        }
        if (cfg->namespace && !(t->namespace = dp_strdup(cfg->namespace))) return -ENOMEM;
        _cleanup_free_ dp_sim_text *texts = calloc(snap->n + 1, sizeof(*texts));
        if (!texts) return -ENOMEM;
        for (size_t i = 0; i < snap->n; i++)
                texts[i] = (dp_sim_text){snap->pages[i].body, snap->pages[i].len, snap->pages[i].source};
        return dp_sim_load_texts(texts, snap->n, t->paths, t->n_paths, ret, err);
}

/* --scheduler-config: default-scheduler's profile into the input (the
 * warnings printed). 0, or the exit status with the message printed. */
static int load_scheduler_config(dp_tool_input *t, dp_sim_input *in) {
        if (t->scoring && t->scoring - 1 != DP_SCORE_DEFAULT) {
                fprintf(stderr, "devplane %s: --scheduler-config scores as kube-scheduler does: --scoring must be "
                                "default or unset\n",
                        t->cmd);
                return 2;
        }
        dp_error err = DP_ERROR_INIT;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_(dp_score_config_freep) dp_score_config *cfg = NULL;
        int r = dp_read_file(t->scheduler_config, 1 << 20, &text, &len, &err);
        if (r >= 0) r = dp_score_config_parse(text, len, t->scheduler_config, &cfg, &err);
        if (r < 0) return fail(t, r, &err);
        for (size_t i = 0; i < cfg->n_warnings; i++)
                fprintf(stderr, "devplane %s: warning: %s\n", t->cmd, cfg->warnings[i]);
        const dp_score_profile *p = dp_score_config_profile(cfg, "default-scheduler");
        for (size_t i = 0; i < cfg->n_profiles; i++)
                if (&cfg->profiles[i] != p)
                        fprintf(stderr, "devplane %s: warning: %s: profile %s: not simulated (devplane schedules as "
                                        "default-scheduler)\n",
                                t->cmd, t->scheduler_config, cfg->profiles[i].scheduler_name);
        if (!p) {
                fprintf(stderr, "devplane %s: %s: no profile has schedulerName default-scheduler\n", t->cmd,
                        t->scheduler_config);
                return 2;
        }
        in->profile = *p;
        in->has_profile = true;
        in->policy = DP_SCORE_DEFAULT;
        return 0;
}

/* --kueue-config: Kueue's Configuration (the warnings printed). 0, or the
 * exit status with the message printed. */
static int load_kueue_config(dp_tool_input *t) {
        dp_error err = DP_ERROR_INIT;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = dp_read_file(t->kueue_config, 1 << 20, &text, &len, &err);
        if (r >= 0) r = dp_kueue_config_parse(text, len, t->kueue_config, &t->kueue, &err);
        if (r < 0) return fail(t, r, &err);
        for (size_t i = 0; i < t->kueue->n_warnings; i++)
                fprintf(stderr, "devplane %s: warning: %s\n", t->cmd, t->kueue->warnings[i]);
        t->queue.config = t->kueue;
        return 0;
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
        if (t->kubeconfig || t->in_cluster)
                r = load_live(t, &in, &err);
        else
                r = dp_sim_load_or_builtin(t->paths, t->n_paths, &in, &err);
        if (r >= 0) {
                dp_tool_warn_skipped(t->cmd, in->objs);
                in->alloc = t->gates;
                if (t->scoring) in->policy = (dp_score_policy)(t->scoring - 1);
                if (t->scheduler_config && (r = load_scheduler_config(t, in)) != 0) return r;
                if (t->kueue_config && !t->kueue && (r = load_kueue_config(t)) != 0) return r;
                in->queue = &t->queue;
                in->all_schedulers = t->all_schedulers;
                in->no_preemption = t->no_preemption;
                in->dra_preemption = t->dra_preemption;
                in->kueue_fair_sharing = t->kueue_fair_sharing;
                in->volcano = t->queue_policy == QP_VOLCANO + 1 ? &t->volcano : NULL;
                in->queue_policy = t->queue_policy ? queue_policies[t->queue_policy - 1].word : NULL;
                /* progress only where a person watches: never into a file or pipe */
                in->progress = isatty(STDERR_FILENO);
                in->progress_t0_ms = (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000;
                r = dp_sim_set_whatif(in, &t->whatif, &err);
        }
        if (r < 0) return fail(t, r, &err);
        *ret = TAKE_PTR(in);
        return 0;
}

int dp_tool_input_fix_hints(const dp_tool_input *t, dp_strbuf *text, bool html) {
        static const char cmd[] = "devplane explain ", opt[] = " --details";
        if (!t->replay || !text->len) return 0;
        const char *s = dp_strbuf_str(text);
        if (!strstr(s, cmd)) return 0;
        dp_strbuf out = DP_STRBUF_INIT;
        for (const char *p = s;;) {
                const char *c = strstr(p, cmd);
                const char *end = c ? c + strcspn(c, "\n<") : NULL;
                const char *d = c ? strstr(c, opt) : NULL;
                if (!c || !d || d > end) {
                        /* not a hint of that shape: copied as it is */
                        size_t n = c ? (size_t)(c - p) + sizeof(cmd) - 1 : strlen(p);
                        dp_strbuf_append(&out, p, n);
                        if (!c) break;
                        p += n;
                        continue;
                }
                dp_strbuf_append(&out, p, (size_t)(d - p));
                if (html)
                        dp_escape_html(&out, t->replay);
                else
                        dp_escape_append(&out, t->replay, strlen(t->replay), 0);
                p = d;
        }
        if (dp_strbuf_failed(&out)) {
                dp_strbuf_done(&out);
                return -ENOMEM;
        }
        dp_strbuf_done(text);
        *text = out;
        return 0;
}
