/* SPDX-License-Identifier: Apache-2.0
 * test-score.c — the default profile's Score arithmetic (sched/score.c)
 * against values worked out by hand from kube-scheduler 1.35's formulas
 * (several are the oracle's own --v 10 figures), and the
 * KubeSchedulerConfiguration reader (sched/score-config.c). */
#include "sched-test-util.h"
#include "sched/score-pick.h"

#define GI (INT64_C(1) << 30)
#define MI (INT64_C(1) << 20)

TEST(default_profile_weights) {
        dp_score_profile p;
        dp_score_profile_default(&p);
        ASSERT_STREQ(p.scheduler_name, "default-scheduler");
        ASSERT_EQ(p.weight[DP_PLUGIN_TAINT], 3);
        ASSERT_EQ(p.weight[DP_PLUGIN_NODE_AFFINITY], 2);
        ASSERT_EQ(p.weight[DP_PLUGIN_INTERPOD], 2);
        ASSERT_EQ(p.weight[DP_PLUGIN_SPREAD], 2);
        ASSERT_EQ(p.weight[DP_PLUGIN_FIT], 1);
        ASSERT_EQ(p.weight[DP_PLUGIN_BALANCED], 1);
        ASSERT_EQ(p.weight[DP_PLUGIN_IMAGE], 1);
        ASSERT_EQ(p.weight[DP_PLUGIN_DRA], 1);
        ASSERT_EQ(p.strategy, DP_FIT_LEAST);
        ASSERT_EQ(p.n_fit, 2);
        ASSERT_EQ(p.hard_pod_affinity_weight, 1);
}

/* LeastAllocated: ((cap - req) * 100 / cap) per resource, weighted mean in
 * integers: cpu 1150*100/3500 = 32, memory 67 (67.96 truncated), (32+67)/2 = 49. */
/* kube-scheduler's numFeasibleNodesToFind: every node under 100 or when
 * unset; else the share (0: 50 - n/125, at least 5 %), at least 100. */
TEST(nodes_to_find) {
        ASSERT_EQ(dp_score_nodes_to_find(false, 10, 5000), (size_t)5000);
        ASSERT_EQ(dp_score_nodes_to_find(true, 10, 99), (size_t)99);
        ASSERT_EQ(dp_score_nodes_to_find(true, 10, 200), (size_t)100);
        ASSERT_EQ(dp_score_nodes_to_find(true, 50, 5000), (size_t)2500);
        ASSERT_EQ(dp_score_nodes_to_find(true, 100, 5000), (size_t)5000);
        ASSERT_EQ(dp_score_nodes_to_find(true, 0, 1000), (size_t)420);
        ASSERT_EQ(dp_score_nodes_to_find(true, 0, 5000), (size_t)500);
        ASSERT_EQ(dp_score_nodes_to_find(true, 0, 100000), (size_t)5000);
        ASSERT_EQ(dp_score_nodes_to_find(true, 0, 150), (size_t)100);
}

TEST(fit_least_allocated) {
        dp_score_profile p;
        dp_score_profile_default(&p);
        int64_t req[] = {2350, 5502926848}, alloc[] = {3500, 16 * GI};
        ASSERT_EQ(dp_score_fit(&p, req, alloc), 49);
        int64_t over[] = {4000, 0}, a2[] = {3500, 16 * GI}; /* over capacity: 0; memory 100 */
        ASSERT_EQ(dp_score_fit(&p, over, a2), 50);
        int64_t none[] = {100, 100}, a3[] = {0, 0}; /* nothing allocatable: 0 */
        ASSERT_EQ(dp_score_fit(&p, none, a3), 0);
        int64_t one[] = {100, 200 * MI}, a4[] = {0, 16 * GI}; /* cpu left out of the mean */
        ASSERT_EQ(dp_score_fit(&p, one, a4), 98);
}

/* MostAllocated: req * 100 / cap; cpu 67, memory 32; weights 1 and 2:
 * (67 + 64) / 3 = 43. */
