/* SPDX-License-Identifier: Apache-2.0
 * test-sched.c — the scheduler: queue order, NodeResourcesFit, taints and
 * affinity, DRA claims (templates, shared, deallocation), extended resources
 * backed by DRA, gangs, two schedulers with stale views. */
#include "sched/fmt.h"
#include "sched-test-util.h"

#define CLASS                                                                                                          \
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"                                   \
        "spec:\n  extendedResourceName: example.com/dra-gpu\n"                                                         \
        "  selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]\n---\n"
#define SLICE(node, devs)                                                                                              \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " node "-gpu}\n"                        \
        "spec:\n  driver: gpu.example.com\n  nodeName: " node "\n"                                                     \
        "  pool: {name: " node ", generation: 1, resourceSliceCount: 1}\n  devices: " devs "\n---\n"
#define NODE_DRA(name) "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {zone: " name "}}\n---\n"
#define TEMPLATE                                                                                                       \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu}\n"                     \
        "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n---\n"
#define POD_TEMPLATE(name)                                                                                             \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n"                                               \
        "  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"                                      \
        "  resourceClaims: [{name: g, resourceClaimTemplateName: one-gpu}]\n---\n"

static dp_sched *new_sched(dp_store *st, dp_score_policy pol) {
        dp_sched *s = NULL;
        dp_sched_config cfg = {.policy = pol};
        ASSERT_OK(dp_sched_new(st, &cfg, &s));
        return s;
}

static int run(dp_sched *s, dp_store *st, int64_t now) {
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sched_claims_from_templates(st, &err));
        int r = dp_sched_run(s, now, &err);
        if (r < 0) DP_FAIL("run: %s", err.msg);
        return r;
}

