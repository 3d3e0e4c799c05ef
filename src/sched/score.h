/* SPDX-License-Identifier: Apache-2.0
 *
 * score.h — kube-scheduler 1.35's Score plugins of the default profile
 * (DP_SCORE_DEFAULT), their weights and arguments (a profile, defaults or
 * read from a KubeSchedulerConfiguration, score-config.c), and the
 * arithmetic of each plugin's Score and NormalizeScore, in upstream's
 * integers (and, where upstream computes in float64, the same doubles):
 *
 *   TaintToleration (3)      PreferNoSchedule taints the pod does not
 *                            tolerate, counted; normalised reversed
 *                            (100 - 100 * n / max over the feasible nodes)
 *   NodeAffinity (2)         weights of the preferred terms the node matches;
 *                            normalised 100 * s / max
 *   NodeResourcesFit (1)     LeastAllocated (default), MostAllocated or
 *                            RequestedToCapacityRatio over the configured
 *                            resources (default cpu, memory, weight 1 each),
 *                            with the non-zero requests (100m CPU, 200Mi for
 *                            a container that names none); no normalisation
 *   BalancedAllocation (1)   cpu and memory, actual requests; 100 * (1 - std
 *                            of the fractions); skipped for a pod requesting
 *                            neither
 *   ImageLocality (1)        node.status.images: each of the pod's images a
 *                            node lists, its size times the share of nodes
 *                            listing it, summed, scaled between 23 MiB and
 *                            1,000 MiB per container to 0..100 (filter.c)
 *   InterPodAffinity (2)     preferred terms of the pod and of bound pods,
 *                            bound pods' required affinity (hardPodAffinity-
 *                            Weight); min-max normalised (plugin-interpod.c)
 *   PodTopologySpread (2)    ScheduleAnyway constraints, or the cluster's
 *                            defaults for pods a ReplicaSet/StatefulSet
 *                            controls (plugin-spread.c);
 *                            100 * (max + min - s) / max
 *   DynamicResources (1)     firstAvailable: 8 - index of each subrequest
 *                            chosen, summed; normalised 100 * s / max
 *
 * The total is the sum of weight * score; the highest wins, the lowest node
 * name among equals (the oracle's patch of kube-scheduler's random tie).
 *
 * Pure: numbers in, numbers out. Errors: -ENOMEM, and -EINVAL from the
 * configuration reader (with err).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define DP_SCORE_MAX_NODE 100
/* schedutil.DefaultMilliCPURequest / DefaultMemoryRequest */
#define DP_SCORE_DEFAULT_MILLI_CPU 100
#define DP_SCORE_DEFAULT_MEMORY (200 * 1024 * 1024)
/* resourceapi.FirstAvailableDeviceRequestMaxSize */
#define DP_SCORE_FIRST_AVAILABLE_MAX 8
/* upstream validation: at most this many resources / shape points */
#define DP_SCORE_RESOURCES_MAX 16
#define DP_SCORE_SHAPE_MAX 16

typedef enum {
        DP_PLUGIN_TAINT = 0,
        DP_PLUGIN_NODE_AFFINITY,
        DP_PLUGIN_FIT,
        DP_PLUGIN_BALANCED,
        DP_PLUGIN_IMAGE,
        DP_PLUGIN_INTERPOD,
        DP_PLUGIN_SPREAD,
        DP_PLUGIN_DRA,
        DP_PLUGIN_N,
} dp_score_plugin;

/* kube-scheduler's names, indexed by dp_score_plugin. */
extern const char *const dp_score_plugin_names[DP_PLUGIN_N];

typedef enum { DP_FIT_LEAST = 0, DP_FIT_MOST, DP_FIT_RATIO } dp_fit_strategy;

typedef struct dp_score_resource {
        char name[64];
        int64_t weight;
} dp_score_resource;

typedef struct dp_score_point {
        int64_t utilization, score; /* score already scaled to 0..100 */
} dp_score_point;

