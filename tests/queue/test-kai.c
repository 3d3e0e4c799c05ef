/* SPDX-License-Identifier: Apache-2.0
 *
 * test-kai.c — KAI-Scheduler's fair share and admission facts
 * (tests/queue/kai/case-NAME.yaml, each transcribing one of KAI's scenarios
 * with a `# source:` line) and the Queue decoder's rules.
 *
 * A case file is Kubernetes YAML (Nodes, KAI Queues, PodGroups, Pods) with
 * a header of comments:
 *     # source: <KAI file>:<line> "<test name>"
 *     # expect: NS/NAME Running|Admitted|Evicted|Pending [REASON]
 *     # fair-share: QUEUE RESOURCE=VALUE          (cpu millicores, memory MB, gpu)
 */
#include <math.h>
#include <stdio.h>

#include "base/fileio.h"
#include "cases.h"
#include "harness.h"
#include "queue/kai.h"
#include "sched/topology.h"

static char *read_text(const char *path) {
        char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_read_file(path, 1 << 20, &buf, &len, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        return buf;
}

static int load(const char *name, const char *text, dp_object_list **ret_l, dp_kai **ret_k, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return -ENOMEM;
        l->ext = &dp_kai_model_ext;
        int r = dp_model_decode_buffer(text, strlen(text), name, l, err);
        dp_kai *k = NULL;
        if (r >= 0) r = dp_kai_new(l, &k, err);
        if (r >= 0) dp_kai_set_node_filter(k, dp_sched_pod_node_allowed); /* simulate's predicates */
        *ret_l = l;
        *ret_k = k;
        return r;
}

static const char *state_word(dp_kai_state s) {
        return s == DP_KAI_RUNNING    ? "Running"
               : s == DP_KAI_ADMITTED ? "Admitted"
               : s == DP_KAI_EVICTED  ? "Evicted"
                                      : "Pending";
}

static void check_expect(const char *file, const dp_kai *k, const char *line) {
        char ref[300], state[32], reason[64] = "";
        if (sscanf(line, "%299s %31s %63s", ref, state, reason) < 2) DP_FAIL("%s: bad line %s", file, line);
        char *slash = strchr(ref, '/');
        if (!slash) DP_FAIL("%s: %s: NS/NAME expected", file, ref);
        *slash = 0;
        const dp_kai_group *g = dp_kai_find(k, ref, slash + 1);
        if (!g) DP_FAIL("%s: no group %s/%s", file, ref, slash + 1);
        if (!streq(state_word(g->state), state))
                DP_FAIL("%s: %s/%s: %s, expected %s (%s: %s)", file, ref, slash + 1, state_word(g->state), state,
                        g->reason ? g->reason : "-", g->message ? g->message : "-");
        if (reason[0] && !streq_ptr(g->reason, reason))
                DP_FAIL("%s: %s/%s: reason %s, expected %s (%s)", file, ref, slash + 1,
                        g->reason ? g->reason : "(none)", reason, g->message ? g->message : "");
}

static void check_share(const char *file, const dp_kai *k, const char *line) {
        char queue[256], res[16];
        double want = 0;
        if (sscanf(line, "%255s %15[^=]=%lf", queue, res, &want) != 3) DP_FAIL("%s: bad line %s", file, line);
        const dp_kai_queue *q = dp_kai_find_queue(k, queue);
        if (!q) DP_FAIL("%s: no queue %s", file, queue);
        int r = streq(res, "cpu") ? DP_KAI_CPU : streq(res, "memory") ? DP_KAI_MEMORY : DP_KAI_GPU;
        if (fabs(q->fair[r] - want) > 1e-6)
                DP_FAIL("%s: queue %s: fair share of %s %g, expected %g", file, queue, res, q->fair[r], want);
}

static size_t run_case(const char *name) {
        const char *only = getenv("DP_KAI_CASE"); /* one case (checking that a case fails when its rule breaks) */
        if (only && !strstr(name, only)) return 0;
        char path[512];
        snprintf(path, sizeof(path), "kai/%s", name);
        _cleanup_free_ char *text = read_text(path);
        if (!strstr(text, "# source: ")) DP_FAIL("%s: no # source: line", path);
        dp_object_list *l = NULL;
        dp_kai *k = NULL;
        dp_error err = DP_ERROR_INIT;
        if (load(path, text, &l, &k, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        ASSERT_OK(dp_kai_admit(k));
        size_t n = 0;
        for (const char *p = text; (p = strstr(p, "\n# ")); p++) {
                const char *line = p + 3;
                _cleanup_free_ char *rest = strndup(line, strcspn(line, "\n"));
                if (startswith(rest, "expect: "))
                        check_expect(path, k, rest + 8), n++;
                else if (startswith(rest, "fair-share: "))
                        check_share(path, k, rest + 12), n++;
        }
        if (!n) DP_FAIL("%s: no expectations", path);
        dp_kai_free(k);
        dp_object_list_free(l);
        return n;
}

TEST(kai_cases) {
        size_t n = 0, checks = run_cases("kai", run_case, false, &n);
        ASSERT_TRUE(checks > 0 && n >= 10);
}

/* ---- the decoder ---- */

static const char *decode_error(const char *yaml, char *warn, size_t warn_size) {
        static char msg[sizeof(((dp_error *)0)->msg)];
        dp_object_list *l = NULL;
        dp_kai *k = NULL;
        dp_error err = DP_ERROR_INIT;
        int r = load("q.yaml", yaml, &l, &k, &err);
        snprintf(msg, sizeof(msg), "%s", r < 0 ? err.msg : "");
        if (warn) snprintf(warn, warn_size, "%s", l && l->n_warnings ? l->warnings[0] : "");
        dp_kai_free(k);
        dp_object_list_free(l);
        return msg;
}

#define QUEUE_HEAD "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"

TEST(kai_decode_rules) {
        char warn[1024];
        ASSERT_STREQ(decode_error(QUEUE_HEAD "  resources: {gpu: {quota: 2, limit: -1, overQuotaWeight: 1}}\n", warn,
                                  sizeof(warn)),
                     "");
        ASSERT_STREQ(warn, "");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {gpu: {quota: -2}}\n", NULL, 0),
                        "spec.resources.gpu.quota: must be -1 or more, got -2");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {cpu: {overQuotaWeight: -1}}\n", NULL, 0),
                        "spec.resources.cpu.overQuotaWeight: must be 0 or more");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {memory: {limit: lots}}\n", NULL, 0),
                        "spec.resources.memory.limit: expected a number");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  priority: high\n", NULL, 0), "spec.priority");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  parentQueue: q\n", NULL, 0), "a queue cannot be its own parent");
        ASSERT_STREQ(decode_error(QUEUE_HEAD "  colour: blue\n  resources: {gpu: {quota: 1, burst: 2}}\n", warn,
                                  sizeof(warn)),
                     "");
        ASSERT_CONTAINS(warn, "q.yaml: Queue q: spec: unknown field \"colour\"");
        ASSERT_CONTAINS(warn, "not a field devplane reads, ignored");
}

