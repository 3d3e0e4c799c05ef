/* SPDX-License-Identifier: Apache-2.0
 * cluster-input.h — the input flags `devplane simulate` and `devplane
 * explain` share: files (-f, "-" for standard input), the live cluster
 * (--kubeconfig/--context/--in-cluster, read-only) and what-if changes
 * (--cordon, --fail-device, --mode), and feature gates. */
#pragma once

#include <getopt.h>

#include "kube/kube.h"
#include "sched/sim.h"

enum {
        DP_OPT_KUBECONFIG = 0x100,
        DP_OPT_CONTEXT,
        DP_OPT_IN_CLUSTER,
        DP_OPT_CORDON,
        DP_OPT_FAIL_DEVICE,
        DP_OPT_MODE,
        DP_OPT_GATES,
        DP_OPT_SA_DIR,
        DP_OPT_SCORING,
        DP_OPT_ALL_SCHEDULERS,
        DP_OPT_NO_PREEMPTION,
        DP_OPT_DRA_PREEMPTION,
        DP_OPT_SCHEDULER_CONFIG,
        DP_OPT_KUEUE_FAIR_SHARING,
        DP_OPT_KUEUE_CONFIG, /* Kueue (src/queue): --kueue-config and the what-if flags after it */
        DP_OPT_SET_QUOTA,
        DP_OPT_SET_WEIGHT,
        DP_OPT_SET_PREEMPTION,
        DP_OPT_ADD_NODES,
        DP_OPT_QUEUE_POLICY, /* --queue-policy, --volcano-plugin, --volcano-actions */
        DP_OPT_VOLCANO_PLUGIN,
        DP_OPT_VOLCANO_ACTIONS,
        DP_OPT_SET_CHECK, /* Kueue's admission checks (queue/checks.c) */
};

/* Live mode's bounds (docs/live.md), numbered apart from the flags above. */
enum { DP_OPT_LIVE_TIMEOUT = 0x180, DP_OPT_LIVE_MAX_BYTES };

#define DP_TOOL_INPUT_OPTIONS                                                                                          \
        {"filename", required_argument, NULL, 'f'}, {"kubeconfig", required_argument, NULL, DP_OPT_KUBECONFIG},     \
                {"live-timeout", required_argument, NULL, DP_OPT_LIVE_TIMEOUT},                                    \
                {"live-max-bytes", required_argument, NULL, DP_OPT_LIVE_MAX_BYTES},                                \
                {"context", required_argument, NULL, DP_OPT_CONTEXT},                                              \
                {"in-cluster", no_argument, NULL, DP_OPT_IN_CLUSTER},                                              \
                {"cordon", required_argument, NULL, DP_OPT_CORDON},                                                \
                {"fail-device", required_argument, NULL, DP_OPT_FAIL_DEVICE},                                      \
                {"mode", required_argument, NULL, DP_OPT_MODE},                                                    \
                {"feature-gates", required_argument, NULL, DP_OPT_GATES},                                          \
                {"service-account-dir", required_argument, NULL, DP_OPT_SA_DIR},                                   \
                {"scoring", required_argument, NULL, DP_OPT_SCORING},                                              \
                {"all-schedulers", no_argument, NULL, DP_OPT_ALL_SCHEDULERS},                                      \
                {"no-preemption", no_argument, NULL, DP_OPT_NO_PREEMPTION},                                        \
                {"dra-preemption", no_argument, NULL, DP_OPT_DRA_PREEMPTION},                                          \
                {"scheduler-config", required_argument, NULL, DP_OPT_SCHEDULER_CONFIG},                            \
                {"kueue-fair-sharing", no_argument, NULL, DP_OPT_KUEUE_FAIR_SHARING},                              \
                {"kueue-config", required_argument, NULL, DP_OPT_KUEUE_CONFIG},                                    \
                {"set-quota", required_argument, NULL, DP_OPT_SET_QUOTA},                                          \
                {"set-weight", required_argument, NULL, DP_OPT_SET_WEIGHT},                                        \
                {"set-preemption", required_argument, NULL, DP_OPT_SET_PREEMPTION},                                \
                {"add-nodes", required_argument, NULL, DP_OPT_ADD_NODES},                                          \
                {"queue-policy", required_argument, NULL, DP_OPT_QUEUE_POLICY},                                    \
                {"volcano-plugin", required_argument, NULL, DP_OPT_VOLCANO_PLUGIN},                                \
                {"volcano-actions", required_argument, NULL, DP_OPT_VOLCANO_ACTIONS},                              \
                {"set-check", required_argument, NULL, DP_OPT_SET_CHECK}