TEST(queue_priority_then_arrival) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 1) POD_GPU("low", 1, "") POD_GPU("high", 1, "  priority: 10\n") POD_GPU("low2", 1, ""));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 1);
        ASSERT_STREQ(pod_node(st, "high"), "a");
        ASSERT_FALSE(pod_node(st, "low"));
        ASSERT_STREQ(pod_message(s, "low"), "0/1 nodes are available: 1 Insufficient example.com/gpu.");
        /* the bound pod goes: the earlier of the equal-priority pods comes next */
        ASSERT_OK(dp_sched_delete_pod(st, "default", "high"));
        ASSERT_EQ(run(s, st, 500), 0); /* still backing off */
        ASSERT_EQ(dp_sched_next_retry(s), 1000);
        ASSERT_EQ(run(s, st, 1000), 1);
        ASSERT_STREQ(pod_node(st, "low"), "a");
        ASSERT_FALSE(pod_node(st, "low2"));
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(fit_requests_must_equal_limits) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 4) "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                                  "    image: x\n    resources: {limits: {example.com/gpu: 2}, requests: "
                                  "{example.com/gpu: 1}}\n");
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 0);
        ASSERT_CONTAINS(pod_message(s, "p"), "must be equal to the limit");
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(binpack_and_spread) {
        const char *y = NODE_GPU("a", 4) NODE_GPU("b", 4) POD_GPU("p1", 1, "") POD_GPU("p2", 1, "");
        dp_store *st = dp_store_new();
        load(st, y);
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        ASSERT_STREQ(pod_node(st, "p1"), "a"); /* tie: node name */
        ASSERT_STREQ(pod_node(st, "p2"), "a"); /* binpack: the fuller node */
        dp_sched_free(s);
        dp_store_free(st);
        st = dp_store_new();
        load(st, y);
        s = new_sched(st, DP_SCORE_SPREAD);
        ASSERT_EQ(run(s, st, 0), 2);
        ASSERT_STREQ(pod_node(st, "p1"), "a");
        ASSERT_STREQ(pod_node(st, "p2"), "b");
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(taints_tolerations_selectors) {
        dp_store *st = dp_store_new();
        load(st, "apiVersion: v1\nkind: Node\nmetadata: {name: t, labels: {zone: t}}\n"
                 "spec: {taints: [{key: gpu, value: \"true\", effect: NoSchedule}]}\n"
                 "status: {allocatable: {example.com/gpu: \"1\"}}\n---\n" NODE_GPU("u", 1)
                         POD_GPU("sel", 1, "  nodeSelector: {zone: t}\n") POD_GPU(
                                 "tol", 1, "  nodeSelector: {zone: t}\n  tolerations: [{key: gpu, operator: Exists}]\n")
                                 POD_GPU("aff", 1,
                                         "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                         "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: "
                                         "[u]}]}]}}}\n"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        ASSERT_FALSE(pod_node(st, "sel"));
        ASSERT_CONTAINS(pod_message(s, "sel"), "1 node(s) didn't match Pod's node affinity/selector");
        ASSERT_CONTAINS(pod_message(s, "sel"), "1 node(s) had untolerated taint(s)");
        ASSERT_STREQ(pod_node(st, "tol"), "t");
        ASSERT_STREQ(pod_node(st, "aff"), "u");
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(dra_templates_and_deallocation) {
        dp_store *st = dp_store_new();
        load(st, CLASS TEMPLATE NODE_DRA("a") SLICE("a", "[{name: gpu-0}, {name: gpu-1}]") POD_TEMPLATE("p1")
                         POD_TEMPLATE("p2") POD_TEMPLATE("p3"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        const dp_resource_claim *c = dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p1-g", NULL).claim;
        ASSERT_TRUE(c && c->allocation);
        ASSERT_STREQ(c->allocation->results[0].device, "gpu-0");
        ASSERT_EQ(c->n_reserved_for, 1);
        ASSERT_STREQ(c->meta.owner_references[0].name, "p1");
        ASSERT_CONTAINS(pod_message(s, "p3"), "0/1 nodes are available: 1 cannot allocate all claims.");
        /* the pod and its claim go: gpu-0 frees up for p3 */
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p1"));
        ASSERT_FALSE(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p1-g", NULL).hdr);
        ASSERT_EQ(run(s, st, 1000), 1);
        ASSERT_STREQ(
                dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p3-g", NULL).claim->allocation->results[0].device,
                "gpu-0");
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(shared_claim_reserved_for_both) {
        dp_store *st = dp_store_new();
        load(st, CLASS NODE_DRA("a")
                         SLICE("a", "[{name: gpu-0}]") "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
                                                       "{name: shared}\n"
                                                       "spec: {devices: {requests: [{name: g, exactly: "
                                                       "{deviceClassName: gpu}}]}}\n---\n"
                                                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec:\n  "
                                                       "containers: [{name: c, image: x}]\n"
                                                       "  resourceClaims: [{name: g, resourceClaimName: shared}]\n---\n"
                                                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p2}\nspec:\n  "
                                                       "containers: [{name: c, image: x}]\n"
                                                       "  resourceClaims: [{name: g, resourceClaimName: shared}]\n");
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        const dp_resource_claim *c = dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "shared", NULL).claim;
        ASSERT_EQ(c->n_reserved_for, 2);
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p1"));
        c = dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "shared", NULL).claim;
        ASSERT_TRUE(c->allocation);
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p2"));
        c = dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "shared", NULL).claim;
        ASSERT_FALSE(c->allocation);
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(extended_resource_backed_by_dra) {
        /* node a serves example.com/dra-gpu through a device plugin, node b through DRA */
        dp_store *st = dp_store_new();
        load(st,
             CLASS "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {zone: a}}\n"
                   "status: {capacity: {example.com/dra-gpu: \"1\"}, allocatable: {example.com/dra-gpu: "
                   "\"1\"}}\n---\n" NODE_DRA("b")
                           SLICE("b", "[{name: gpu-0}, {name: gpu-1}]") "apiVersion: v1\nkind: Pod\nmetadata: {name: "
                                                                        "pa}\nspec:\n  nodeSelector: {zone: a}\n"
                                                                        "  containers: [{name: c, image: x, resources: "
                                                                        "{limits: {example.com/dra-gpu: 1}}}]\n---\n"
                                                                        "apiVersion: v1\nkind: Pod\nmetadata: {name: "
                                                                        "pb}\nspec:\n  nodeSelector: {zone: b}\n"
                                                                        "  containers: [{name: c, image: x, resources: "
                                                                        "{limits: {example.com/dra-gpu: 2}}}]\n");
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        dp_object pa = dp_store_get(st, DP_KIND_POD, "default", "pa", NULL);
        ASSERT_FALSE(pa.pod->extended_resource_claim_name); /* the device plugin serves it */
        dp_object pb = dp_store_get(st, DP_KIND_POD, "default", "pb", NULL);
        ASSERT_STREQ(pb.pod->extended_resource_claim_name, "pb-extended-resources");
        const dp_resource_claim *c =
                dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "pb-extended-resources", NULL).claim;
        ASSERT_TRUE(c && c->allocation);
        ASSERT_EQ(c->allocation->n_results, 2);
        ASSERT_STREQ(c->spec.requests[0].name, "container-0-request-0");
        ASSERT_OK(dp_sched_delete_pod(st, "default", "pb"));
        ASSERT_FALSE(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "pb-extended-resources", NULL).hdr);
        dp_sched_free(s);
        dp_store_free(st);
}

#define GROUP                                                                                                          \
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 4}\n---\n"
#define MEMBER(name)                                                                                                   \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: {scheduling.x-k8s.io/pod-group: g}}\nspec:\n"   \
        "  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 1}}}]\n---\n"

static int grow(dp_object o, void *userdata) {
        o.node->allocatable[0].value = dp_quantity_from_int(4, DP_QUANTITY_DECIMAL_SI);
        return 0;
}

TEST(gang_all_or_nothing) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 3) GROUP MEMBER("m0") MEMBER("m1") MEMBER("m2") MEMBER("m3"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 0);
        for (int i = 0; i < 4; i++) {
                char n[8];
                dp_fmt(n, sizeof(n), "m%d", i);
                ASSERT_FALSE(pod_node(st, n));
        }
        ASSERT_CONTAINS(pod_message(s, "m0"), "pod group g: only 3 of minMember 4 pods can be placed; none bound");
        ASSERT_OK(dp_store_update(st, DP_KIND_NODE, NULL, "a", DP_STORE_ANY_RV, grow, NULL, NULL));
        ASSERT_EQ(run(s, st, 1000), 4);
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(gang_with_dra_claims) {
        dp_store *st = dp_store_new();
        load(st,
             CLASS TEMPLATE NODE_DRA("a") SLICE(
                     "a", "[{name: gpu-0}, {name: gpu-1}]") "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: "
                                                            "PodGroup\nmetadata: {name: g}\nspec: {minMember: 3}\n---\n"
                                                            "apiVersion: v1\nkind: Pod\nmetadata: {name: m0, labels: "
                                                            "{scheduling.x-k8s.io/pod-group: g}}\nspec:\n"
                                                            "  containers: [{name: c, image: x}]\n  resourceClaims: "
                                                            "[{name: g, resourceClaimTemplateName: one-gpu}]\n---\n"
                                                            "apiVersion: v1\nkind: Pod\nmetadata: {name: m1, labels: "
                                                            "{scheduling.x-k8s.io/pod-group: g}}\nspec:\n"
                                                            "  containers: [{name: c, image: x}]\n  resourceClaims: "
                                                            "[{name: g, resourceClaimTemplateName: one-gpu}]\n---\n"
                                                            "apiVersion: v1\nkind: Pod\nmetadata: {name: m2, labels: "
                                                            "{scheduling.x-k8s.io/pod-group: g}}\nspec:\n"
                                                            "  containers: [{name: c, image: x}]\n  resourceClaims: "
                                                            "[{name: g, resourceClaimTemplateName: one-gpu}]\n");
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 0);
        /* the assumed allocations of m0 and m1 were seen by m2, and none was written */
        for (int i = 0; i < 3; i++) {
                char n[8];
                dp_fmt(n, sizeof(n), "m%d-g", i);
                ASSERT_FALSE(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", n, NULL).claim->allocation);
        }
        ASSERT_CONTAINS(pod_message(s, "m2"), "cannot allocate all claims");
        dp_sched_free(s);
        dp_store_free(st);
}

TEST(two_schedulers_stale_views_v2) {
        dp_store *st = dp_store_new();
        load(st, CLASS TEMPLATE NODE_DRA("a") SLICE("a", "[{name: gpu-0}]") POD_TEMPLATE("p1") POD_TEMPLATE("p2"));
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sched_claims_from_templates(st, &err));
        dp_sched *a = new_sched(st, DP_SCORE_BINPACK), *b = new_sched(st, DP_SCORE_BINPACK);
        dp_sched_plan *pa = NULL, *pb = NULL;
        /* both read the cluster before either writes: both see gpu-0 free */
        ASSERT_EQ(dp_sched_plan_pod(a, "default", "p1", 0, &pa, &err), 1);
        ASSERT_EQ(dp_sched_plan_pod(b, "default", "p2", 0, &pb, &err), 1);
        ASSERT_STREQ(dp_sched_plan_node(pa), "a");
        ASSERT_STREQ(dp_sched_plan_node(pb), "a");
        ASSERT_EQ(dp_sched_commit(a, pa, 0, &err), 1);
        ASSERT_EQ(dp_sched_commit(b, pb, 0, &err), 0);
        ASSERT_CONTAINS(pod_message(b, "p2"),
                        "binding rejected, will retry: device gpu.example.com/a/gpu-0 is already allocated");
        ASSERT_STREQ(pod_node(st, "p1"), "a");
        ASSERT_FALSE(pod_node(st, "p2"));
        ASSERT_FALSE(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p2-g", NULL).claim->allocation);
        /* retried with a fresh view: it does not fit */
        ASSERT_EQ(dp_sched_run(b, 1000, &err), 0);
        ASSERT_CONTAINS(pod_message(b, "p2"), "cannot allocate all claims");
        dp_sched_free(a);
        dp_sched_free(b);
        dp_store_free(st);
}

TEST(two_schedulers_same_pod) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 2) POD_GPU("p", 1, ""));
        dp_error err = DP_ERROR_INIT;
        dp_sched *a = new_sched(st, DP_SCORE_BINPACK), *b = new_sched(st, DP_SCORE_BINPACK);
        dp_sched_plan *pa = NULL, *pb = NULL;
        ASSERT_EQ(dp_sched_plan_pod(a, "default", "p", 0, &pa, &err), 1);
        ASSERT_EQ(dp_sched_plan_pod(b, "default", "p", 0, &pb, &err), 1);
        ASSERT_EQ(dp_sched_commit(a, pa, 0, &err), 1);
        ASSERT_EQ(dp_sched_commit(b, pb, 0, &err), 0); /* the pod's resourceVersion moved */
        dp_sched_free(a);
        dp_sched_free(b);
        dp_store_free(st);
}

