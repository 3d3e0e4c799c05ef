/* SPDX-License-Identifier: Apache-2.0
 * test-sim.c — simulate as a library: determinism, V1 vs V2 placement,
 * health (scenario 3 at cluster level), MIG strategies (scenario 1),
 * time-slicing (scenario 2), one device offered by both models, the node's
 * single V1 ledger under two binders (scenario 15, V1), input errors,
 * compatibility-group partitions (dra.compatGroups), NoExecute eviction. */
#include "harness.h"
#include "sched/devnode.h"
#include "sched/sim-internal.h"

static dp_sim_input *load_str(const char *y) {
        dp_sim_input *in = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_sim_load_buffer(y, strlen(y), "test.yaml", &in, &err) < 0) DP_FAIL("load: %s", err.msg);
        return in;
}

static sim_run *run_str(dp_sim_input *in, dp_sim_model force) {
        sim_run *r = NULL;
        dp_error err = DP_ERROR_INIT;
        if (sim_run_new(in, force, &r, &err) < 0) DP_FAIL("run: %s", err.msg);
        return r;
}

#define FLEET(groups)                                                                                                  \
        "apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: t}\nspec:\n  nodeGroups:\n" groups "---\n"
#define POD(name, res, n)                                                                                              \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n"                                               \
        "  containers: [{name: c, image: x, resources: {limits: {" res ": " #n "}}}]\n---\n"

TEST(seed_is_deterministic) {
        size_t len = 0;
        const char *seed = dp_sim_builtin_scenario(&len);
        dp_sim_input *in = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sim_load_buffer(seed, len, "seed", &in, &err));
        dp_strbuf first = DP_STRBUF_INIT;
        ASSERT_OK(dp_sim_report(in, DP_SIM_OUT_JSON, &first, NULL, &err));
        for (int i = 0; i < 5; i++) {
                dp_strbuf again = DP_STRBUF_INIT;
                ASSERT_OK(dp_sim_report(in, DP_SIM_OUT_JSON, &again, NULL, &err));
                ASSERT_STREQ(dp_strbuf_str(&again), dp_strbuf_str(&first));
                dp_strbuf_done(&again);
        }
        ASSERT_CONTAINS(dp_strbuf_str(&first), "\"allV2\"");
        dp_strbuf_done(&first);
        dp_sim_input_free(in);
}

TEST(health_v1_scenario_3) {
        dp_sim_input *in = load_str(
                FLEET("  - {name: n, profile: a100-80gb-8, model: v1}\n") POD("held", "nvidia.com/gpu", 4)
                        POD("late", "nvidia.com/gpu",
                            4) "apiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n  events:\n"
                               "  - {at: 0, create: [held]}\n  - {at: 10, fail: {node: n-0, device: gpu-3}}\n"
                               "  - {at: 20, create: [late]}\n  - {at: 40, recover: {node: n-0, device: gpu-3}}\n");
        sim_run *r = run_str(in, 0);
        sim_pod *held = sim_find_pod(r, "held"), *late = sim_find_pod(r, "late");
        ASSERT_STREQ(held->v1_devices, "gpu-0,gpu-1,gpu-2,gpu-3"); /* keeps gpu-3 */
        /* 7 allocatable and 4 taken while gpu-3 is down: late fits only once it recovers */
        ASSERT_TRUE(late->admitted);
        ASSERT_EQ(late->bound_ms, 40000);
        ASSERT_STREQ(late->v1_devices, "gpu-4,gpu-5,gpu-6,gpu-7");
        dp_sim_input_free(in);
        sim_run_free(r);
        /* a 7-GPU pod on a node with gpu-3 down gets the other seven */
        in = load_str(FLEET("  - {name: n, profile: a100-80gb-8, model: v1}\n")
                              POD("late", "nvidia.com/gpu",
                                  7) "apiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n  events:\n"
                                     "  - {at: 0, fail: {node: n-0, device: gpu-3}}\n  - {at: 0, create: [late]}\n");
        r = run_str(in, 0);
        late = sim_find_pod(r, "late");
        ASSERT_TRUE(late->admitted);
        ASSERT_FALSE(strstr(late->v1_devices, "gpu-3"));
        const dp_node *n = dp_store_get(r->store, DP_KIND_NODE, NULL, "n-0", NULL).node;
        ASSERT_EQ(dp_quantity_value(&n->capacity[0].value), 8);
        ASSERT_EQ(dp_quantity_value(&n->allocatable[0].value), 7);
        sim_run_free(r);
        dp_sim_input_free(in);
}