#define DP_TOOL_INPUT_USAGE                                                                                            \
        "input:\n"                                                                                                     \
        "  -f, --filename FILE|DIR|-     Fleet, Kubernetes objects, Timeline (repeatable; - reads standard input).\n" \
        "                                A `kubectl get nodes,pods,resourceslices,resourceclaims,\n"                   \
        "                                resourceclaimtemplates,deviceclasses,devicetaintrules -A -o yaml` dump\n"     \
        "                                is a complete input: its Node objects are the nodes.\n"                       \
        "  --kubeconfig FILE [--context NAME], --in-cluster [--service-account-dir DIR]\n"                             \
        "                                read the same resources from the API server (list only, never a\n"            \
        "                                write); -f files are added on top (workloads to try). An exec\n"              \
        "                                credential plugin (EKS, GKE, AKS) runs as kubectl runs it, never\n"          \
        "                                interactively; resource.k8s.io is read at the version served.\n"            \
        "  --live-timeout SECONDS        stop reading the API server after this long (default 60)\n"                 \
        "  --live-max-bytes SIZE         at most this much of the API server's lists kept (default 1Gi)\n"           \
        "what-if, on top of the input:\n"                                                                              \
        "  --cordon NODE                 the node takes no new pods (repeatable)\n"                                    \
        "  --fail-device NODE/DEVICE|DRIVER/POOL/DEVICE\n"                                                             \
        "                                the device is failed (NoSchedule) from the start (repeatable)\n"              \
        "  --mode GROUP_OR_NODE=v1|v2|both\n"                                                                          \
        "                                a Fleet node group's model; a Node object: v1 drops its\n"                    \
        "                                ResourceSlices, v2 its extended resources (repeatable)\n"                     \
        "  --feature-gates DRADeviceCompatibilityGroups=true|false\n"                                                 \
        "scheduler:\n"                                                                                                 \
        "  --scoring default|binpack|spread|none\n"                                                                 \
        "                                default: kube-scheduler's default profile (Node objects' default);\n"      \
        "                                over a Fleet's spec.scoring (binpack unless set); none: the first\n"       \
        "                                feasible node by name\n"                                                   \
        "  --scheduler-config FILE       a KubeSchedulerConfiguration: default-scheduler's Score plugins,\n"        \
        "                                weights and NodeResourcesFit scoringStrategy (scores as default)\n"        \
        "  --all-schedulers              schedule pods of every spec.schedulerName as default-scheduler's\n"         \
        "  --no-preemption               no DefaultPreemption PostFilter (on by default, as kube-scheduler)\n"       \
        "  --dra-preemption              what-if (KEP-5690): preempting a pod frees its DRA devices\n"            \
        "Kueue:\n"                                                                                                     \
        "  --kueue-fair-sharing          Kueue's Configuration fairSharing.enable: heads ordered by the cohort\n"     \
        "                                tournament (dominant resource share), preemption while borrowing\n"        \
        "  --kueue-config FILE           Kueue's Configuration (config.kueue.x-k8s.io): deviceClassMappings\n"       \
        "                                count DRA claims in quota, excludeResourcePrefixes, feature gates\n"        \
        "  --set-quota CQ/FLAVOR/RESOURCE=QUANTITY\n"                                                                 \
        "                                what-if: that nominalQuota of the ClusterQueue (repeatable)\n"             \
        "  --set-weight CQ=WEIGHT        what-if: the ClusterQueue's fairSharing.weight (repeatable)\n"             \
        "  --set-preemption CQ/FIELD=VALUE\n"                                                                         \
        "                                what-if: the ClusterQueue's preemption policy, FIELD withinClusterQueue,\n"   \
        "                                reclaimWithinCohort, borrowWithinCohort.policy or\n"                         \
        "                                borrowWithinCohort.maxPriorityThreshold (repeatable)\n"                       \
        "  --add-nodes FLAVOR=N          what-if: N copies of the first Node object the ResourceFlavor's\n"           \
        "                                nodeLabels select, named FLAVOR-whatif-I (repeatable)\n"              \
        "  --set-check ADMISSIONCHECK=Ready|Pending\n"                                                                  \
        "                                what-if: the check's state for every workload it applies to (offline\n"     \
        "                                a check not Ready in the input keeps its workloads QuotaReserved)\n"       \
        "queues:\n"                                                                                                    \
        "  --queue-policy kueue|kai|volcano\n"                                                                       \
        "                                whose admission decides which queued pods run (Kueue's always runs\n"      \
        "                                on Kueue's objects); none: Kueue's, or KAI-Scheduler's when the input\n"   \
        "                                has KAI Queues and no Kueue object\n"                                       \
        "  --volcano-plugin proportion|capacity, --volcano-actions enqueue,allocate,backfill[,reclaim]\n"           \
        "                                with --queue-policy volcano: Volcano's quota plugin and actions\n"