TEST(first_available_prefers_first_choice) {
        dp_store *st = dp_store_new();
        load(st, NODE_DRA("a") NODE_DRA("b") "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: "
                                             "h100}\n"
                                             "spec: {selectors: [{cel: {expression: "
                                             "\"device.attributes['gpu.example.com'].model == 'H100'\"}}]}\n---\n"
                                             "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: "
                                             "a100}\n"
                                             "spec: {selectors: [{cel: {expression: "
                                             "\"device.attributes['gpu.example.com'].model == "
                                             "'A100'\"}}]}\n---\n" SLICE(
                                                     "a", "[{name: gpu-0, attributes: {model: {string: A100}}}]")
                                                     SLICE("b", "[{name: gpu-0, attributes: {model: {string: "
                                                                "H100}}}]") "apiVersion: resource.k8s.io/v1\nkind: "
                                                                            "ResourceClaimTemplate\nmetadata: "
                                                                            "{name: fa}\n"
                                                                            "spec: {spec: {devices: {requests: "
                                                                            "[{name: g, firstAvailable: [{name: h, "
                                                                            "deviceClassName: h100},"
                                                                            " {name: a, deviceClassName: "
                                                                            "a100}]}]}}}\n---\n"
                                                                            "apiVersion: v1\nkind: Pod\nmetadata: "
                                                                            "{name: p1}\nspec:\n  containers: "
                                                                            "[{name: c, image: x}]\n"
                                                                            "  resourceClaims: [{name: g, "
                                                                            "resourceClaimTemplateName: fa}]\n---\n"
                                                                            "apiVersion: v1\nkind: Pod\nmetadata: "
                                                                            "{name: p2}\nspec:\n  containers: "
                                                                            "[{name: c, image: x}]\n"
                                                                            "  resourceClaims: [{name: g, "
                                                                            "resourceClaimTemplateName: fa}]\n");
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 2);
        ASSERT_STREQ(pod_node(st, "p1"), "b"); /* the H100, though "a" sorts first */
        ASSERT_STREQ(
                dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p1-g", NULL).claim->allocation->results[0].request,
                "g/h");
        ASSERT_STREQ(pod_node(st, "p2"), "a");
        ASSERT_STREQ(
                dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "p2-g", NULL).claim->allocation->results[0].request,
                "g/a");
        dp_sched_free(s);
        dp_store_free(st);
}

