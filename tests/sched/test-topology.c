/* SPDX-License-Identifier: Apache-2.0
 * test-topology.c — InterPodAffinity and PodTopologySpread: the Pod fields
 * decoded (defaults, the API server's rules), the plugins' PreFilter, Filter
 * and AddPod/RemovePod on a store, and the scheduler placing with them
 * (binpack scoring, so only the filters can spread pods). */
#include "sched/topology.h"
#include "sched-test-util.h"

#define NODE(name, zone)                                                                                               \
        "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name                \
        ", zone: " zone "}}\nstatus: {allocatable: {cpu: \"8\", example.com/gpu: \"8\"}}\n---\n"
#define POD(name, labels, on, spec)                                                                                    \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: " labels "}\nspec:\n" on spec                   \
        "  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 1}}}]\n---\n"
#define ANTI(sel, key)                                                                                                 \
        "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: " sel         \
        ", topologyKey: " key "}]}}\n"
#define AFF(sel, key)                                                                                                  \
        "  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: " sel            \
        ", topologyKey: " key "}]}}\n"
#define SPREAD(key, sel, extra)                                                                                        \
        "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: " key ", whenUnsatisfiable: DoNotSchedule, "          \
        "labelSelector: " sel extra "}]\n"
#define ON(node) "  nodeName: " node "\n"

static dp_sched *binpack(dp_store *st) {
        dp_sched *s = NULL;
        dp_sched_config cfg = {.policy = DP_SCORE_BINPACK};
        ASSERT_OK(dp_sched_new(st, &cfg, &s));
        return s;
}

static int run(dp_sched *s, int64_t now) {
        dp_error err = DP_ERROR_INIT;
        int r = dp_sched_run(s, now, &err);
        if (r < 0) DP_FAIL("run: %s", err.msg);
        return r;
}

static const dp_pod *decode_pod(dp_object_list *l, const char *yaml, dp_error *err) {
        if (dp_model_decode_buffer(yaml, strlen(yaml), "pod.yaml", l, err) < 0) return NULL;
        return l->n ? l->items[l->n - 1].pod : NULL;
}

/* ---- decoding ---- */

TEST(decode_fields_and_defaults) {
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const dp_pod *p = decode_pod(
                l,
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: a}}\nspec:\n"
                "  containers: [{name: c, image: x}]\n"
                "  affinity:\n"
                "    podAffinity:\n"
                "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                "      - {labelSelector: {matchExpressions: [{key: app, operator: In, values: [db, cache]}]},\n"
                "         topologyKey: zone, namespaces: [x, y], matchLabelKeys: [tier]}\n"
                "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                "      - {weight: 30, podAffinityTerm: {topologyKey: zone, namespaceSelector: {}}}\n"
                "    podAntiAffinity:\n"
                "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                "      - {labelSelector: {matchLabels: {app: a}}, topologyKey: kubernetes.io/hostname,\n"
                "         namespaceSelector: {matchLabels: {team: a}}, mismatchLabelKeys: [tier]}\n"
                "  topologySpreadConstraints:\n"
                "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n"
                "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, nodeAffinityPolicy: Ignore,\n"
                "     nodeTaintsPolicy: Honor, labelSelector: {matchLabels: {app: a}}, matchLabelKeys: [h]}\n"
                "  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, minDomains: 3}\n",
                &err);
        if (!p) DP_FAIL("decode: %s", err.msg);
        ASSERT_EQ(p->n_pod_affinity, 1);
        ASSERT_EQ(p->pod_affinity[0].label_selector->n_match_expressions, 1);
        ASSERT_EQ(p->pod_affinity[0].label_selector->match_expressions[0].n_values, 2);
        ASSERT_EQ(p->pod_affinity[0].n_namespaces, 2);
        ASSERT_TRUE(!p->pod_affinity[0].namespace_selector);
        ASSERT_STREQ(p->pod_affinity[0].match_label_keys[0], "tier");
        ASSERT_EQ(p->n_preferred_pod_affinity, 1);
        ASSERT_EQ(p->preferred_pod_affinity[0].weight, 30);
        ASSERT_TRUE(!p->preferred_pod_affinity[0].label_selector);      /* matches nothing */
        ASSERT_TRUE(p->preferred_pod_affinity[0].namespace_selector); /* {}: every namespace */
        ASSERT_EQ(p->n_pod_anti_affinity, 1);
        ASSERT_STREQ(p->pod_anti_affinity[0].namespace_selector->match_labels[0].value, "a");
        ASSERT_EQ(p->n_spread, 3);
        ASSERT_EQ(p->spread[0].max_skew, 2);
        ASSERT_EQ(p->spread[0].min_domains, 1);
        ASSERT_FALSE(p->spread[0].schedule_anyway);
        ASSERT_FALSE(p->spread[0].node_affinity_ignore);
        ASSERT_FALSE(p->spread[0].node_taints_honor);
        ASSERT_TRUE(p->spread[1].schedule_anyway && p->spread[1].node_affinity_ignore && p->spread[1].node_taints_honor);
        ASSERT_EQ(p->spread[2].min_domains, 3);
        ASSERT_TRUE(!p->spread[2].label_selector);
}

TEST(decode_errors) {
        static const struct {
                const char *spec, *msg;
        } bad[] = {
                {"  topologySpreadConstraints: [{topologyKey: z, whenUnsatisfiable: DoNotSchedule}]\n",
                 "spec.topologySpreadConstraints[0]: maxSkew: must be greater than zero"},
                {"  topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]\n", "topologyKey: required"},
                {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: Maybe}]\n",
                 "whenUnsatisfiable: unsupported value \"Maybe\""},
                {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: ScheduleAnyway, "
                 "minDomains: 2}]\n",
                 "minDomains: may only be set when whenUnsatisfiable is DoNotSchedule"},
                {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, "
                 "nodeTaintsPolicy: Always}]\n",
                 "nodeTaintsPolicy: unsupported value \"Always\" (Honor, Ignore)"},
                {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule},\n"
                 "    {maxSkew: 2, topologyKey: z, whenUnsatisfiable: DoNotSchedule}]\n",
                 "spec.topologySpreadConstraints[1]: duplicate {topologyKey: z, whenUnsatisfiable: DoNotSchedule}"},
                {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, "
                 "matchLabelKeys: [h]}]\n",
                 "matchLabelKeys: may not be set when labelSelector is not set"},
                {"  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}\n",
                 "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]: topologyKey: required"},
                {"  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, "
                 "labelSelector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}}]}}\n",
                 "operator: unsupported operator \"Gt\""},
                {"  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, "
                 "labelSelector: {matchExpressions: [{key: a, operator: In}]}}]}}\n",
                 "values: must be specified when `operator` is 'In' or 'NotIn'"},
                {"  affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, "
                 "podAffinityTerm: {topologyKey: z}}]}}\n",
                 "weight: must be in the range 1-100"},
                {"  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, "
                 "matchLabelKeys: [v], mismatchLabelKeys: [v]}]}}\n",
                 "\"v\" is also in mismatchLabelKeys"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
                dp_error err = DP_ERROR_INIT;
                char yaml[1024];
                snprintf(yaml, sizeof(yaml),
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n%s",
                         bad[i].spec);
                ASSERT_TRUE(!decode_pod(l, yaml, &err));
                ASSERT_EQ(l->n, 0);
                ASSERT_CONTAINS(err.msg, bad[i].msg);
        }
}

