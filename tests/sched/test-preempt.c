/* SPDX-License-Identifier: Apache-2.0
 * test-preempt.c — kube-scheduler's DefaultPreemption (sched/preempt.c):
 * candidate nodes, the reprieve order, PDB counting, the node picked,
 * preemptionPolicy Never, nominated pods' room, DRA devices never freed,
 * and the --dra-preemption what-if. */
#include "sched/preempt.h"
#include "sched-test-util.h"

#define CLASSES                                                                                                        \
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"            \
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: mid}\nvalue: 100\n---\n"              \
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: never}\nvalue: 1000\n"                \
        "preemptionPolicy: Never\n---\n"
#define NODE_CPU(name, cpu)                                                                                            \
        "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                                     \
        "status: {capacity: {cpu: \"" cpu "\", memory: 16Gi, pods: \"110\"},"                                          \
        " allocatable: {cpu: \"" cpu "\", memory: 16Gi, pods: \"110\"}}\n---\n"
/* a pod of `cpu` CPUs; extra: more spec lines; status: its status map */
#define POD_CPU(name, cpu, extra, labels, status)                                                                      \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: {" labels "}}\nspec:\n" extra                   \
        "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" cpu "\"}}}]\nstatus: {" status "}\n---\n"
#define ON(node, prio) "  nodeName: " node "\n  priority: " #prio "\n"
#define START(t) "startTime: \"2025-01-01T00:00:" t "Z\""

static dp_sched *new_sched(dp_store *st, bool preemption, bool dra_preemption) {
        dp_sched *s = NULL;
        dp_sched_config cfg = {.policy = DP_SCORE_NONE, .preemption = preemption, .dra_preemption = dra_preemption};
        ASSERT_OK(dp_sched_new(st, &cfg, &s));
        return s;
}

static void run(dp_sched *s, dp_store *st, int64_t now) {
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_sched_claims_from_templates(st, &err));
        if (dp_sched_run(s, now, &err) < 0) DP_FAIL("run: %s", err.msg);
}

static bool gone(dp_store *st, const char *name) { return !dp_store_get(st, DP_KIND_POD, "default", name, NULL).hdr; }

static char *full_message(dp_sched *s, const char *name) {
        const dp_sched_pod_info *pi = dp_sched_pod(s, "default", name);
        ASSERT_TRUE(pi);
        return dp_sched_message(pi);
}

/* The oracle's testdata/preemption.yaml: fewest victims wins; Never and a
 * pod with nothing lower say why, in kube-scheduler's words. */
TEST(picks_fewest_victims_and_says_why) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "4") NODE_CPU("n2", "4") POD_CPU("low-n1", "3", ON("n1", 10), "", START("00"))
                         POD_CPU("low-n2-a", "2", ON("n2", 10), "", START("00")) POD_CPU("low-n2-b", "2", ON("n2", 10),
                                                                                         "", START("01"))
                                 POD_CPU("high", "3", "  priority: 1000\n", "", "")
                                         POD_CPU("never", "3", "  priority: 1000\n  preemptionPolicy: Never\n", "", "")
                                                 POD_CPU("low", "3", "  priority: 10\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_TRUE(gone(st, "low-n1"));
        ASSERT_FALSE(gone(st, "low-n2-a"));
        const dp_sched_pod_info *hi = dp_sched_pod(s, "default", "high");
        ASSERT_STREQ(hi->nominated, "n1");
        ASSERT_STREQ(hi->victims, "default/low-n1");
        ASSERT_STREQ(dp_sched_pod(s, "default", "low-n1")->preempted_by, "default/high");
        char *m = full_message(s, "never");
        ASSERT_STREQ(m, "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: not "
                        "eligible due to preemptionPolicy=Never.");
        free(m);
        m = full_message(s, "low");
        ASSERT_STREQ(m, "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 "
                        "nodes are available: 2 No preemption victims found for incoming pod.");
        free(m);
        run(s, st, 1000); /* the victim is gone: the preemptor goes to its node */
        ASSERT_STREQ(pod_node(st, "high"), "n1");
        dp_sched_free(s);
        dp_store_free(st);
}