TEST(health_v2_device_tainted) {
        dp_sim_input *in = load_str(FLEET(
                "  - {name: n, profile: a100-80gb-8, model: v2}\n") "apiVersion: resource.k8s.io/v1\nkind: "
                                                                    "DeviceClass\nmetadata: {name: gpu}\n"
                                                                    "spec: {extendedResourceName: nvidia.com/gpu, "
                                                                    "selectors: [{cel: {expression: \"device.driver == "
                                                                    "'gpu.nvidia.com'\"}}]}\n---\n" POD(
                                                                            "p", "nvidia.com/gpu",
                                                                            8) "apiVersion: "
                                                                               "devplane.io/v1alpha1\nkind: "
                                                                               "Timeline\nspec:\n  events:\n  - {at: "
                                                                               "0, fail: {node: n-0, device: "
                                                                               "gpu-0}}\n");
        sim_run *r = run_str(in, 0);
        sim_pod *p = sim_find_pod(r, "p");
        ASSERT_FALSE(p->node);
        const dp_sched_pod_info *pi = dp_sched_pod(r->sched, "default", "p");
        ASSERT_EQ(pi->reasons.n, 1);
        ASSERT_EQ(pi->reasons.v[0].code, DP_VERDICT_DRA);
        ASSERT_CONTAINS(pi->message, "cannot allocate all claims");
        sim_run_free(r);
        dp_sim_input_free(in);
}

TEST(mig_mixed_and_time_slicing) {
        dp_sim_input *in = load_str(
                FLEET("  - {name: m, profile: a100-mixed, model: v1, agent: {version: v1, flags: {migStrategy: "
                      "mixed}}}\n"
                      "  - {name: s, profile: a100-80gb-8, model: v1, labels: {shared: \"yes\"}, agent: {version: v1, "
                      "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}}}\n")
                        POD("mig", "nvidia.com/mig-1g.10gb",
                            1) "apiVersion: v1\nkind: Pod\nmetadata: {name: ts0}\nspec:\n  nodeSelector: {shared: "
                               "\"yes\"}\n"
                               "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n---\n"
                               "apiVersion: v1\nkind: Pod\nmetadata: {name: ts1}\nspec:\n  nodeSelector: {shared: "
                               "\"yes\"}\n"
                               "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n");
        sim_run *r = run_str(in, 0);
        const dp_node *m = dp_store_get(r->store, DP_KIND_NODE, NULL, "m-0", NULL).node;
        ASSERT_EQ(m->n_allocatable, 2);
        ASSERT_STREQ(m->allocatable[0].name, "nvidia.com/gpu");
        ASSERT_EQ(dp_quantity_value(&m->allocatable[0].value), 4);
        ASSERT_STREQ(m->allocatable[1].name, "nvidia.com/mig-1g.10gb");
        ASSERT_EQ(dp_quantity_value(&m->allocatable[1].value), 28);
        ASSERT_STREQ(sim_find_pod(r, "mig")->v1_devices, "gpu-0-mig-1g10gb-0");
        const dp_node *s = dp_store_get(r->store, DP_KIND_NODE, NULL, "s-0", NULL).node;
        ASSERT_EQ(dp_quantity_value(&s->allocatable[0].value), 32);
        ASSERT_STREQ(sim_find_pod(r, "ts0")->v1_devices, "gpu-0:replica-0");
        ASSERT_STREQ(sim_find_pod(r, "ts1")->v1_devices, "gpu-1:replica-0"); /* distributed policy */
        dp_strbuf out = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sim_explain(in, "ts0", &out, &err));
        ASSERT_CONTAINS(dp_strbuf_str(&out), "Node s-0");
        dp_strbuf_done(&out);
        sim_run_free(r);
        dp_sim_input_free(in);
}

