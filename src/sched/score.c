/* SPDX-License-Identifier: Apache-2.0
 * score.c — the default profile's weights and each Score plugin's
 * arithmetic (score.h), and the choice among the feasible nodes
 * (score-pick.h). */
#include <math.h>
#include <string.h>

#include "sched/score-pick.h"

const char *const dp_score_plugin_names[DP_PLUGIN_N] = {
        [DP_PLUGIN_TAINT] = "TaintToleration",
        [DP_PLUGIN_NODE_AFFINITY] = "NodeAffinity",
        [DP_PLUGIN_FIT] = "NodeResourcesFit",
        [DP_PLUGIN_BALANCED] = "NodeResourcesBalancedAllocation",
        [DP_PLUGIN_IMAGE] = "ImageLocality",
        [DP_PLUGIN_INTERPOD] = "InterPodAffinity",
        [DP_PLUGIN_SPREAD] = "PodTopologySpread",
        [DP_PLUGIN_DRA] = "DynamicResources",
};

/* getDefaultPlugins (pkg/scheduler/apis/config/v1/default_plugins.go):
 * MultiPoint weights; a Score plugin listed without one weighs 1. */
size_t dp_score_nodes_to_find(bool sample, int32_t percent, size_t n) {
        if (!sample || n < 100) return n;
        int64_t pct = percent;
        if (pct == 0) pct = DP_MAX(50 - (int64_t)n / 125, 5);
        size_t k = (size_t)((int64_t)n * pct / 100);
        return DP_MAX(k, (size_t)100);
}

void dp_score_profile_default(dp_score_profile *p) {
        *p = (dp_score_profile){0};
        strcpy(p->scheduler_name, "default-scheduler");
        p->weight[DP_PLUGIN_TAINT] = 3;
        p->weight[DP_PLUGIN_NODE_AFFINITY] = 2;
        p->weight[DP_PLUGIN_FIT] = 1;
        p->weight[DP_PLUGIN_BALANCED] = 1;
        p->weight[DP_PLUGIN_IMAGE] = 1;
        p->weight[DP_PLUGIN_INTERPOD] = 2;
        p->weight[DP_PLUGIN_SPREAD] = 2;
        p->weight[DP_PLUGIN_DRA] = 1;
        p->strategy = DP_FIT_LEAST;
        p->fit[0] = (dp_score_resource){"cpu", 1};
        p->fit[1] = (dp_score_resource){"memory", 1};
        p->n_fit = 2;
        p->balanced[0] = (dp_score_resource){"cpu", 1};
        p->balanced[1] = (dp_score_resource){"memory", 1};
        p->n_balanced = 2;
        p->hard_pod_affinity_weight = 1;
        p->spread_system_defaults = true;
}

/* ---- NodeResourcesFit ---- */

static int64_t least_requested(int64_t requested, int64_t capacity) {
        if (capacity == 0 || requested > capacity) return 0;
        return (capacity - requested) * DP_SCORE_MAX_NODE / capacity;
}

static int64_t most_requested(int64_t requested, int64_t capacity) {
        if (capacity == 0) return 0;
        if (requested > capacity) requested = capacity;
        return requested * DP_SCORE_MAX_NODE / capacity;
}

/* helper.BuildBrokenLinearFunction over the shape's points. */
static int64_t broken_linear(const dp_score_profile *p, int64_t x) {
        for (size_t i = 0; i < p->n_shape; i++) {
                if (x > p->shape[i].utilization) continue;
                if (i == 0) return p->shape[0].score;
                const dp_score_point *a = &p->shape[i - 1], *b = &p->shape[i];
                return a->score + (b->score - a->score) * (x - a->utilization) / (b->utilization - a->utilization);
        }
        return p->n_shape ? p->shape[p->n_shape - 1].score : 0;
}

int64_t dp_score_fit(const dp_score_profile *p, const int64_t *requested, const int64_t *allocatable) {
        int64_t sum = 0, weights = 0;
        for (size_t i = 0; i < p->n_fit; i++) {
                if (allocatable[i] == 0) continue;
                int64_t w = p->fit[i].weight, s;
                if (p->strategy == DP_FIT_RATIO) {
                        s = requested[i] > allocatable[i] ? broken_linear(p, 100)
                                                          : broken_linear(p, requested[i] * 100 / allocatable[i]);
                        if (s <= 0) continue; /* upstream leaves a 0 out of the mean */
                } else
                        s = p->strategy == DP_FIT_MOST ? most_requested(requested[i], allocatable[i])
                                                       : least_requested(requested[i], allocatable[i]);
                sum += s * w;
                weights += w;
        }
        if (weights == 0) return 0;
        if (p->strategy == DP_FIT_RATIO) return dp_score_round((double)sum / (double)weights);
        return sum / weights;
}

/* ---- BalancedAllocation ---- */