/* ---- the scheduler with the two plugins ---- */

TEST(anti_affinity_one_per_host) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "a") NODE("n3", "b")
                         POD("web-0", "{app: web}", "", ANTI("{matchLabels: {app: web}}", "kubernetes.io/hostname"))
                                 POD("web-1", "{app: web}", "", ANTI("{matchLabels: {app: web}}", "kubernetes.io/hostname"))
                                         POD("web-2", "{app: web}", "",
                                             ANTI("{matchLabels: {app: web}}", "kubernetes.io/hostname"))
                                                 POD("web-3", "{app: web}", "",
                                                     ANTI("{matchLabels: {app: web}}", "kubernetes.io/hostname")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 3);
        ASSERT_STREQ(pod_node(st, "web-0"), "n1");
        ASSERT_STREQ(pod_node(st, "web-1"), "n2");
        ASSERT_STREQ(pod_node(st, "web-2"), "n3");
        ASSERT_TRUE(!pod_node(st, "web-3"));
        ASSERT_STREQ(pod_message(s, "web-3"), "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
        /* one of them goes: the index forgets it, and web-3 takes its node */
        ASSERT_OK(dp_sched_delete_pod(st, "default", "web-1"));
        ASSERT_EQ(run(s, 20000), 1);
        ASSERT_STREQ(pod_node(st, "web-3"), "n2");
}