TEST(kai_parent_cycle) {
        const char *yaml =
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: b}\n---\n"
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: a}\n";
        ASSERT_CONTAINS(decode_error(yaml, NULL, 0), "KAI Queue a: spec.parentQueue: the parents form a cycle");
}

TEST(kai_volcano_queue_is_not_kai) {
        /* a Queue of another API group is not taken as KAI's */
        char warn[1024];
        const char *yaml =
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: v}\nspec: {weight: 1}\n";
        ASSERT_STREQ(decode_error(yaml, warn, sizeof(warn)), "");
        dp_object_list *l = dp_object_list_new();
        l->ext = &dp_kai_model_ext;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_decode_buffer(yaml, strlen(yaml), "v.yaml", l, &err));
        ASSERT_FALSE(dp_kai_input_has_queues(l));
        dp_object_list_free(l);
}

/* ---- node-level fit (queue/kai-nodes.c) ---- */

#define NODE(name, gpus, extra)                                                                                        \
        "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {pool: " name "}}\n" extra                     \
        "status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"" gpus "\"}}\n---\n"
#define TOP_QUEUE                                                                                                      \
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {cpu: {quota: -1, "     \
        "limit: -1}, memory: {quota: -1, limit: -1}, gpu: {quota: -1, limit: -1, overQuotaWeight: 1}}}\n---\n"