/* Off (no PostFilter): nothing is deleted and the message has no PostFilter part. */
TEST(off_preempts_nothing) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "4") POD_CPU("low", "3", ON("n1", 10), "", "")
                         POD_CPU("high", "3", "  priority: 1000\n", "", ""));
        dp_sched *s = new_sched(st, false, false);
        run(s, st, 0);
        ASSERT_FALSE(gone(st, "low"));
        char *m = full_message(s, "high");
        ASSERT_STREQ(m, "0/1 nodes are available: 1 Insufficient cpu.");
        free(m);
        dp_sched_free(s);
        dp_store_free(st);
}

/* Reprieve: all lower pods go, then come back most important first while
 * the pod still fits: the mid-priority pod and the earlier-started of the
 * two low ones stay. */
TEST(reprieve_most_important_first) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "4") POD_CPU("mid", "1", ON("n1", 100), "", START("09"))
                         POD_CPU("old", "1", ON("n1", 10), "", START("01"))
                                 POD_CPU("young", "1", ON("n1", 10), "", START("05"))
                                         POD_CPU("x", "1", ON("n1", 10), "", START("07"))
                                                 POD_CPU("high", "2", "  priority: 1000\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_FALSE(gone(st, "mid"));
        ASSERT_FALSE(gone(st, "old"));
        ASSERT_TRUE(gone(st, "young"));
        ASSERT_TRUE(gone(st, "x"));
        dp_sched_free(s);
        dp_store_free(st);
}

/* A PDB with no disruption left: its pods are reprieved first, so the pod
 * the budget covers stays even though it is the least important. */
TEST(pdb_violating_reprieved_first) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "2") "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
                                             "spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\nstatus: "
                                             "{disruptionsAllowed: 0}\n---\n" POD_CPU("db", "1", ON("n1", 10),
                                                                                      "app: db", START("09"))
                                                     POD_CPU("web", "1", ON("n1", 50), "app: web", START("01"))
                                                             POD_CPU("high", "1", "  priority: 1000\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_FALSE(gone(st, "db"));
        ASSERT_TRUE(gone(st, "web"));
        dp_sched_free(s);
        dp_store_free(st);
}

/* PDB counting: each matching pod spends one disruption; the pods past the
 * budget violate; other namespaces, empty selectors and unlabelled pods do
 * not count; a pod in disruptedPods spends nothing. */