TEST(existing_pods_anti_affinity_and_zone_terms) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "a") NODE("n3", "b")
                         POD("guard", "{app: guard}", ON("n1"), ANTI("{matchLabels: {app: web}}", "zone"))
                                 POD("web", "{app: web}", "", "") POD("near-guard", "{}", "",
                                                                       AFF("{matchLabels: {app: guard}}", "zone"))
                                         POD("no-key", "{}", "", AFF("{matchLabels: {app: guard}}", "rack")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 2);
        ASSERT_STREQ(pod_node(st, "web"), "n3"); /* zone a holds the guard's anti-affinity */
        ASSERT_STREQ(pod_node(st, "near-guard"), "n1");
        ASSERT_STREQ(pod_message(s, "no-key"), "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
}

TEST(self_affinity_first_pod) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "b") NODE("n3", "b")
                         POD("g-0", "{app: g}", "", AFF("{matchLabels: {app: g}}", "zone"))
                                 POD("g-1", "{app: g}", "", "  nodeSelector: {zone: b}\n" AFF("{matchLabels: {app: g}}", "zone"))
                                         POD("lonely", "{app: h}", "", AFF("{matchLabels: {app: x}}", "zone")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 1);
        ASSERT_STREQ(pod_node(st, "g-0"), "n1");
        /* g-1 must join g-0's zone a, which its nodeSelector excludes */
        ASSERT_STREQ(pod_message(s, "g-1"),
                     "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't "
                     "match pod affinity rules.");
        ASSERT_STREQ(pod_message(s, "lonely"), "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
}

TEST(spread_max_skew_beats_binpack) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "b") "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"
                                                 "status: {allocatable: {cpu: \"8\", example.com/gpu: \"8\"}}\n---\n"
                         POD("s-0", "{app: s}", "", SPREAD("zone", "{matchLabels: {app: s}}", ""))
                                 POD("s-1", "{app: s}", "", SPREAD("zone", "{matchLabels: {app: s}}", ""))
                                         POD("s-2", "{app: s}", "", SPREAD("zone", "{matchLabels: {app: s}}", ""))
                                                 POD("s-3", "{app: s}", "", SPREAD("zone", "{matchLabels: {app: s}}", "")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 4);
        int on_a = 0;
        for (int i = 0; i < 4; i++) {
                char nm[8];
                snprintf(nm, sizeof(nm), "s-%d", i);
                on_a += streq(pod_node(st, nm), "n1");
                ASSERT_FALSE(streq(pod_node(st, nm), "n3")); /* no zone label */
        }
        ASSERT_EQ(on_a, 2);
}