#define POD(name, gpus, extra)                                                                                         \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", labels: {kai.scheduler/queue: q}}\nspec:\n"             \
        "  schedulerName: kai-scheduler\n" extra "  containers: [{name: c, image: x, resources: {limits: "             \
        "{nvidia.com/gpu: \"" gpus "\"}}}]\n---\n"

/* The state of group default/name after one cycle over yaml. */
static const dp_kai_group *admitted(const char *yaml, const char *name, dp_kai **kp, dp_object_list **lp) {
        dp_error err = DP_ERROR_INIT;
        if (load("nodes.yaml", yaml, lp, kp, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_OK(dp_kai_admit(*kp));
        const dp_kai_group *g = dp_kai_find(*kp, "default", name);
        if (!g) DP_FAIL("no group %s", name);
        return g;
}

static void done(dp_kai *k, dp_object_list *l) {
        dp_kai_free(k);
        dp_object_list_free(l);
}

TEST(kai_fit_one_node) {
        /* 4 GPUs free in total, 2 on each node: a 3-GPU pod fits none (the
         * total would admit it), a 2-GPU pod fits */
        dp_kai *k = NULL;
        dp_object_list *l = NULL;
        const dp_kai_group *g =
                admitted(NODE("a", "2", "") NODE("b", "2", "") TOP_QUEUE POD("big", "3", ""), "big", &k, &l);
        ASSERT_EQ(g->state, DP_KAI_PENDING);
        ASSERT_STREQ(g->reason, "Unschedulable");
        ASSERT_CONTAINS(g->message, "pod default/big (cpu 0m, memory 0MB, gpu 3) fits no node");
        ASSERT_CONTAINS(g->message, "the most free on one node: cpu 64000m, memory 274878MB, gpu 2");
        done(k, l);
        g = admitted(NODE("a", "2", "") NODE("b", "2", "") TOP_QUEUE POD("two", "2", ""), "two", &k, &l);
        ASSERT_EQ(g->state, DP_KAI_ADMITTED);
        done(k, l);
}

TEST(kai_fit_gang_all_or_nothing) {
        /* two 2-GPU pods of one gang on nodes of 3 and 1 free GPUs: 4 free in
         * total, room for one pod only */
        dp_kai *k = NULL;
        dp_object_list *l = NULL;
        const char *gang = NODE("a", "3", "") NODE("b", "1", "") TOP_QUEUE
                "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: gang, namespace: default}\n"
                "spec: {minMember: 2, queue: q}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: gang-0, labels: {kai.scheduler/queue: q}, annotations: "
                "{pod-group-name: gang}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, image: x, "
                "resources: {limits: {nvidia.com/gpu: \"2\"}}}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: gang-1, labels: {kai.scheduler/queue: q}, annotations: "
                "{pod-group-name: gang}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, image: x, "
                "resources: {limits: {nvidia.com/gpu: \"2\"}}}]}\n";
        const dp_kai_group *g = admitted(gang, "gang", &k, &l);
        ASSERT_EQ(g->state, DP_KAI_PENDING);
        ASSERT_EQ(g->started, (size_t)0);
        ASSERT_CONTAINS(g->message, "2 pod(s) of the gang must start together: pod default/gang-1");
        for (size_t i = 0; i < k->n_nodes; i++) /* nothing of the failed gang stays on the nodes */
                ASSERT_EQ(k->nodes[i].free[DP_KAI_GPU], (double)(i == 0 ? 3 : 1));
        done(k, l);
}

TEST(kai_fit_predicates) {
        /* the node filter: a taint not tolerated, a node selector, required
         * node affinity, a cordoned node; the only node that passes is full */
        static const char *const cases[][2] = {
                {NODE("a", "1", "spec: {taints: [{key: gpu, effect: NoSchedule}]}\n"), ""},
                {NODE("a", "1", ""), "  nodeSelector: {pool: b}\n"},
                {NODE("a", "1", ""), "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                     "{nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: "
                                     "[b]}]}]}}}\n"},
                {NODE("a", "1", "spec: {unschedulable: true}\n"), ""},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char yaml[4096];
                snprintf(yaml, sizeof(yaml), "%s%s%s%s", cases[i][0], NODE("b", "0", ""), TOP_QUEUE, "");
                size_t n = strlen(yaml);
                snprintf(yaml + n, sizeof(yaml) - n,
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {kai.scheduler/queue: q}}\nspec:\n"
                         "  schedulerName: kai-scheduler\n%s  containers: [{name: c, image: x, resources: {limits: "
                         "{nvidia.com/gpu: \"1\"}}}]\n",
                         cases[i][1]);
                dp_kai *k = NULL;
                dp_object_list *l = NULL;
                const dp_kai_group *g = admitted(yaml, "p", &k, &l);
                if (g->state != DP_KAI_PENDING) DP_FAIL("case %zu: admitted", i);
                ASSERT_STREQ(g->reason, "Unschedulable");
                done(k, l);
                /* without the filter every node passes (dp_kai_set_node_filter) */
                dp_error err = DP_ERROR_INIT;
                ASSERT_OK(load("nodes.yaml", yaml, &l, &k, &err));
                dp_kai_set_node_filter(k, NULL);
                ASSERT_OK(dp_kai_admit(k));
                if (dp_kai_find(k, "default", "p")->state != DP_KAI_ADMITTED) DP_FAIL("case %zu: no filter", i);
                done(k, l);
        }
}

TEST(kai_evict_what_grew) {
        /* e (queue a, overQuotaWeight 0) runs one pod and grows by one in
         * Allocate, where w (queue b, 2 GPUs) found 1 GPU free; Reclaim then
         * takes e for w: its running pod and the one it started in this
         * cycle leave the node (KAI evicts what it allocated in the cycle
         * too), and w starts */
        const char *yaml = NODE("n0", "4", "") TOP_QUEUE
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: q, "
                "resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: 0}}}\n---\n"
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: q, "
                "resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: other}\nspec: {nodeName: n0, containers: [{name: c, "
                "image: x, resources: {limits: {nvidia.com/gpu: \"2\"}}}]}\n---\n"
                "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: e, namespace: default}\n"
                "spec: {minMember: 1, queue: a}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: e-0, annotations: {pod-group-name: e}}\nspec: "
                "{schedulerName: kai-scheduler, nodeName: n0, containers: [{name: c, image: x, resources: {limits: "
                "{nvidia.com/gpu: \"1\"}}}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: e-1, annotations: {pod-group-name: e}}\nspec: "
                "{schedulerName: kai-scheduler, containers: [{name: c, image: x, resources: {limits: "
                "{nvidia.com/gpu: \"1\"}}}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: e-2, annotations: {pod-group-name: e}}\nspec: "
                "{schedulerName: kai-scheduler, containers: [{name: c, image: x, resources: {limits: "
                "{nvidia.com/gpu: \"1\"}}}]}\n---\n"
                "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: w, namespace: default}\n"
                "spec: {minMember: 1, queue: b}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: w-0, annotations: {pod-group-name: w}}\nspec: "
                "{schedulerName: kai-scheduler, containers: [{name: c, image: x, resources: {limits: "
                "{nvidia.com/gpu: \"2\"}}}]}\n";
        dp_kai *k = NULL;
        dp_object_list *l = NULL;
        const dp_kai_group *e = admitted(yaml, "e", &k, &l);
        ASSERT_EQ(e->state, DP_KAI_EVICTED);
        ASSERT_EQ(e->started, (size_t)0);
        ASSERT_STREQ(e->by, "reclaimed by default/w");
        ASSERT_EQ(dp_kai_find(k, "default", "w")->state, DP_KAI_ADMITTED);
        ASSERT_EQ(dp_kai_find_queue(k, "a")->allocated[DP_KAI_GPU], 0.0);
        ASSERT_EQ(k->nodes[0].free[DP_KAI_GPU], 0.0); /* other's 2, w's 2 */
        ASSERT_OK(dp_kai_apply(k, l, NULL));
        for (size_t i = 0; i < l->n; i++) /* e's pods wait again with their scheduler */
                if (l->items[i].hdr->kind == DP_KIND_POD && startswith(l->items[i].pod->meta.name, "e-"))
                        ASSERT_TRUE(!l->items[i].pod->node_name && l->items[i].pod->scheduler_name);
        done(k, l);
}