TEST(fit_most_allocated) {
        dp_score_profile p;
        dp_score_profile_default(&p);
        p.strategy = DP_FIT_MOST;
        int64_t req[] = {2350, 5502926848}, alloc[] = {3500, 16 * GI};
        ASSERT_EQ(dp_score_fit(&p, req, alloc), 49);
        p.fit[1].weight = 2;
        ASSERT_EQ(dp_score_fit(&p, req, alloc), 43);
        int64_t over[] = {9000, 16 * GI};
        ASSERT_EQ(dp_score_fit(&p, over, alloc), 100);
}

/* RequestedToCapacityRatio with shape (0,0) (100,10): utilization 67 and 32
 * score 67 and 32; math.Round(99 / 2) = 50 (half away from zero). A score of
 * 0 is left out of the mean. */
TEST(fit_requested_to_capacity_ratio) {
        dp_score_profile p;
        dp_score_profile_default(&p);
        p.strategy = DP_FIT_RATIO;
        p.shape[0] = (dp_score_point){0, 0};
        p.shape[1] = (dp_score_point){100, 100};
        p.n_shape = 2;
        int64_t req[] = {2350, 5502926848}, alloc[] = {3500, 16 * GI};
        ASSERT_EQ(dp_score_fit(&p, req, alloc), 50);
        int64_t idle[] = {0, 8 * GI};
        ASSERT_EQ(dp_score_fit(&p, idle, alloc), 50); /* cpu 0 left out: memory's 50 alone */
        /* a falling shape (0,100) (50,20) (100,0): utilization 25 -> 60, over capacity -> f(100) = 0 */
        p.shape[0] = (dp_score_point){0, 100};
        p.shape[1] = (dp_score_point){50, 20};
        p.shape[2] = (dp_score_point){100, 0};
        p.n_shape = 3;
        int64_t q[] = {875, 20 * GI};
        ASSERT_EQ(dp_score_fit(&p, q, alloc), 60);
}

/* BalancedAllocation: 100 * (1 - |f1 - f2| / 2), truncated. */
TEST(balanced_allocation) {
        int64_t r1[] = {2250, 5502926848}, a1[] = {3500, 16 * GI};
        ASSERT_EQ(dp_score_balanced(r1, a1, 2), 83); /* the oracle's figure */
        int64_t r2[] = {500, 3 * GI}, a2[] = {4000, 16 * GI};
        ASSERT_EQ(dp_score_balanced(r2, a2, 2), 96);
        int64_t a3[] = {8000, 16 * GI};
        ASSERT_EQ(dp_score_balanced(r2, a3, 2), 93);
        int64_t r4[] = {9000, 0}, a4[] = {3500, 16 * GI}; /* a fraction above 1 counts as 1 */
        ASSERT_EQ(dp_score_balanced(r4, a4, 2), 50);
        int64_t r5[] = {1000, 0, 0}, a5[] = {4000, 0, 0}; /* one resource: std 0 */
        ASSERT_EQ(dp_score_balanced(r5, a5, 3), 100);
        /* three: fractions .5 .25 0, mean .25, std sqrt(.125/3) = .2041 -> 79 */
        int64_t r6[] = {2, 1, 0}, a6[] = {4, 4, 4};
        ASSERT_EQ(dp_score_balanced(r6, a6, 3), 79);
}

TEST(normalize_default) {
        int64_t v[] = {0, 1, 2};
        dp_score_normalize_default(v, 3, true); /* TaintToleration: fewer taints score higher */
        ASSERT_EQ(v[0], 100);
        ASSERT_EQ(v[1], 50);
        ASSERT_EQ(v[2], 0);
        int64_t w[] = {0, 50, 100, 3};
        dp_score_normalize_default(w, 4, false); /* NodeAffinity: 100 * s / max */
        ASSERT_EQ(w[1], 50);
        ASSERT_EQ(w[3], 3);
        int64_t z[] = {0, 0};
        dp_score_normalize_default(z, 2, true);
        ASSERT_EQ(z[0], 100);
        dp_score_normalize_default(z, 2, false);
        ASSERT_EQ(z[1], 100); /* already 100: unchanged */
        int64_t y[] = {7, 3};
        dp_score_normalize_default(y, 2, false);
        ASSERT_EQ(y[1], 42); /* 300 / 7 */
}