TEST(spread_min_domains_and_policies) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "b")
                         POD("m-0", "{app: m}", "", SPREAD("zone", "{matchLabels: {app: m}}", ", minDomains: 3"))
                                 POD("m-1", "{app: m}", "", SPREAD("zone", "{matchLabels: {app: m}}", ", minDomains: 3"))
                                         POD("m-2", "{app: m}", "", SPREAD("zone", "{matchLabels: {app: m}}", ", minDomains: 3"))
                                                 POD("i-0", "{app: i}", "",
                                                     "  nodeSelector: {zone: a}\n" SPREAD("zone", "{matchLabels: {app: i}}",
                                                                                          ", nodeAffinityPolicy: Ignore"))
                                                         POD("i-1", "{app: i}", "",
                                                             "  nodeSelector: {zone: a}\n"
                                                             SPREAD("zone", "{matchLabels: {app: i}}",
                                                                    ", nodeAffinityPolicy: Ignore"))
                                                                 POD("h-0", "{app: h}", "",
                                                                     "  nodeSelector: {zone: a}\n"
                                                                     SPREAD("zone", "{matchLabels: {app: h}}", ""))
                                                                         POD("h-1", "{app: h}", "",
                                                                             "  nodeSelector: {zone: a}\n"
                                                                             SPREAD("zone", "{matchLabels: {app: h}}", "")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        run(s, 0);
        /* 2 domains < minDomains 3: the minimum is 0, one pod per zone */
        ASSERT_TRUE(pod_node(st, "m-0") && pod_node(st, "m-1"));
        ASSERT_STREQ(pod_message(s, "m-2"),
                     "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints.");
        /* Ignore: zone b counts with its 0 pods; Honor (default): only zone a counts */
        ASSERT_STREQ(pod_node(st, "i-0"), "n1");
        ASSERT_TRUE(!pod_node(st, "i-1"));
        ASSERT_STREQ(pod_node(st, "h-0"), "n1");
        ASSERT_STREQ(pod_node(st, "h-1"), "n1");
}

/* ---- PreFilter, Filter, AddPod/RemovePod directly ---- */

TEST(prefilter_filter_add_remove) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "a") NODE("n3", "b") "apiVersion: v1\nkind: Namespace\n"
                                                                 "metadata: {name: team, labels: {t: x}}\n---\n"
                         POD("db", "{app: db}", ON("n1"), "") "apiVersion: v1\nkind: Pod\n"
                                                               "metadata: {name: peer, namespace: team, labels: {app: db}}\n"
                                                               "spec:\n  nodeName: n3\n  containers: [{name: c, image: x}]\n---\n"
                                 POD("in", "{app: web, tier: fe}", "",
                                     "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [\n"
                                     "    {labelSelector: {matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname,\n"
                                     "     namespaceSelector: {matchLabels: {t: x}}}]}}\n"
                                     SPREAD("zone", "{matchLabels: {app: web}}", ", matchLabelKeys: [tier]")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        const dp_node *tab[3];
        for (int i = 0; i < 3; i++) {
                char nm[4] = {'n', (char)('1' + i), 0};
                tab[i] = dp_store_get(st, DP_KIND_NODE, "", nm, NULL).node;
        }
        const dp_pod *in = dp_store_get(st, DP_KIND_POD, "default", "in", NULL).pod;
        const dp_pod *web = dp_store_get(st, DP_KIND_POD, "default", "db", NULL).pod;
        dp_topo_state *ts = NULL;
        ASSERT_OK(dp_topo_prefilter(s, in, "default", tab, 3, 1, &ts));
        ASSERT_TRUE(ts);
        /* the namespaceSelector picks team's db on n3, not default's on n1 */
        ASSERT_EQ(dp_topo_filter(ts, 0), DP_VERDICT_FIT);
        ASSERT_EQ(dp_topo_filter(ts, 1), DP_VERDICT_FIT);
        ASSERT_EQ(dp_topo_filter(ts, 2), DP_VERDICT_POD_ANTI_AFFINITY);
        /* AddPod: a pod like "in" (same tier) on n1: zone a one ahead of b */
        ASSERT_OK(dp_topo_update_pod(ts, in, "default", 0, +1));
        ASSERT_EQ(dp_topo_filter(ts, 1), DP_VERDICT_SPREAD);
        ASSERT_OK(dp_topo_update_pod(ts, in, "default", 0, -1));
        ASSERT_EQ(dp_topo_filter(ts, 1), DP_VERDICT_FIT);
        /* a pod of another tier does not count (matchLabelKeys) */
        ASSERT_OK(dp_topo_update_pod(ts, web, "default", 0, +1));
        ASSERT_EQ(dp_topo_filter(ts, 1), DP_VERDICT_FIT);
        ts = dp_topo_state_free(ts);
        /* a pod with neither plugin's fields, and no anti-affinity against it: Skip */
        ASSERT_OK(dp_topo_prefilter(s, web, "default", tab, 3, 1, &ts));
        ASSERT_TRUE(!ts);
}