TEST(v1_vs_v2_same_workload) {
        dp_sim_input *in = load_str(FLEET(
                "  - {name: n, profile: a100-80gb-8, count: 2}\n") "apiVersion: resource.k8s.io/v1\nkind: "
                                                                   "DeviceClass\nmetadata: {name: gpu}\n"
                                                                   "spec: {extendedResourceName: nvidia.com/gpu, "
                                                                   "selectors: [{cel: {expression: \"device.driver == "
                                                                   "'gpu.nvidia.com'\"}}]}\n---\n" POD(
                                                                           "a", "nvidia.com/gpu", 6)
                                                                           POD("b", "nvidia.com/gpu", 6));
        sim_run *v1 = run_str(in, DP_SIM_MODEL_V1), *v2 = run_str(in, DP_SIM_MODEL_V2);
        ASSERT_TRUE(sim_find_pod(v1, "a")->admitted);
        ASSERT_TRUE(sim_find_pod(v1, "b")->admitted);
        ASSERT_STREQ(sim_find_pod(v1, "a")->node, "n-0");
        ASSERT_STREQ(sim_find_pod(v1, "b")->node, "n-1");
        ASSERT_EQ(strlen(sim_find_pod(v1, "a")->v1_devices) > 0, 1);
        /* under V2 the same pods get DRA devices through the class's extendedResourceName */
        _cleanup_free_ char *d = sim_pod_v2_devices(v2, sim_find_pod(v2, "a"));
        ASSERT_STREQ(d, "gpu-0,gpu-1,gpu-2,gpu-3,gpu-4,gpu-5");
        ASSERT_STREQ(sim_find_pod(v2, "b")->node, "n-1");
        sim_run_free(v1);
        sim_run_free(v2);
        dp_sim_input_free(in);
}

TEST(both_models_never_share_a_device) {
        dp_sim_input *in = load_str(FLEET(
                "  - {name: n, profile: a100-80gb-8, model: both}\n") "apiVersion: resource.k8s.io/v1\nkind: "
                                                                      "DeviceClass\nmetadata: {name: gpu}\n"
                                                                      "spec: {selectors: [{cel: {expression: "
                                                                      "\"device.driver == 'gpu.nvidia.com'\"}}]}\n---\n"
                                                                      "apiVersion: resource.k8s.io/v1\nkind: "
                                                                      "ResourceClaimTemplate\nmetadata: {name: four}\n"
                                                                      "spec: {spec: {devices: {requests: [{name: g, "
                                                                      "exactly: {deviceClassName: gpu, count: "
                                                                      "4}}]}}}\n---\n"
                                                                      "apiVersion: v1\nkind: Pod\nmetadata: {name: "
                                                                      "dra}\nspec:\n  containers: [{name: c, image: "
                                                                      "x}]\n"
                                                                      "  resourceClaims: [{name: g, "
                                                                      "resourceClaimTemplateName: four}]\n---\n" POD(
                                                                              "v1a", "nvidia.com/gpu", 4)
                                                                              POD("v1b", "nvidia.com/gpu", 1));
        sim_run *r = run_str(in, 0);
        sim_pod *a = sim_find_pod(r, "v1a"), *b = sim_find_pod(r, "v1b");
        _cleanup_free_ char *d = sim_pod_v2_devices(r, sim_find_pod(r, "dra"));
        ASSERT_STREQ(d, "gpu-0,gpu-1,gpu-2,gpu-3");
        ASSERT_TRUE(a->admitted);
        ASSERT_STREQ(a->v1_devices, "gpu-4,gpu-5,gpu-6,gpu-7");
        /* nothing left: 4 via DRA, 4 via the plugin; the node's allocatable said so
         * before v1b's cycle, so it stays Pending rather than waiting on the node */
        ASSERT_FALSE(b->admitted);
        ASSERT_FALSE(b->node);
        const dp_node *node = dp_store_get(r->store, DP_KIND_NODE, NULL, "n-0", NULL).node;
        ASSERT_EQ(dp_quantity_value(&node->allocatable[0].value), 4);
        sim_run_free(r);
        dp_sim_input_free(in);
}