/* InterPodAffinity: 100 * (s - min) / (max - min) in float64, truncated. */
TEST(normalize_minmax) {
        int64_t v[] = {-1, 2, 3, -1};
        dp_score_normalize_minmax(v, 4);
        ASSERT_EQ(v[0], 0);
        ASSERT_EQ(v[1], 75);
        ASSERT_EQ(v[2], 100);
        int64_t e[] = {5, 5};
        dp_score_normalize_minmax(e, 2);
        ASSERT_EQ(e[0], 0);
        int64_t t[] = {0, 1, 3};
        dp_score_normalize_minmax(t, 3);
        ASSERT_EQ(t[1], 33);
}

/* PodTopologySpread: 100 * (max + min - s) / max; an ignored node 0; all 0: 100. */
TEST(normalize_spread) {
        int64_t v[] = {2, 4, 9};
        bool ign[] = {false, false, true};
        dp_score_normalize_spread(v, ign, 3);
        ASSERT_EQ(v[0], 100);
        ASSERT_EQ(v[1], 50);
        ASSERT_EQ(v[2], 0);
        int64_t z[] = {0, 0};
        dp_score_normalize_spread(z, NULL, 2);
        ASSERT_EQ(z[0], 100);
        /* scoreForCount: 2 pods, maxSkew 1, 3 domains: 2 * ln 5 = 3.22 -> 3;
         * maxSkew 3 adds 2; 0.5 rounds away from zero */
        ASSERT_EQ(dp_score_round(dp_score_spread_term(2, 1, 3)), 3);
        ASSERT_EQ(dp_score_round(dp_score_spread_term(2, 3, 3)), 5);
        ASSERT_EQ(dp_score_round(2.5), 3);
}

/* The pick: weights times the normalised scores, the first among equals. */
TEST(pick_weighted) {
        dp_score_profile p;
        dp_score_profile_default(&p);
        int64_t total[] = {150, 190, 150}, taint[] = {0, 1, 0}, aff[] = {0, 0, 10};
        dp_score_nodes s = {.n = 3, .total = total, .taint = taint, .affinity = aff};
        /* node 1: 190 + 3*0; node 0: 150 + 300; node 2: 150 + 300 + 2*100 */
        ASSERT_EQ(dp_score_pick(&p, &s), 2);
        ASSERT_EQ(total[0], 450);
        ASSERT_EQ(total[2], 650);
        int64_t t2[] = {5, 5};
        dp_score_nodes s2 = {.n = 2, .total = t2};
        ASSERT_EQ(dp_score_pick(&p, &s2), 0);
}

static dp_score_config *parse(const char *text, int *ret, char *msg, size_t size) {
        dp_score_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        *ret = dp_score_config_parse(text, strlen(text), "cfg.yaml", &c, &err);
        const char *m = *ret < 0 ? dp_error_msg(&err) : "";
        size_t n = strnlen(m, size - 1);
        memcpy(msg, m, n);
        msg[n] = '\0';
        return c;
}

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