/* A Pending pod's reasons come from the shape's cached verdicts (other
 * filters) with this pod's own filters on top: one node full, two refused by
 * anti-affinity; then, after another pod binds, again from the cache. */
TEST(pending_reasons_from_the_shape_cache) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "a") NODE("n3", "b")
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  nodeName: n3\n"
                         "  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 8}}}]\n---\n"
                                 POD("db-0", "{app: db}", ON("n1"), "") POD("db-1", "{app: db}", ON("n2"), "")
                                         POD("plain", "{app: x}", "", "")
                                                 POD("away", "{app: web}", "", ANTI("{matchLabels: {app: db}}", "zone")));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 1); /* plain */
        ASSERT_STREQ(pod_message(s, "away"), "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 node(s) "
                                             "didn't match pod anti-affinity rules.");
        /* a pod added never helps a pod waiting on anti-affinity (kube-scheduler's
         * queueing hint): not tried again */
        load(st, POD("plain-2", "{app: x}", "", ""));
        ASSERT_EQ(run(s, 20000), 1);
        ASSERT_EQ(dp_sched_pod(s, "default", "away")->attempts, 1u);
        /* a pod deleted may help: tried again, the reasons again from the cache */
        ASSERT_OK(dp_store_delete(st, DP_KIND_POD, "default", "plain", DP_STORE_ANY_RV));
        ASSERT_EQ(run(s, 40000), 0);
        ASSERT_STREQ(pod_message(s, "away"), "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 node(s) "
                                             "didn't match pod anti-affinity rules.");
        ASSERT_TRUE(dp_sched_pod(s, "default", "away")->attempts >= 2);
}

/* Gang members assumed in the cycle count as bound (AddPod): three members
 * with anti-affinity to each other on hostname take three nodes, or none
 * when only two nodes are left. */
#define GANG_MEMBER(name)                                                                                              \
        POD(name, "{app: g, scheduling.x-k8s.io/pod-group: g}", "",                                                   \
            ANTI("{matchLabels: {app: g}}", "kubernetes.io/hostname"))
#define GANG "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 3}\n---\n"

TEST(gang_members_assumed_count) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "a") NODE("n3", "b") GANG GANG_MEMBER("m0") GANG_MEMBER("m1")
                         GANG_MEMBER("m2"));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 3);
        ASSERT_STREQ(pod_node(st, "m0"), "n1");
        ASSERT_STREQ(pod_node(st, "m1"), "n2");
        ASSERT_STREQ(pod_node(st, "m2"), "n3");

        _cleanup_(dp_store_freep) dp_store *st2 = dp_store_new();
        load(st2, NODE("n1", "a") NODE("n2", "a") GANG GANG_MEMBER("m0") GANG_MEMBER("m1") GANG_MEMBER("m2"));
        _cleanup_(dp_sched_freep) dp_sched *s2 = binpack(st2);
        ASSERT_EQ(run(s2, 0), 0);
        ASSERT_CONTAINS(pod_message(s2, "m0"), "pod group g: only 2 of minMember 3 pods can be placed; none bound");
}

/* The queueing hints of pods waiting on pod affinity are filed by the labels
 * their terms name: a pod bound elsewhere is matched against the waiting
 * pods it can help (one here), not against all 40, and moves that one. */