TEST(v1_single_ledger_scenario_15) {
        /* two schedulers bound two pods to one node for its last GPU: the
         * node's device manager gives it to the first; the other waits */
        dp_devnode *n = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_devnode_new("a100-80gb-8", NULL, 0, "n", NULL, 0, NULL, &n, &err));
        dp_strbuf ids = DP_STRBUF_INIT;
        ASSERT_OK(dp_devnode_v1_allocate(n, "nvidia.com/gpu", 7, "default/a/c", &ids, &err));
        ASSERT_OK(dp_devnode_v1_allocate(n, "nvidia.com/gpu", 1, "default/b/c", &ids, &err));
        ASSERT_EQ(dp_devnode_v1_allocate(n, "nvidia.com/gpu", 1, "default/c/c", &ids, &err), -ENOSPC);
        ASSERT_CONTAINS(err.msg, "1 requested, 0 healthy and unallocated");
        dp_devnode_v1_release(n, "default/b/");
        ASSERT_OK(dp_devnode_v1_allocate(n, "nvidia.com/gpu", 1, "default/c/c", &ids, &err));
        dp_strbuf_done(&ids);
        dp_devnode_free(n);
}

static void expect_error(const char *y, const char *msg) {
        dp_sim_input *in = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_sim_load_buffer(y, strlen(y), "bad.yaml", &in, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, msg);
}

TEST(input_errors) {
        expect_error(FLEET("  - {name: n, profile: x, count: -1}\n"),
                     "bad.yaml: Fleet t: spec.nodeGroups[0].count: must be from 0 to 5000");
        expect_error(FLEET("  - {name: n, profile: x, colour: red}\n"), "spec.nodeGroups[0]: unknown field \"colour\"");
        expect_error(FLEET("  - {name: n, profile: x, model: v3}\n"),
                     "spec.nodeGroups[0].model: must be v1, v2 or both");
        expect_error(FLEET("  - {name: N_1, profile: x}\n"), "spec.nodeGroups[0].name");
        expect_error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n",
                     "no nodes in the input");
        expect_error(FLEET("  - {name: n, profile: x}\n") "apiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n"
                                                          "  events: [{at: 5x, create: [p]}]\n",
                     "spec.events[0].at: must be seconds");
        expect_error(FLEET("  - {name: n, profile: x}\n") "apiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n"
                                                          "  events: [{at: 5, create: [p], delete: [p]}]\n",
                     "must have exactly one of create, delete, fail, recover");
        /* a profile file needs a Fleet read from a file (its directory); buffers read no files */
        expect_error(FLEET("  - {name: n, profile: profiles/gpu.yaml}\n"),
                     "bad.yaml: Fleet t: spec.nodeGroups[0].profile: a profile file can be named only in a Fleet "
                     "read from a file (line ");
        /* found while running: an unknown profile, an unknown pod in the timeline */
        dp_sim_input *in = load_str(FLEET("  - {name: n, profile: no-such-profile}\n"));
        sim_run *r = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_TRUE(sim_run_new(in, 0, &r, &err) < 0);
        ASSERT_CONTAINS(err.msg, "nodeGroup n");
        dp_sim_input_free(in);
        in = load_str(
                FLEET("  - {name: n, profile: a100-80gb-8}\n") "apiVersion: devplane.io/v1alpha1\nkind: Timeline\n"
                                                               "spec: {events: [{at: 1, delete: [ghost]}]}\n");
        ASSERT_TRUE(sim_run_new(in, 0, &r, &err) < 0);
        ASSERT_CONTAINS(err.msg, "delete ghost: no such Pod");
        dp_sim_input_free(in);
}