/* The best node is searched in score order, stopping at the first where the
 * claims fit; nodes where claims of a shape did not fit are remembered until
 * a device is given back. The placements are those of trying every node. */
TEST(v2_score_order_and_release) {
        dp_store *st = dp_store_new();
        load(st, CLASS TEMPLATE NODE_DRA("a") SLICE("a", "[{name: gpu-0}, {name: gpu-1}]") NODE_DRA("b")
                         SLICE("b", "[{name: gpu-0}, {name: gpu-1}, {name: gpu-2}]") NODE_DRA("c")
                                 SLICE("c", "[{name: gpu-0}, {name: gpu-1}, {name: gpu-2}]") POD_TEMPLATE("p1")
                                         POD_TEMPLATE("p2") POD_TEMPLATE("p3") POD_TEMPLATE("p4") POD_TEMPLATE("p5")
                                                 POD_TEMPLATE("p6") POD_TEMPLATE("p7") POD_TEMPLATE("p8")
                                                         POD_TEMPLATE("p9"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 8);
        static const char *want[] = {"a", "a", "b", "b", "b", "c", "c", "c"};
        for (int i = 0; i < 8; i++) {
                char n[8];
                dp_fmt(n, sizeof(n), "p%d", i + 1);
                ASSERT_STREQ(pod_node(st, n), want[i]);
        }
        /* full everywhere: every node says why */
        ASSERT_STREQ(pod_message(s, "p9"), "0/3 nodes are available: 3 cannot allocate all claims.");
        /* kept as counts: one histogram line, no list per node */
        const dp_sched_pod_info *pi = dp_sched_pod(s, "default", "p9");
        ASSERT_EQ(pi->reasons.n, 1);
        ASSERT_EQ(pi->reasons.v[0].code, DP_VERDICT_DRA);
        ASSERT_EQ(pi->reasons.v[0].nodes, 3);
        /* per node on request, with the allocator's detail; the record stays */
        dp_sched_node_verdict *v = NULL;
        size_t nv = 0;
        char *msg = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_sched_diagnose(s, "default", "p9", &v, &nv, &msg, &err), 1);
        ASSERT_EQ(nv, 3);
        ASSERT_STREQ(v[0].node, "a");
        ASSERT_STREQ(v[2].node, "c");
        for (size_t i = 0; i < nv; i++) {
                ASSERT_EQ(v[i].code, DP_VERDICT_DRA);
                ASSERT_TRUE(v[i].detail != NULL);
        }
        dp_sched_node_verdicts_free(v, nv);
        ASSERT_EQ(pi->attempts, dp_sched_pod(s, "default", "p9")->attempts);
        ASSERT_EQ(dp_sched_pod(s, "default", "p9")->reasons.n, 1);
        ASSERT_EQ(dp_sched_diagnose(s, "default", "nope", &v, &nv, &msg, &err), -ENOENT);
        /* a device on a comes back: a fits again although it failed before */
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p2"));
        ASSERT_EQ(run(s, st, 1000), 1);
        ASSERT_STREQ(pod_node(st, "p9"), "a");
        ASSERT_EQ(dp_sched_pod(s, "default", "p9")->reasons.n, 0);
        dp_sched_free(s);
        dp_store_free(st);
}