TEST(config_most_allocated_and_weights) {
        char m[1024];
        int r;
        dp_score_config *c = parse(HEAD "profiles:\n"
                                        "- schedulerName: default-scheduler\n"
                                        "  plugins:\n"
                                        "    score:\n"
                                        "      disabled: [{name: \"*\"}]\n"
                                        "      enabled: [{name: NodeResourcesFit, weight: 5}, {name: TaintToleration}]\n"
                                        "    postFilter: {disabled: [{name: \"*\"}]}\n"
                                        "  pluginConfig:\n"
                                        "  - name: NodeResourcesFit\n"
                                        "    args:\n"
                                        "      scoringStrategy:\n"
                                        "        type: MostAllocated\n"
                                        "        resources: [{name: cpu, weight: 3}, {name: memory, weight: 1}]\n"
                                        "  - name: InterPodAffinity\n"
                                        "    args: {hardPodAffinityWeight: 7}\n"
                                        "- schedulerName: batch\n"
                                        "  bogus: 1\n",
                                   &r, m, sizeof(m));
        ASSERT_OK(r);
        ASSERT_EQ(c->n_profiles, 2);
        const dp_score_profile *p = dp_score_config_profile(c, "default-scheduler");
        ASSERT_TRUE(p != NULL);
        ASSERT_EQ(p->weight[DP_PLUGIN_FIT], 5);
        ASSERT_EQ(p->weight[DP_PLUGIN_TAINT], 1);
        ASSERT_EQ(p->weight[DP_PLUGIN_BALANCED], 0);
        ASSERT_EQ(p->weight[DP_PLUGIN_INTERPOD], 0);
        ASSERT_EQ(p->strategy, DP_FIT_MOST);
        ASSERT_EQ(p->fit[0].weight, 3);
        ASSERT_EQ(p->hard_pod_affinity_weight, 7);
        const dp_score_profile *b = dp_score_config_profile(c, "batch");
        ASSERT_EQ(b->weight[DP_PLUGIN_TAINT], 3); /* the defaults */
        /* postFilter is not modelled, bogus unknown: a warning each, naming the field */
        ASSERT_EQ(c->n_warnings, 2);
        ASSERT_CONTAINS(c->warnings[0], "profiles[0].plugins.postFilter");
        ASSERT_CONTAINS(c->warnings[1], "profiles[1].bogus: unknown field");
        dp_score_config_free(c);
}

TEST(config_ratio_shape) {
        char m[1024];
        int r;
        dp_score_config *c = parse(HEAD "profiles:\n"
                                        "- pluginConfig:\n"
                                        "  - name: NodeResourcesFit\n"
                                        "    args:\n"
                                        "      scoringStrategy:\n"
                                        "        type: RequestedToCapacityRatio\n"
                                        "        requestedToCapacityRatio:\n"
                                        "          shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]\n",
                                   &r, m, sizeof(m));
        ASSERT_OK(r);
        ASSERT_EQ(c->profiles[0].strategy, DP_FIT_RATIO);
        ASSERT_EQ(c->profiles[0].n_shape, 2);
        ASSERT_EQ(c->profiles[0].shape[0].score, 100); /* 0..10 scaled to 0..100 */
        dp_score_config_free(c);
}

TEST(config_bad_values) {
        static const struct {
                const char *text, *want;
        } cases[] = {
                {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: "
                      "{type: Fastest}\n",
                 "cfg.yaml:7: profiles[0].pluginConfig[0].args.scoringStrategy: type: must be LeastAllocated"},
                {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        resources: [{name: cpu, weight: 0}]\n",
                 "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: must be in the range 1-100"},
                {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
                      "          shape: [{utilization: 50, score: 1}, {utilization: 40, score: 2}]\n",
                 "scoringStrategy.requestedToCapacityRatio.shape[1]: utilization values must be sorted in increasing order"},
                {HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        type: RequestedToCapacityRatio\n",
                 "required for RequestedToCapacityRatio"},
                {HEAD "profiles:\n- plugins:\n    score:\n      enabled: [{name: \"*\"}]\n",
                 "\"*\" may only be disabled"},
                {HEAD "profiles:\n- schedulerName: a\n- schedulerName: a\n", "schedulerName: duplicate"},
                {"apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                 "apiVersion: must be kubescheduler.config.k8s.io/v1"},
                {HEAD "profiles: 3\n", "profiles: must be a list"},
                {HEAD "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
                 "hardPodAffinityWeight: must be in the range 0-100"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char m[1024];
                int r;
                dp_score_config *c = parse(cases[i].text, &r, m, sizeof(m));
                ASSERT_EQ(r, -EINVAL);
                ASSERT_TRUE(c == NULL);
                ASSERT_CONTAINS(m, cases[i].want);
        }
}

