/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"
#include "node/pods.h"

static int decode(const char *yaml, dp_node_pod **ret, dp_error *e) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        int r = dp_doc_parse(s, yaml, strlen(yaml), "pod.yaml", e);
        if (r < 0) return r;
        return dp_node_pod_decode(dp_doc_root(s, 0), "pod.yaml", ret, e);
}

TEST(decode_two_containers) {
        dp_node_pod *p = NULL;
        ASSERT_OK(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {limits: {nvidia.com/gpu: 1, cpu: 2}}\n"
                         "  - name: b\n    resources: {limits: {nvidia.com/gpu: \"2\"}, requests: {nvidia.com/gpu: 2}}\n"
                         "  - name: c\n",
                         &p, NULL));
        ASSERT_STREQ(p->ns, "default");
        ASSERT_STREQ(p->name, "train");
        ASSERT_EQ(p->n_containers, 3);
        ASSERT_EQ(p->containers[0].n_req, 1);
        ASSERT_STREQ(p->containers[0].req[0].resource, "nvidia.com/gpu");
        ASSERT_EQ(p->containers[1].req[0].count, 2);
        ASSERT_EQ(p->containers[2].n_req, 0);
        ASSERT_EQ(strlen(p->uid), 36);
        dp_node_pod *q = NULL;
        ASSERT_OK(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {limits: {nvidia.com/gpu: 1, cpu: 2}}\n"
                         "  - name: b\n    resources: {limits: {nvidia.com/gpu: \"2\"}, requests: {nvidia.com/gpu: 2}}\n"
                         "  - name: c\n",
                         &q, NULL));
        ASSERT_STREQ(p->uid, q->uid);
        dp_node_pod_free(p);
        dp_node_pod_free(q);
}

TEST(decode_errors) {
        dp_node_pod *p = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 2}}\n",
                         &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "pod.yaml: Pod default/x: spec.containers[0].resources.requests[nvidia.com/gpu]: must be equal to nvidia.com/gpu limit");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {limits: {nvidia.com/gpu: 500m}}\n",
                         &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "spec.containers[0].resources.limits[nvidia.com/gpu]: \"500m\": must be a whole number");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {requests: {example.com/gpu: 1}}\n",
                         &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "a limit must be set");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                         "  - name: a\n    resources: {limits: {Example.com/gpu: 1}}\n",
                         &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "not a valid extended resource name");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a}, {name: a}]}\n", &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "spec.containers[1].name: Duplicate value \"a\"");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Deployment\nmetadata: {name: x}\n", &p, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "kind: Unsupported value \"Deployment\"");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: a}]}\n", &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "metadata.name: Invalid value");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n", &p, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "spec.containers: Required value");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: a}]\n"
                         "  initContainers: [{name: i, resources: {limits: {example.com/gpu: 1}}}]\n",
                         &p, &e),
                  -EINVAL);
        ASSERT_CONTAINS(e.msg, "spec.initContainers[0].resources.limits[example.com/gpu]");
        ASSERT_EQ(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a, resources: {limits: {example.com/gpu: 1000000}}}]}\n", &p, &e),
                  -E2BIG);
}

TEST(uid_given) {
        dp_node_pod *p = NULL;
        ASSERT_OK(decode("apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: team, uid: abc}\nspec: {containers: [{name: a}]}\n", &p, NULL));
        ASSERT_STREQ(p->uid, "abc");
        ASSERT_STREQ(p->ns, "team");
        dp_node_pod_free(p);
}

TEST(backoff) {
        ASSERT_EQ(dp_node_backoff_ms(100, 1000, 1), 100);
        ASSERT_EQ(dp_node_backoff_ms(100, 1000, 2), 200);
        ASSERT_EQ(dp_node_backoff_ms(100, 1000, 4), 800);
        ASSERT_EQ(dp_node_backoff_ms(100, 1000, 5), 1000);
        ASSERT_EQ(dp_node_backoff_ms(100, 1000, 500), 1000);
}