typedef struct dp_score_profile {
        char scheduler_name[254];
        int32_t weight[DP_PLUGIN_N]; /* 0: the plugin does not score */
        dp_fit_strategy strategy;
        dp_score_resource fit[DP_SCORE_RESOURCES_MAX];
        size_t n_fit;
        dp_score_point shape[DP_SCORE_SHAPE_MAX];
        size_t n_shape;
        dp_score_resource balanced[DP_SCORE_RESOURCES_MAX];
        size_t n_balanced;
        int32_t hard_pod_affinity_weight;         /* InterPodAffinityArgs, default 1 */
        bool ignore_preferred_terms_of_existing; /* InterPodAffinityArgs */
        bool spread_system_defaults;              /* PodTopologySpreadArgs defaultingType System */
        /* percentageOfNodesToScore (the profile's, else the configuration's):
         * unset (sample_nodes false), every feasible node is scored */
        bool sample_nodes;
        int32_t sample_percent; /* 0: kube-scheduler's adaptive share */
} dp_score_profile;

/* The 1.35 default profile ("default-scheduler"). */
void dp_score_profile_default(dp_score_profile *p);

/* How many feasible nodes the filter looks for among n before it stops
 * (kube-scheduler's numFeasibleNodesToFind): every node under 100 nodes;
 * else n * percent / 100 (percent 0: 50 - n/125, at least 5), at least
 * 100. Unset (sample false): n. */
size_t dp_score_nodes_to_find(bool sample, int32_t percent, size_t n);

/* ---- one plugin's arithmetic ---- */

/* NodeResourcesFit's score for requested[i] (node's + pod's) of
 * allocatable[i], i over p->fit (allocatable 0: the resource is left out). */
int64_t dp_score_fit(const dp_score_profile *p, const int64_t *requested, const int64_t *allocatable);
/* BalancedAllocation over n resources. */
int64_t dp_score_balanced(const int64_t *requested, const int64_t *allocatable, size_t n);
/* helper.DefaultNormalizeScore(100, reverse) over v[0..n). */
void dp_score_normalize_default(int64_t *v, size_t n, bool reverse);
/* InterPodAffinity's NormalizeScore (min-max, float64 as upstream). */
void dp_score_normalize_minmax(int64_t *v, size_t n);
/* PodTopologySpread's NormalizeScore; ignored[i]: the node lacked a key (0). */
void dp_score_normalize_spread(int64_t *v, const bool *ignored, size_t n);
/* PodTopologySpread's scoreForCount summed per node: cnt * ln(size + 2) +
 * maxSkew - 1 for one constraint (added in double, rounded at the end). */
double dp_score_spread_term(int64_t cnt, int32_t max_skew, int64_t topo_size);
int64_t dp_score_round(double v); /* math.Round */

/* ---- a KubeSchedulerConfiguration (score-config.c) ---- */

typedef struct dp_score_config {
        dp_score_profile *profiles;
        size_t n_profiles;
        bool sample_nodes; /* the top-level percentageOfNodesToScore, for profiles without one */
        int32_t sample_percent;
        char **warnings; /* unknown or unmodelled fields, each naming its path */
        size_t n_warnings;
} dp_score_config;

/* Read a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration from
 * text (`source` names it in messages): each profile's schedulerName, its
 * Score plugins' weights (plugins.score and plugins.multiPoint, enabled
 * with weight / disabled by name or "*") and pluginConfig args of
 * NodeResourcesFit (scoringStrategy), NodeResourcesBalancedAllocation
 * (resources), InterPodAffinity (hardPodAffinityWeight,
 * ignorePreferredTermsOfExistingPods) and PodTopologySpread
 * (defaultingType). Unknown fields and fields devplane does not model are
 * warnings; a bad value is -EINVAL with err ("FILE: profiles[0].pluginConfig[1]
 * .args.scoringStrategy.type: must be LeastAllocated, ..."). */
int dp_score_config_parse(const char *text, size_t len, const char *source, dp_score_config **ret, dp_error *err);
dp_score_config *dp_score_config_free(dp_score_config *c);
DEFINE_FREEP(dp_score_config, dp_score_config_free)
/* The profile serving schedulerName `name`; NULL when none does. */
const dp_score_profile *dp_score_config_profile(const dp_score_config *c, const char *name);