#define MIG_V2                                                                                                         \
        FLEET("  - {name: m, profile: a100-mixed, model: v2}\n")                                                       \
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: mig-1g}\nspec:\n  selectors:\n"           \
        "  - cel: {expression: \"device.attributes['gpu.nvidia.com'].type == 'mig' && "                                \
        "device.attributes['nvidia.com'].migProfile == '1g.10gb' && device.attributes['nvidia.com'].healthy\"}\n---\n"

TEST(selectors_health_scenario_8) {
        const char *y =
                MIG_V2 "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one}\n"
                       "spec: {spec: {devices: {requests: [{name: s, exactly: {deviceClassName: mig-1g}}]}}}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: x}]\n"
                       "  resourceClaims: [{name: s, resourceClaimTemplateName: one}]\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers: [{name: c, image: x}]\n"
                       "  resourceClaims: [{name: s, resourceClaimTemplateName: one}]\n---\n"
                       "apiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n  events:\n"
                       "  - {at: 0, create: [a]}\n  - {at: 5, fail: {node: m-0, device: gpu-0-mig-1g.10gb-1}}\n"
                       "  - {at: 10, create: [b]}\n";
        dp_sim_input *in = load_str(y);
        char *first = NULL;
        for (int i = 0; i < 100; i++) {
                sim_run *r = run_str(in, 0);
                char *a = sim_pod_v2_devices(r, sim_find_pod(r, "a")), *b = sim_pod_v2_devices(r, sim_find_pod(r, "b"));
                char *both = dp_asprintf("%s|%s", a, b);
                free(a);
                free(b);
                if (!first)
                        first = both;
                else {
                        ASSERT_STREQ(both, first);
                        free(both);
                }
                sim_run_free(r);
        }
        /* the unhealthy slice (instance 1) is skipped: b gets instance 2 */
        ASSERT_STREQ(first, "gpu-0-mig-1g10gb-0|gpu-0-mig-1g10gb-2");
        free(first);
        dp_sim_input_free(in);
}

TEST(match_attribute_never_split_scenario_9) {
        const char *y =
                MIG_V2 "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: three}\n"
                       "spec: {spec: {devices: {requests: [{name: s, exactly: {deviceClassName: mig-1g, count: 3}}],\n"
                       "  constraints: [{requests: [s], matchAttribute: gpu.nvidia.com/parentUUID}]}}}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: x}]\n"
                       "  resourceClaims: [{name: s, resourceClaimTemplateName: three}]\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers: [{name: c, image: x}]\n"
                       "  resourceClaims: [{name: s, resourceClaimTemplateName: three}]\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec:\n  containers: [{name: c, image: x}]\n"
                       "  resourceClaims: [{name: s, resourceClaimTemplateName: three}]\n";
        dp_sim_input *in = load_str(y);
        sim_run *r = run_str(in, 0);
        const char *want[] = {"gpu-0-mig-1g10gb-0,gpu-0-mig-1g10gb-1,gpu-0-mig-1g10gb-2",
                              "gpu-0-mig-1g10gb-3,gpu-0-mig-1g10gb-4,gpu-0-mig-1g10gb-5",
                              "gpu-1-mig-1g10gb-0,gpu-1-mig-1g10gb-1,gpu-1-mig-1g10gb-2"};
        const char *pods[] = {"a", "b", "c"};
        for (int i = 0; i < 3; i++) { /* c does not take gpu-0's last slice and two of gpu-1 */
                _cleanup_free_ char *d = sim_pod_v2_devices(r, sim_find_pod(r, pods[i]));
                ASSERT_STREQ(d, want[i]);
        }
        sim_run_free(r);
        dp_sim_input_free(in);
}

TEST(time_slicing_fail_requests_greater_than_one_scenario_2) {
        dp_sim_input *in = load_str(
                FLEET("  - {name: s, profile: a100-80gb-8, model: v1, agent: {version: v1, sharing: {timeSlicing: "
                      "{failRequestsGreaterThanOne: true, resources: [{name: nvidia.com/gpu, replicas: 4}]}}}}\n")
                        POD("two", "nvidia.com/gpu", 2) POD("one", "nvidia.com/gpu", 1));
        sim_run *r = run_str(in, 0);
        sim_pod *two = sim_find_pod(r, "two"), *one = sim_find_pod(r, "one");
        ASSERT_FALSE(two->admitted); /* bound (32 advertised), refused by Allocate: it waits on the node */
        ASSERT_STREQ(two->node, "s-0");
        ASSERT_CONTAINS(two->wait_msg, "device plugin allocation failed on s-0");
        ASSERT_TRUE(one->admitted);
        dp_strbuf out = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sim_explain(in, "two", &out, &err));
        ASSERT_CONTAINS(dp_strbuf_str(&out), "waits on that node");
        dp_strbuf_done(&out);
        sim_run_free(r);
        dp_sim_input_free(in);
}

/* dra.compatGroups: the node's driver publishes MIG-mode and vGPU-mode
 * partitions; a failed GPU's partitions are tainted like the GPU, and its
 * units are where the report counts them. */