TEST(pdb_counting) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *y = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: one}\n"
                        "spec: {maxUnavailable: \"30%\", selector: {matchLabels: {app: a}}}\n"
                        "status: {disruptionsAllowed: 1, disruptedPods: {p0: \"2025-01-01T00:00:00Z\"}}\n---\n"
                        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: empty}\n"
                        "spec: {selector: {}}\nstatus: {disruptionsAllowed: 0}\n---\n"
                        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: other, namespace: x}\n"
                        "spec: {selector: {matchLabels: {app: a}}}\nstatus: {disruptionsAllowed: 0}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p0, labels: {app: a}}\nspec: {containers: [{name: "
                        "c, image: x}]}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, labels: {app: a}}\nspec: {containers: [{name: "
                        "c, image: x}]}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p2, labels: {app: a}}\nspec: {containers: [{name: "
                        "c, image: x}]}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p3}\nspec: {containers: [{name: c, image: x}]}\n";
        if (dp_model_decode_buffer(y, strlen(y), "t.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        ASSERT_EQ(l->n, 7);
        const dp_pod_disruption_budget *pdbs[3] = {l->items[0].pdb, l->items[1].pdb, l->items[2].pdb};
        ASSERT_TRUE(pdbs[0]->max_unavailable.set && pdbs[0]->max_unavailable.percent);
        ASSERT_EQ(pdbs[0]->max_unavailable.value, 30);
        const dp_pod *pods[4] = {l->items[3].pod, l->items[4].pod, l->items[5].pod, l->items[6].pod};
        bool v[4];
        ASSERT_OK(dp_preempt_pdb_violations(pods, 4, pdbs, 3, v));
        ASSERT_FALSE(v[0]); /* disrupted already: not counted */
        ASSERT_FALSE(v[1]); /* the one disruption allowed */
        ASSERT_TRUE(v[2]);  /* past the budget */
        ASSERT_FALSE(v[3]); /* no labels: no budget */
        dp_object_list_free(l);
}

/* pickOneNodeForPreemption's order, then the lowest name. */
TEST(pick_order) {
        dp_preempt_victim a1[] = {{"a", 10, 100}}, b1[] = {{"b", 5, 100}}, c2[] = {{"c", 5, 100}, {"d", 5, 50}};
        dp_preempt_victim e1[] = {{"e", 5, 200}}, f1[] = {{"f", 5, 200}};
        /* PDB violations first */
        dp_preempt_candidate v1[] = {{"n1", b1, 1, 1}, {"n2", a1, 1, 0}};
        ASSERT_EQ(dp_preempt_pick(v1, 2), 1);
        /* lowest highest-victim priority */
        dp_preempt_candidate v2[] = {{"n1", a1, 1, 0}, {"n2", b1, 1, 0}};
        ASSERT_EQ(dp_preempt_pick(v2, 2), 1);
        /* smallest sum (the same priority: fewer victims) */
        dp_preempt_candidate v3[] = {{"n1", c2, 2, 0}, {"n2", b1, 1, 0}};
        ASSERT_EQ(dp_preempt_pick(v3, 2), 1);
        /* latest start of the highest-priority victims */
        dp_preempt_candidate v4[] = {{"n1", b1, 1, 0}, {"n2", e1, 1, 0}};
        ASSERT_EQ(dp_preempt_pick(v4, 2), 1);
        /* all equal: the lowest node name */
        dp_preempt_candidate v5[] = {{"n9", e1, 1, 0}, {"n2", f1, 1, 0}};
        ASSERT_EQ(dp_preempt_pick(v5, 2), 1);
        /* a node without victims at once */
        dp_preempt_candidate v6[] = {{"n1", b1, 1, 0}, {"n2", NULL, 0, 0}};
        ASSERT_EQ(dp_preempt_pick(v6, 2), 1);
        dp_preempt_victim hi = {"x", 10, 500}, lo = {"y", 5, 1}, early = {"z", 10, 1};
        ASSERT_TRUE(dp_preempt_more_important(&hi, &lo));
        ASSERT_TRUE(dp_preempt_more_important(&early, &hi));
}

TEST(start_times) {
        dp_pod p = {0};
        ASSERT_EQ(dp_preempt_start_time(&p), 946684800); /* 2000-01-01 */
        p.meta.creation_timestamp = (char *)"2026-01-01T00:04:00Z";
        ASSERT_EQ(dp_preempt_start_time(&p), 1767225840);
        p.start_time = (char *)"2100-01-01T00:00:07.5+01:00";
        ASSERT_EQ(dp_preempt_start_time(&p), DP_PREEMPT_BIND_EPOCH + 7 - 3600);
        char b[32];
        dp_preempt_format_time(DP_PREEMPT_BIND_EPOCH + 3661, b, sizeof(b));
        ASSERT_STREQ(b, "2100-01-01T01:01:01Z");
}

/* Unresolvable reasons (taints) are no candidates: "not helpful"; a node
 * whose only lower pod is too small is named by its filter's reason. */
TEST(candidates_only_where_resolvable) {
        dp_store *st = dp_store_new();
        load(st,
             CLASSES NODE_CPU("n1", "4") NODE_CPU(
                     "n2", "4") "apiVersion: v1\nkind: Node\nmetadata: {name: n3}\nspec: {taints: [{key: k, effect: "
                                "NoSchedule}]}\n"
                                "status: {allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}}\n---\n" POD_CPU(
                                        "big", "3", ON("n1", 2000), "", "") POD_CPU("small", "1", ON("n2", 0), "", "")
                                        POD_CPU("other", "2", ON("n2", 2000), "", "")
                                                POD_CPU("high", "3", "  priority: 1000\n", "", "")
                                                        POD_CPU("huge", "9", "  priority: 1000\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        char *m = full_message(s, "high");
        ASSERT_CONTAINS(m, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found "
                           "for incoming pod, 1 Preemption is not helpful for scheduling.");
        free(m);
        m = full_message(s, "huge"); /* more than any node has: unresolvable everywhere */
        ASSERT_CONTAINS(m, "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
        free(m);
        ASSERT_FALSE(gone(st, "small"));
        dp_sched_free(s);
        dp_store_free(st);
}

/* A nominated pod's room is kept from pods of lower or equal priority. */
TEST(nominated_room_kept) {
        dp_store *st = dp_store_new();
        load(st,
             CLASSES NODE_CPU("n1", "4") NODE_CPU("n2", "1") POD_CPU("low", "3", ON("n1", 0), "", "")
                     POD_CPU("filler", "1", ON("n2", 2000), "", "") POD_CPU("high", "3", "  priority: 1000\n", "", "")
                             POD_CPU("late", "2", "  priority: 5\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_TRUE(gone(st, "low"));
        /* n1 has 4 CPUs free now, 3 of them kept for high: late (2) does not fit */
        ASSERT_FALSE(pod_node(st, "late"));
        run(s, st, 1000);
        ASSERT_STREQ(pod_node(st, "high"), "n1");
        dp_sched_free(s);
        dp_store_free(st);
}

#define DRA_OBJECTS                                                                                                    \
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"                                   \
        "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n---\n"                      \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpu}\n"                              \
        "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, resourceSliceCount: 1},"        \
        " devices: [{name: gpu-0}]}\n---\n"                                                                            \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one}\n"                         \
        "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n---\n"
#define POD_DRA(name, extra)                                                                                           \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n" extra                                         \
        "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: [{name: g}]}}]\n"              \
        "  resourceClaims: [{name: g, resourceClaimTemplateName: one}]\n---\n"

/* 1.35 does not free devices by preemption: the high pod that needs the
 * low pod's only GPU stays Pending, "cannot allocate all claims" is not
 * helped by preemption, and nothing is deleted. */
TEST(dra_devices_not_preempted) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "4") DRA_OBJECTS POD_DRA("holder", "  priority: 0\n"));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_STREQ(pod_node(st, "holder"), "n1");
        load(st, POD_DRA("high", "  priority: 1000\n"));
        run(s, st, 1000);
        ASSERT_FALSE(gone(st, "holder"));
        ASSERT_FALSE(pod_node(st, "high"));
        char *m = full_message(s, "high");
        ASSERT_STREQ(m, "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: "
                        "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
        free(m);
        dp_sched_free(s);
        dp_store_free(st);
}

/* --dra-preemption (KEP-5690 what-if): the same cluster, and now the low
 * pod is preempted for its device, which the high pod then gets. */
TEST(dra_preemption_whatif) {
        dp_store *st = dp_store_new();
        load(st, CLASSES NODE_CPU("n1", "4") DRA_OBJECTS POD_DRA("holder", "  priority: 0\n"));
        dp_sched *s = new_sched(st, true, true);
        run(s, st, 0);
        ASSERT_STREQ(pod_node(st, "holder"), "n1");
        load(st, POD_DRA("high", "  priority: 1000\n"));
        run(s, st, 1000);
        ASSERT_TRUE(gone(st, "holder"));
        ASSERT_STREQ(dp_sched_pod(s, "default", "high")->victims, "default/holder");
        run(s, st, 2000);
        ASSERT_STREQ(pod_node(st, "high"), "n1");
        dp_sched_free(s);
        dp_store_free(st);
}

/* Retries follow kube-scheduler's AssignedPodDelete hints: a preemptor
 * rejected by an existing pod's anti-affinity is not moved by that pod's
 * deletion (InterPodAffinity's hint looks at the waiting pod's own
 * anti-affinity only), so it stays Pending with its first message, as in
 * the oracle; a pod rejected for cpu is moved and placed. */
TEST(retry_follows_delete_hints) {
        dp_store *st = dp_store_new();
        load(st, "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n"
                 "status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: guard, labels: {tier: x}}\nspec:\n  nodeName: n1\n"
                 "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
                 "{matchExpressions: [{key: tier, operator: DoesNotExist}]}, topologyKey: kubernetes.io/hostname}]}}\n"
                 "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n---\n" POD_CPU(
                         "high", "1", "  priority: 1000\n", "", ""));
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_TRUE(gone(st, "guard"));
        ASSERT_STREQ(dp_sched_pod(s, "default", "high")->nominated, "n1");
        run(s, st, 2000);
        run(s, st, 20000);
        ASSERT_FALSE(pod_node(st, "high"));
        char *m = full_message(s, "high");
        ASSERT_STREQ(m, "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.");
        free(m);
        dp_sched_free(s);
        dp_store_free(st);
}

/* kube-scheduler's node keeps used host ports as a set: the dry run that
 * takes the low pod away frees 8080 even though the higher-priority keeper
 * holds it too, so the low pod is preempted, and once it is gone the port
 * is free on the node: the preemptor binds beside the keeper (the oracle
 * does exactly this). */
#define PORT_POD(name, cpu, prio)                                                                                      \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n  nodeName: n1\n  priority: " #prio "\n"        \
        "  containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}],"                             \
        " resources: {requests: {cpu: \"" cpu "\"}}}]\n---\n"
TEST(victims_free_ports_as_a_set) {
        dp_store *st = dp_store_new();
        load(st, NODE_CPU("n1", "4") PORT_POD("keeper", "3", 2000) PORT_POD("low", "500m", 0)
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: high}\nspec:\n  priority: 1000\n"
                         "  containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}],"
                         " resources: {requests: {cpu: \"1\"}}}]\n");
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_TRUE(gone(st, "low"));
        ASSERT_FALSE(gone(st, "keeper"));
        run(s, st, 2000);
        ASSERT_STREQ(pod_node(st, "high"), "n1");
        dp_sched_free(s);
        dp_store_free(st);
}

/* The dry run takes every lower pod away, then gives them back one by one
 * (AddPod): a pod given back holds its host ports again, even where a pod
 * still taken away held the same one. Two lower pods share 8080 on n1 (the
 * input bound both); the preemptor wants 8080 and has room for both, so
 * giving either back takes the port again: both are victims (the oracle:
 * tests/sched/differential-ksched.py --seed 11 --scores, cluster 1100272). */
TEST(given_back_pods_hold_their_ports) {
        dp_store *st = dp_store_new();
        load(st, NODE_CPU("n1", "4") PORT_POD("low-a", "500m", 5) PORT_POD("low-b", "500m", 0)
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: high}\nspec:\n  priority: 1000\n"
                         "  containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}],"
                         " resources: {requests: {cpu: \"1\"}}}]\n");
        dp_sched *s = new_sched(st, true, false);
        run(s, st, 0);
        ASSERT_TRUE(gone(st, "low-a"));
        ASSERT_TRUE(gone(st, "low-b"));
        run(s, st, 2000);
        ASSERT_STREQ(pod_node(st, "high"), "n1");
        dp_sched_free(s);
        dp_store_free(st);
}