typedef struct dp_tool_input {
        const char *cmd; /* "simulate": messages start "devplane simulate: " */
        const char **paths;
        size_t n_paths;
        const char *kubeconfig, *context;
        bool in_cluster;
        const char *sa_dir; /* --service-account-dir: NULL, the standard one */
        dp_kube_snapshot_limits limits; /* --live-timeout, --live-max-bytes */
        /* After dp_tool_input_load: the live context's namespace (kubeconfig
         * context or service account), owned; NULL when none. */
        char *namespace;
        /* The input flags as given (-f, --kubeconfig, --context, --in-cluster,
         * what-if), shell-quoted with a leading space, for commands printed as
         * hints; owned. */
        char *replay;
        dp_sim_whatif whatif; /* arrays owned, strings borrowed from argv */
        dp_alloc_cluster_options gates;
        int scoring; /* --scoring: a dp_score_policy + 1, 0 unset */
        const char *scheduler_config; /* --scheduler-config FILE */
        bool all_schedulers;
        bool no_preemption, dra_preemption; /* --no-preemption, --dra-preemption */
        bool kueue_fair_sharing;            /* --kueue-fair-sharing */
        const char *kueue_config;           /* --kueue-config FILE */
        dp_kueue_config *kueue;             /* read by dp_tool_input_load; owned */
        dp_queue_options queue;             /* the Kueue what-if flags; the Configuration */
        int queue_policy;                   /* --queue-policy: a DP_TOOL_QP_* + 1, 0 unset */
        dp_volcano_options volcano;         /* --volcano-plugin, --volcano-actions */
} dp_tool_input;

/* argc bounds the number of -f and what-if values. -ENOMEM. */
int dp_tool_input_init(dp_tool_input *t, const char *cmd, int argc);
void dp_tool_input_done(dp_tool_input *t);
/* 1: c was one of DP_TOOL_INPUT_OPTIONS (taken); 0: not; -1: a bad value
 * (the message is printed: exit status 2). */
int dp_tool_input_option(dp_tool_input *t, int c, const char *arg);
/* Files, the live snapshot and what-if, as one dp_sim_input; without any
 * input the built-in scenario. Warnings (kinds skipped) go to stderr.
 * 0, or the exit status with the message printed: 3 out of memory, 2 else. */
int dp_tool_input_load(dp_tool_input *t, dp_sim_input **ret);
/* The hints `devplane explain NAME --details` in text (explain's answer,
 * the report, the HTML page: html true) get the input flags the user gave
 * (t->replay) before --details, so that, pasted, they read the same input
 * rather than the built-in scenario. -ENOMEM (text unchanged). */
int dp_tool_input_fix_hints(const dp_tool_input *t, dp_strbuf *text, bool html);
/* One warning line per kind the model skipped. */
void dp_tool_warn_skipped(const char *cmd, const dp_object_list *l);