/* A selector that fails at run time on one node makes the pod's claims
 * undecidable even when another node, earlier in every order, fits. */
TEST(selector_error_elsewhere_is_pod_level) {
        dp_store *st = dp_store_new();
        load(st, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                 "spec:\n  selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].model == 'A'\"}}]\n"
                 "---\n" TEMPLATE NODE_DRA("a") SLICE("a", "[{name: gpu-0, attributes: {model: {string: A}}}]")
                         NODE_DRA("b") SLICE("b", "[{name: gpu-0}]") POD_TEMPLATE("p1"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 0);
        ASSERT_FALSE(pod_node(st, "p1"));
        ASSERT_FALSE(strstr(pod_message(s, "p1"), "nodes are available"));
        ASSERT_EQ(dp_sched_pod(s, "default", "p1")->reasons.n, 0);
        /* diagnosing it gives the same pod-level message, no node list */
        dp_sched_node_verdict *v = NULL;
        size_t nv = 0;
        char *msg = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_sched_diagnose(s, "default", "p1", &v, &nv, &msg, &err), 0);
        ASSERT_STREQ(msg, pod_message(s, "p1"));
        free(msg);
        dp_sched_free(s);
        dp_store_free(st);
}

/* Extended resources: the fullest node that still has room, by name among
 * equals; a full node is not tried; reasons only for a pod left Pending. */
