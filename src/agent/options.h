/* SPDX-License-Identifier: Apache-2.0
 *
 * options.h — `devplane agent`'s command line and environment, checked into
 * dp_agent_options (agent.h). The CLI (tools/cmd-agent.c) only stores what
 * getopt gives it in a dp_agent_args, as typed; dp_agent_args_check() reads
 * the environment's part, checks every value and their combinations, and
 * completes args->o, so the rules live beside the options they guard.
 *
 * Precedence is NVIDIA's device plugin's (urfave/cli): flag, then
 * environment variable, then --config file, then default. NVIDIA's
 * variables are read by dp_agent_args_init() and the flags added after
 * them with dp_agent_args_add_flag(), so the later (a flag) wins.
 *
 * Errors: -EINVAL with err naming the flag or variable and the rule (the
 * CLI exits 2), -ENOMEM (exit 1). args->o borrows from args: keep args
 * until the agent is freed; dp_agent_args_done() frees what args owns.
 */
#pragma once

#include "agent/agent.h"

#define DP_AGENT_TAINTS_MAX 32   /* --taint-effect flags */
#define DP_AGENT_NV_FLAGS_MAX 32 /* NVIDIA flags known (devices/config.h dp_config_flags) */
#define DP_AGENT_CONFIG_LABEL_DEFAULT "nvidia.com/device-plugin.config"

typedef struct dp_agent_args {
        dp_agent_options o; /* plain values go straight here */
        /* values that are checked or combined, as typed (NULL: not given) */
        const char *backend;            /* --backend */
        const char *api_backoff_max_ms; /* --api-backoff-max-ms */
        const char *log_format;         /* --log-format text|json */
        const char *config_flag;        /* --config / --config-file */
        const char *kubelet_socket;     /* --kubelet-socket, else $KUBELET_SOCKET */
        const char *config_dir, *config_label, *config_default;
        const char *taints[DP_AGENT_TAINTS_MAX];
        size_t n_taints, n_taints_given;
        dp_config_override ov[2 * DP_AGENT_NV_FLAGS_MAX];
        size_t n_ov;
        char origins[2 * DP_AGENT_NV_FLAGS_MAX][48];
        bool verbose, dry_run;
        bool json_logs;                  /* set by the check from log_format */
        char *socket_dir, *nvml_in_root; /* owned */
} dp_agent_args;

/* Defaults (plugin directory, config label and default), then NVIDIA's
 * variables, $NODE_NAME and $KUBELET_SOCKET. */
void dp_agent_args_init(dp_agent_args *a);

/* One NVIDIA config flag (dp_config_flags[k]) from the command line; value
 * NULL for a boolean given bare. */
void dp_agent_args_add_flag(dp_agent_args *a, size_t k, const char *value);

/* One --taint-effect CLASS=EFFECT (counted; more than DP_AGENT_TAINTS_MAX
 * is refused by the check). */
void dp_agent_args_add_taint(dp_agent_args *a, const char *value);

/* Check and complete a->o as said above. With a->dry_run, the checks of
 * what only a running agent needs (what it serves, where the API and config
 * come from) are skipped. */
int dp_agent_args_check(dp_agent_args *a, dp_error *err);

void dp_agent_args_done(dp_agent_args *a);