TEST(pod_bound_checks_only_the_pods_it_can_help) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "b"));
        char buf[512];
        for (int i = 0; i < 40; i++) {
                char name[16], lab[32], sel[64];
                snprintf(name, sizeof(name), "w%d", i);
                snprintf(lab, sizeof(lab), "{app: w%d}", i);
                snprintf(sel, sizeof(sel), "{matchLabels: {app: d%d}}", i);
                snprintf(buf, sizeof(buf), POD("%s", "%s", "", AFF("%s", "zone")), name, lab, sel);
                load(st, buf);
        }
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        ASSERT_EQ(run(s, 0), 0);
        ASSERT_CONTAINS(pod_message(s, "w7"), "didn't match pod affinity rules");
        load(st, POD("d7", "{app: d7}", ON("n2"), ""));
        uint64_t before = s->hint_checks;
        ASSERT_EQ(run(s, 20000), 1);
        ASSERT_EQ(s->hint_checks - before, 1u);
        ASSERT_STREQ(pod_node(st, "w7"), "n2");
        ASSERT_EQ(dp_sched_pod(s, "default", "w8")->attempts, 1u);
        /* a pod bound that none of them names looks at none */
        before = s->hint_checks;
        load(st, POD("other", "{app: other}", ON("n1"), ""));
        ASSERT_EQ(run(s, 40000), 0);
        ASSERT_EQ(s->hint_checks - before, 0u);
        /* a waiting pod written again is filed under its new terms */
        ASSERT_OK(dp_store_delete(st, DP_KIND_POD, "default", "w9", DP_STORE_ANY_RV));
        load(st, POD("w9", "{app: w9}", "", AFF("{matchLabels: {app: e9}}", "zone")));
        ASSERT_EQ(run(s, 60000), 0);
        load(st, POD("d9", "{app: d9}", ON("n1"), ""));
        ASSERT_EQ(run(s, 80000), 0);
        ASSERT_TRUE(!pod_node(st, "w9"));
        load(st, POD("e9", "{app: e9}", ON("n1"), ""));
        ASSERT_EQ(run(s, 100000), 1);
        ASSERT_STREQ(pod_node(st, "w9"), "n1");
}

/* A pod with metadata.deletionTimestamp (terminating), as kube-scheduler
 * 1.35 treats it (checked against the oracle): bound, it still holds its
 * resources and its labels still count for anti-affinity, but
 * PodTopologySpread does not count it; unbound, it is never scheduled. */
#define TERMINATING(name, labels, on, gpus)                                                                            \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: " labels                                        \
        ", deletionTimestamp: \"2026-01-01T00:00:00Z\", finalizers: [x/y]}\nspec:\n" on                                \
        "  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: " gpus "}}}]\n---\n"

TEST(terminating_pods) {
        _cleanup_(dp_store_freep) dp_store *st = dp_store_new();
        load(st, NODE("n1", "a") NODE("n2", "b") NODE("n3", "b") TERMINATING(
                         "old", "{app: s}", ON("n2"), "8") TERMINATING("old2", "{app: t}", ON("n3"), "0")
                         POD("s1", "{app: s}", "  nodeSelector: {zone: b}\n",
                             "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
                             "DoNotSchedule, nodeAffinityPolicy: Ignore, labelSelector: {matchLabels: {app: s}}}]\n")
                                 POD("away", "{app: u}", "", ANTI("{matchLabels: {app: t}}", "kubernetes.io/hostname"))
                                         TERMINATING("gone", "{app: g}", "", "1"));
        _cleanup_(dp_sched_freep) dp_sched *s = binpack(st);
        run(s, 0);
        /* n2's GPUs are still the terminating pod's; the spread does not count it */
        ASSERT_STREQ(pod_node(st, "s1"), "n3");
        /* its labels still count for anti-affinity (binpack would pick n3) */
        ASSERT_STREQ(pod_node(st, "away"), "n1");
        ASSERT_TRUE(!pod_node(st, "gone"));
        ASSERT_CONTAINS(pod_message(s, "gone"), "being deleted");
        ASSERT_EQ(dp_sched_pod(s, "default", "gone")->attempts, 0u);
}