int64_t dp_score_balanced(const int64_t *requested, const int64_t *allocatable, size_t n) {
        double f[DP_SCORE_RESOURCES_MAX], total = 0;
        size_t k = 0;
        for (size_t i = 0; i < n && i < DP_SCORE_RESOURCES_MAX; i++) {
                if (allocatable[i] == 0) continue;
                double x = (double)requested[i] / (double)allocatable[i];
                if (x > 1) x = 1;
                total += x;
                f[k++] = x;
        }
        double sd = 0;
        if (k == 2)
                sd = fabs((f[0] - f[1]) / 2);
        else if (k > 2) {
                double mean = total / (double)k, sum = 0;
                for (size_t i = 0; i < k; i++)
                        sum = sum + (f[i] - mean) * (f[i] - mean);
                sd = sqrt(sum / (double)k);
        }
        return (int64_t)((1 - sd) * (double)DP_SCORE_MAX_NODE);
}

/* ---- normalisation ---- */

void dp_score_normalize_default(int64_t *v, size_t n, bool reverse) {
        int64_t max = 0;
        for (size_t i = 0; i < n; i++)
                if (v[i] > max) max = v[i];
        if (max == 0) {
                for (size_t i = 0; reverse && i < n; i++)
                        v[i] = DP_SCORE_MAX_NODE;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                int64_t s = DP_SCORE_MAX_NODE * v[i] / max;
                v[i] = reverse ? DP_SCORE_MAX_NODE - s : s;
        }
}

void dp_score_normalize_minmax(int64_t *v, size_t n) {
        int64_t min = INT64_MAX, max = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
                if (v[i] > max) max = v[i];
                if (v[i] < min) min = v[i];
        }
        int64_t diff = max - min;
        for (size_t i = 0; i < n; i++) {
                double f = 0;
                if (diff > 0) f = (double)DP_SCORE_MAX_NODE * ((double)(v[i] - min) / (double)diff);
                v[i] = (int64_t)f;
        }
}

void dp_score_normalize_spread(int64_t *v, const bool *ignored, size_t n) {
        int64_t min = INT64_MAX, max = 0;
        for (size_t i = 0; i < n; i++) {
                if (ignored && ignored[i]) continue;
                if (v[i] < min) min = v[i];
                if (v[i] > max) max = v[i];
        }
        for (size_t i = 0; i < n; i++) {
                if (ignored && ignored[i])
                        v[i] = 0;
                else if (max == 0)
                        v[i] = DP_SCORE_MAX_NODE;
                else
                        v[i] = DP_SCORE_MAX_NODE * (max + min - v[i]) / max;
        }
}

double dp_score_spread_term(int64_t cnt, int32_t max_skew, int64_t topo_size) {
        return (double)cnt * log((double)(topo_size + 2)) + (double)(max_skew - 1);
}

int64_t dp_score_round(double v) { return (int64_t)round(v); }

/* ---- the choice ---- */

/* The plugins' scores of the feasible nodes, normalised, weighted and
 * summed into s->total; the index of the best (the first among equals). */
size_t dp_score_pick(const dp_score_profile *p, dp_score_nodes *s) {
        struct {
                int64_t *v;
                int plugin;
                int how; /* 0 none, 1 default, 2 default reversed, 3 min-max, 4 spread */
        } parts[] = {
                {s->taint, DP_PLUGIN_TAINT, 2},       {s->affinity, DP_PLUGIN_NODE_AFFINITY, 1},
                {s->interpod, DP_PLUGIN_INTERPOD, 3}, {s->spread, DP_PLUGIN_SPREAD, 4},
                {s->dra, DP_PLUGIN_DRA, 1},
        };
        for (size_t k = 0; k < ELEMENTSOF(parts); k++) {
                int w = p->weight[parts[k].plugin];
                if (!parts[k].v || !w) continue;
                switch (parts[k].how) {
                case 1: dp_score_normalize_default(parts[k].v, s->n, false); break;
                case 2: dp_score_normalize_default(parts[k].v, s->n, true); break;
                case 3: dp_score_normalize_minmax(parts[k].v, s->n); break;
                default: dp_score_normalize_spread(parts[k].v, s->spread_ignored, s->n);
                }
                for (size_t i = 0; i < s->n; i++)
                        s->total[i] += (int64_t)w * parts[k].v[i];
        }
        for (size_t i = 0; s->image && i < s->n; i++)
                s->total[i] += (int64_t)p->weight[DP_PLUGIN_IMAGE] * s->image[i];
        /* a plugin left out (Skip, or nothing to tell nodes apart) still
         * adds a constant: the reversed taint score of no taint */
        if (!s->taint && p->weight[DP_PLUGIN_TAINT])
                for (size_t i = 0; i < s->n; i++)
                        s->total[i] += (int64_t)p->weight[DP_PLUGIN_TAINT] * DP_SCORE_MAX_NODE;
        size_t best = 0;
        for (size_t i = 1; i < s->n; i++)
                if (s->total[i] > s->total[best]) best = i;
        return best;
}
