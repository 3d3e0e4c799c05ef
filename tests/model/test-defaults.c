/* SPDX-License-Identifier: Apache-2.0
 * test-defaults.c — objects as the API server stores them
 * (model/defaults.c): allocatable from capacity, 110 pods, priority from
 * PriorityClasses, preemptionPolicy, schedulerName, requests from limits,
 * the default tolerations; and the decoded fields they rest on. */
#include "harness.h"
#include "model/model.h"

static dp_object_list *load(const char *yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(yaml, strlen(yaml), "t.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        if (dp_model_validate(l, &err) < 0) DP_FAIL("validate: %s", err.msg);
        if (dp_model_apply_defaults(l, &err) < 0) DP_FAIL("defaults: %s", err.msg);
        return l;
}

static const dp_pod *pod(const dp_object_list *l, const char *name) {
        const dp_pod *p = dp_object_list_find(l, DP_KIND_POD, NULL, name).pod;
        if (!p) DP_FAIL("no pod %s", name);
        return p;
}

static const char *quantity(const dp_named_quantity *v, size_t n, const char *name, char *buf) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].name, name)) {
                        snprintf(buf, 64, "%lld", (long long)dp_quantity_value(&v[i].value));
                        return buf;
                }
        return NULL;
}

TEST(node_allocatable_from_capacity_and_pods) {
        dp_object_list *l = load("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
                                 "status: {capacity: {cpu: '8', pods: '3', example.com/gpu: '2'}}\n---\n"
                                 "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n"
                                 "status: {capacity: {cpu: '8'}, allocatable: {cpu: '7'}}\n");
        const dp_node *a = dp_object_list_find(l, DP_KIND_NODE, NULL, "a").node;
        const dp_node *b = dp_object_list_find(l, DP_KIND_NODE, NULL, "b").node;
        char q[64];
        ASSERT_EQ(a->n_allocatable, (size_t)3);
        ASSERT_STREQ(quantity(a->allocatable, a->n_allocatable, "example.com/gpu", q), "2");
        ASSERT_STREQ(quantity(a->allocatable, a->n_allocatable, "pods", q), "3");
        ASSERT_STREQ(quantity(b->allocatable, b->n_allocatable, "cpu", q), "7");
        ASSERT_STREQ(quantity(b->allocatable, b->n_allocatable, "pods", q), "110");
        ASSERT_EQ(l->n_warnings, (size_t)1);
        ASSERT_CONTAINS(l->warnings[0], "node b has no pods in status.allocatable: 110 assumed");
        dp_object_list_free(l);
}

TEST(pod_priority_from_classes) {
        dp_object_list *l = load(
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: prod}\nvalue: 1000\n"
                "preemptionPolicy: Never\ndescription: x\n---\n"
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 10\n"
                "globalDefault: true\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: prod, containers: [{name: "
                "c}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: d}\nspec: {containers: [{name: c}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n"
                "spec: {priorityClassName: system-node-critical, containers: [{name: c}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: e}\nspec: {priority: 7, containers: [{name: c}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nspec: {priorityClassName: nope, containers: [{name: "
                "c}]}\n");
        ASSERT_EQ(pod(l, "p")->priority, 1000);
        ASSERT_STREQ(pod(l, "p")->preemption_policy, "Never");
        ASSERT_EQ(pod(l, "d")->priority, 10);
        ASSERT_STREQ(pod(l, "d")->priority_class_name, "batch");
        ASSERT_STREQ(pod(l, "d")->preemption_policy, "PreemptLowerPriority");
        ASSERT_EQ(pod(l, "s")->priority, 2000001000);
        ASSERT_EQ(pod(l, "e")->priority, 7);
        ASSERT_EQ(pod(l, "m")->priority, 0);
        ASSERT_TRUE(pod(l, "m")->has_priority);
        ASSERT_EQ(l->n_warnings, (size_t)1);
        ASSERT_CONTAINS(l->warnings[0], "pod default/m: no PriorityClass \"nope\"");
        dp_object_list_free(l);
}