TEST(compat_groups_follow_health) {
        dp_sim_input *in = load_str(FLEET("  - {name: n, profile: example-gpu, model: v2, dra: {compatGroups: true, "
                                          "partitions: 2}}\n") "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
                                                               "metadata: {name: mig}\nspec: {selectors: [{cel: "
                                                               "{expression: \"device.attributes['gpu.example.com']."
                                                               "mode == 'mig'\"}}]}\n---\n"
                                                               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                                               "metadata: {name: c}\nspec: {devices: {requests: "
                                                               "[{name: r, exactly: {deviceClassName: mig}}]}}\n---\n"
                                                               "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                                               "  containers: [{name: c, image: x, resources: {claims: "
                                                               "[{name: r}]}}]\n"
                                                               "  resourceClaims: [{name: r, resourceClaimName: c}]\n"
                                                               "---\napiVersion: devplane.io/v1alpha1\nkind: Timeline\n"
                                                               "spec:\n  events:\n  - {at: 0, fail: {node: n-0, "
                                                               "device: gpu-0}}\n");
        ASSERT_TRUE(in->groups[0].dra_compat_groups);
        sim_run *r = run_str(in, 0);
        sim_pod *p = sim_find_pod(r, "p");
        ASSERT_TRUE(p->admitted);
        char *v2 = sim_pod_v2_devices(r, p);
        ASSERT_STREQ(v2, "gpu-1-mig-0"); /* gpu-0's partitions carry the unhealthy taint */
        free(v2);
        sim_node *sn = sim_find_node(r, "n-0");
        ASSERT_EQ(sim_node_unit_of_v2(sn, "gpu-1-mig-0"), dp_devnode_unit_find(sn->dev, "gpu-1"));
        ASSERT_EQ(sim_node_unit_of_v2(sn, "gpu-3"), dp_devnode_unit_find(sn->dev, "gpu-3"));
        ASSERT_EQ(sim_node_unit_of_v2(sn, "gpu-3-partition-0"), -ENOENT);
        ASSERT_TRUE(sim_node_inventory(sn) == sn->compat_inv);
        sim_run_free(r);
        dp_sim_input_free(in);
}

/* A NoExecute failure evicts the pod whose claim does not tolerate it; the
 * named claim is deallocated; the run is the same on every repetition. */
TEST(no_execute_failure_evicts_and_deallocates) {
        const char *y =
                FLEET("  - {name: n, profile: example-gpu, model: v2}\n") "apiVersion: resource.k8s.io/v1\n"
                                                                          "kind: DeviceClass\nmetadata: {name: "
                                                                          "g}\nspec: {selectors: [{cel: "
                                                                          "{expression: \"true\"}}]}\n---\n"
                                                                          "apiVersion: resource.k8s.io/v1\nkind: "
                                                                          "ResourceClaim\nmetadata: {name: c}\n"
                                                                          "spec: {devices: {requests: [{name: "
                                                                          "r, exactly: {deviceClassName: "
                                                                          "g}}]}}\n---\n"
                                                                          "apiVersion: v1\nkind: Pod\nmetadata: "
                                                                          "{name: p}\nspec:\n  containers: "
                                                                          "[{name: c, image: x, resources: "
                                                                          "{claims: [{name: r}]}}]\n"
                                                                          "  resourceClaims: [{name: r, "
                                                                          "resourceClaimName: c}]\n---\n"
                                                                          "apiVersion: devplane.io/v1alpha1\n"
                                                                          "kind: Timeline\nspec:\n  events:\n"
                                                                          "  - {at: 30s, fail: {node: n-0, "
                                                                          "device: gpu-0, effect: NoExecute}}\n";
        dp_sim_input *in = load_str(y);
        sim_run *r = run_str(in, 0);
        sim_pod *p = sim_find_pod(r, "p");
        ASSERT_TRUE(p->evicted);
        ASSERT_TRUE(p->deleted);
        ASSERT_EQ(p->deleted_ms, 30000);
        ASSERT_CONTAINS(p->evict_msg, "gpu.example.com/unhealthy:NoExecute");
        const dp_resource_claim *c = dp_store_get(r->store, DP_KIND_RESOURCE_CLAIM, "default", "c", NULL).claim;
        ASSERT_TRUE(c != NULL);
        ASSERT_TRUE(c->allocation == NULL);
        ASSERT_EQ(c->n_reserved_for, 0);
        sim_run_free(r);
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sim_report(in, DP_SIM_OUT_YAML, &a, NULL, &err));
        ASSERT_OK(dp_sim_report(in, DP_SIM_OUT_YAML, &b, NULL, &err));
        ASSERT_STREQ(dp_strbuf_str(&a), dp_strbuf_str(&b));
        ASSERT_CONTAINS(dp_strbuf_str(&a), "state: Evicted");
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_sim_input_free(in);
}