TEST(v1_score_order_many_nodes) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("n3", 2) NODE_GPU("n1", 2) NODE_GPU("n2", 3) POD_GPU("p1", 1, "") POD_GPU("p2", 2, "")
                         POD_GPU("p3", 1, "") POD_GPU("p4", 2, "") POD_GPU("p5", 1, "") POD_GPU("p6", 1, ""));
        dp_sched *s = new_sched(st, DP_SCORE_SPREAD);
        ASSERT_EQ(run(s, st, 0), 5);
        /* spread: the emptiest after the pod lands, then node name */
        ASSERT_STREQ(pod_node(st, "p1"), "n2"); /* 1/3 beats 1/2 */
        ASSERT_STREQ(pod_node(st, "p2"), "n1"); /* 2/2 ties n3, n2 has 3/3 */
        ASSERT_STREQ(pod_node(st, "p3"), "n3");
        ASSERT_STREQ(pod_node(st, "p4"), "n2"); /* n1 full, n3 has 1 left */
        ASSERT_STREQ(pod_node(st, "p5"), "n3");
        ASSERT_FALSE(pod_node(st, "p6"));
        ASSERT_STREQ(pod_message(s, "p6"), "0/3 nodes are available: 3 Insufficient example.com/gpu.");
        ASSERT_EQ(dp_sched_pod(s, "default", "p1")->reasons.n, 0);
        const dp_sched_pod_info *pi = dp_sched_pod(s, "default", "p6");
        ASSERT_EQ(pi->reasons.n, 1);
        ASSERT_EQ(pi->reasons.v[0].code, DP_VERDICT_INSUFFICIENT);
        ASSERT_STREQ(dp_diag_string(dp_sched_strings(s), pi->reasons.v[0].arg), "example.com/gpu");
        dp_sched_free(s);
        dp_store_free(st);
}