TEST(pod_defaults_requests_scheduler_tolerations) {
        dp_object_list *l =
                load("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                     "spec: {containers: [{name: c, resources: {limits: {cpu: '2', memory: 1Gi},"
                     " requests: {cpu: 500m}}}]}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
                     "spec: {schedulerName: volcano, tolerations: [{operator: Exists}], containers: [{name: c}]}\n");
        const dp_pod *a = pod(l, "a"), *b = pod(l, "b");
        char q[64];
        ASSERT_STREQ(a->scheduler_name, "default-scheduler");
        ASSERT_STREQ(b->scheduler_name, "volcano");
        const dp_container *c = &a->containers[0];
        ASSERT_EQ(c->n_requests, (size_t)2);
        ASSERT_STREQ(quantity(c->requests, c->n_requests, "memory", q), "1073741824");
        ASSERT_EQ(dp_quantity_milli_value(&c->requests[0].value), 500); /* a request written stays */
        ASSERT_EQ(a->n_tolerations, (size_t)2);
        ASSERT_TRUE(dp_model_is_default_toleration(&a->tolerations[0]));
        ASSERT_STREQ(a->tolerations[1].key, "node.kubernetes.io/unreachable");
        ASSERT_EQ(b->n_tolerations, (size_t)1); /* tolerates every taint already */
        dp_object_list_free(l);
}

TEST(pod_sched_fields_decoded) {
        dp_object_list *l =
                load("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                     "spec:\n  schedulingGates: [{name: example.com/kueue}]\n"
                     "  preemptionPolicy: Never\n"
                     "  volumes: [{name: d, persistentVolumeClaim: {claimName: x}}, {name: e, emptyDir: {}}]\n"
                     "  containers:\n  - name: c\n    ports: [{containerPort: 80, hostPort: 8080, protocol: UDP,"
                     " hostIP: 10.0.0.1}, {containerPort: 81}]\n"
                     "    resources: {limits: {hugepages-2Mi: 4Mi}}\n");
        const dp_pod *a = pod(l, "a");
        ASSERT_EQ(a->n_scheduling_gates, (size_t)1);
        ASSERT_STREQ(a->scheduling_gates[0], "example.com/kueue");
        ASSERT_STREQ(a->preemption_policy, "Never");
        ASSERT_EQ(a->containers[0].n_host_ports, (size_t)1);
        ASSERT_EQ(a->containers[0].host_ports[0].host_port, 8080);
        ASSERT_STREQ(a->containers[0].host_ports[0].protocol, "UDP");
        ASSERT_STREQ(a->containers[0].host_ports[0].host_ip, "10.0.0.1");
        ASSERT_EQ(a->n_unmodelled, (size_t)2);
        ASSERT_STREQ(a->unmodelled[0], "spec.volumes[0].persistentVolumeClaim");
        ASSERT_STREQ(a->unmodelled[1], "spec.containers[0].resources.requests[hugepages-2Mi]");
        ASSERT_EQ(l->n_warnings, (size_t)1);
        ASSERT_CONTAINS(l->warnings[0], "pod default/a: spec.volumes[0].persistentVolumeClaim, "
                                        "spec.containers[0].resources.requests[hugepages-2Mi]: not modelled");
        dp_object_list_free(l);
}

TEST(bad_sched_fields) {
        static const char *const bad[][2] = {
                {"spec: {preemptionPolicy: Sometimes}", "spec.preemptionPolicy: must be PreemptLowerPriority or Never"},
                {"spec: {schedulingGates: [{}]}", "spec.schedulingGates[0]: name: required"},
                {"spec: {containers: [{name: c, ports: [{hostPort: 70000}]}]}", "must be between 0 and 65535"},
                {"spec: {containers: [{name: c, ports: [{hostPort: 80, protocol: ICMP}]}]}",
                 "protocol: must be TCP, UDP or SCTP"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char y[512];
                snprintf(y, sizeof(y), "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n%s\n", bad[i][0]);
                dp_object_list *l = dp_object_list_new();
                dp_error err = DP_ERROR_INIT;
                ASSERT_TRUE(dp_model_decode_buffer(y, strlen(y), "t.yaml", l, &err) < 0);
                ASSERT_CONTAINS(err.msg, bad[i][1]);
                dp_object_list_free(l);
        }
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *y =
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 1000000001\n";
        ASSERT_OK(dp_model_decode_buffer(y, strlen(y), "t.yaml", l, &err));
        ASSERT_TRUE(dp_model_validate(l, &err) < 0);
        ASSERT_CONTAINS(err.msg, "PriorityClass huge: value: must be at most 1000000000");
        dp_object_list_free(l);
}

/* core/v1 Toleration.ToleratesTaint (model/lookup.c), the one matcher of the
 * simulator's evictions and explain's answers. */
TEST(toleration_tolerates) {
        dp_taint gpu = {.key = "nvidia.com/gpu", .value = "present", .effect = "NoSchedule"};
        dp_taint bare = {.key = "dedicated", .effect = "NoExecute"};
        struct {
                dp_toleration t;
                bool gpu, bare;
        } cases[] = {
                {{.key = "nvidia.com/gpu", .op = "Exists"}, true, false},
                {{.key = "nvidia.com/gpu", .value = "present"}, true, false},
                {{.key = "nvidia.com/gpu", .op = "Equal", .value = "other"}, false, false},
                {{.key = "nvidia.com/gpu", .op = "Exists", .effect = "NoExecute"}, false, false},
                {{.op = "Exists"}, true, true},                         /* empty key, Exists: every taint */
                {{.op = "Exists", .effect = "NoExecute"}, false, true}, /* ... of that effect */
                {{.key = "dedicated", .value = ""}, false, true},       /* absent value is "" */
                {{.key = "dedicated", .op = "Gt"}, false, false},       /* an unknown operator: nothing */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ASSERT_EQ(dp_toleration_tolerates(&cases[i].t, &gpu), cases[i].gpu);
                ASSERT_EQ(dp_toleration_tolerates(&cases[i].t, &bare), cases[i].bare);
        }
}

TEST(tolerations_tolerate) {
        dp_taint x = {.key = "dedicated", .value = "ml", .effect = "NoSchedule"};
        dp_toleration v[] = {{.key = "other", .op = "Exists"}, {.key = "dedicated", .value = "ml"}};
        ASSERT_TRUE(dp_tolerations_tolerate(v, 2, &x));
        ASSERT_TRUE(!dp_tolerations_tolerate(v, 1, &x));
        ASSERT_TRUE(!dp_tolerations_tolerate(NULL, 0, &x));
}