#define POD_SPEC(name, spec) "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n" spec "---\n"

/* NodeResourcesFit for cpu and memory: requests (a missing one defaults to
 * the limit) summed over containers, the larger of that and each init
 * container on top of the sidecars before it, against allocatable minus
 * what bound pods request. */
TEST(native_cpu_memory_fit) {
        dp_store *st = dp_store_new();
        load(st, "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
                 "status: {allocatable: {cpu: \"4\", memory: 8Gi}}\n---\n" NODE_GPU("b", 1)
                         POD_SPEC("p1", "  containers: [{name: c, image: x, resources: {requests: {cpu: 3}}}]\n")
                                 POD_SPEC("p2", "  containers: [{name: c, image: x, resources: {requests: {cpu: 2}}}]\n")
                                         POD_SPEC("p3", "  initContainers: [{name: i, image: x, resources: {requests: "
                                                        "{cpu: 1}}}]\n  containers: [{name: c, image: x, resources: "
                                                        "{requests: {cpu: 500m}}}]\n")
                                                 POD_SPEC("p4", "  containers: [{name: c, image: x, resources: "
                                                                "{limits: {memory: 6Gi}}}]\n")
                                                         POD_SPEC("p5", "  containers: [{name: c, image: x, "
                                                                        "resources: {requests: {memory: 4Gi}}}]\n")
                                                                 POD_SPEC("p6",
                                                                          "  initContainers:\n"
                                                                          "  - {name: side, image: x, restartPolicy: "
                                                                          "Always, resources: {requests: {cpu: 1}}}\n"
                                                                          "  - {name: i, image: x, resources: "
                                                                          "{requests: {cpu: 2}}}\n"
                                                                          "  containers: [{name: c, image: x, "
                                                                          "resources: {requests: {cpu: 1}}}]\n"));
        dp_sched *s = new_sched(st, DP_SCORE_BINPACK);
        ASSERT_EQ(run(s, st, 0), 3);
        ASSERT_STREQ(pod_node(st, "p1"), "a");
        ASSERT_FALSE(pod_node(st, "p2"));
        ASSERT_STREQ(pod_message(s, "p2"), "0/2 nodes are available: 2 Insufficient cpu.");
        ASSERT_STREQ(pod_node(st, "p3"), "a"); /* max(500m, init 1) = 1 */
        ASSERT_STREQ(pod_node(st, "p4"), "a"); /* the limit stands for the request */
        ASSERT_STREQ(pod_message(s, "p5"), "0/2 nodes are available: 2 Insufficient memory."); /* b has none */
        ASSERT_FALSE(pod_node(st, "p6"));
        /* p1 goes: 3 cpus free; p2 (2) fits, p6 (sidecar 1 + init 2 = 3) no longer does */
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p1"));
        ASSERT_EQ(run(s, st, 1000), 1);
        ASSERT_STREQ(pod_node(st, "p2"), "a");
        ASSERT_FALSE(pod_node(st, "p6"));
        ASSERT_STREQ(pod_message(s, "p6"), "0/2 nodes are available: 2 Insufficient cpu.");
        ASSERT_OK(dp_sched_delete_pod(st, "default", "p2"));
        ASSERT_EQ(run(s, st, 3000), 1);
        ASSERT_STREQ(pod_node(st, "p6"), "a");
        dp_sched_free(s);
        dp_store_free(st);
}
