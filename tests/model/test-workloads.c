/* SPDX-License-Identifier: Apache-2.0
 * Workload kinds (Deployment, both PodGroup shapes) and the third-party
 * workloads of shared/conformance/dra-example-driver: every file must load
 * and validate unchanged (scenario 14 starts here). */
#include <ftw.h>
#include <stdio.h>

#include "harness.h"
#include "model/model.h"

static dp_object_list *decode_ok(const char *yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(yaml, strlen(yaml), "w.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        if (dp_model_validate(l, &err) < 0) DP_FAIL("validate: %s", err.msg);
        return l;
}

static const char *group_yaml = "apiVersion: scheduling.k8s.io/v1alpha2\n"
                                "kind: PodGroup\n"
                                "metadata: {name: group-1, namespace: ns}\n"
                                "spec:\n"
                                "  schedulingPolicy:\n"
                                "    gang: {minCount: 2}\n"
                                "  resourceClaims:\n"
                                "  - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
                                "---\n"
                                "apiVersion: apps/v1\n"
                                "kind: Deployment\n"
                                "metadata: {name: group-1, namespace: ns, uid: u-1}\n"
                                "spec:\n"
                                "  replicas: 3\n"
                                "  selector: {matchLabels: {app: group-1}}\n"
                                "  strategy: {type: RollingUpdate}\n"
                                "  template:\n"
                                "    metadata:\n"
                                "      labels: {app: group-1}\n"
                                "    spec:\n"
                                "      containers:\n"
                                "      - name: ctr0\n"
                                "        image: ubuntu:22.04\n"
                                "        resources:\n"
                                "          claims: [{name: gpu}]\n"
                                "      schedulingGroup: {podGroupName: group-1}\n"
                                "      resourceClaims:\n"
                                "      - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
                                "status: {replicas: 0, conditions: []}\n";

TEST(podgroup_v1alpha2_and_deployment) {
        dp_object_list *l = decode_ok(group_yaml);
        ASSERT_EQ(l->n, 2);
        dp_pod_group *g = l->items[0].pod_group;
        ASSERT_TRUE(g->gang);
        ASSERT_EQ(g->min_member, 2);
        ASSERT_EQ(g->n_resource_claims, 1);
        ASSERT_STREQ(g->resource_claims[0].resource_claim_template_name, "one-gpu");
        dp_deployment *d = l->items[1].deployment;
        ASSERT_EQ(d->hdr.kind, DP_KIND_DEPLOYMENT);
        ASSERT_EQ(d->replicas, 3);
        ASSERT_STREQ(d->template_->scheduling_group, "group-1");
        ASSERT_EQ(d->template_->n_containers, 1);

        dp_object_list *pods = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_deployment_expand(d, NULL, 0, pods, &err));
        ASSERT_EQ(pods->n, 3);
        dp_pod *p = pods->items[2].pod;
        ASSERT_EQ(p->hdr.kind, DP_KIND_POD);
        ASSERT_STREQ(p->meta.name, "group-1-2");
        ASSERT_STREQ(p->meta.namespace, "ns");
        ASSERT_STREQ(dp_object_label(pods->items[2], "app"), "group-1");
        ASSERT_STREQ(dp_pod_group_name(p), "group-1");
        ASSERT_EQ(p->meta.n_owner_references, 1);
        ASSERT_STREQ(p->meta.owner_references[0].kind, "Deployment");
        ASSERT_STREQ(p->meta.owner_references[0].uid, "u-1");
        ASSERT_STREQ(p->hdr.source, "w.yaml");
        ASSERT_OK(dp_model_validate(pods, &err));

        /* encoded and decoded again, the objects are the same */
        dp_doc_set *s = dp_doc_set_new();
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        dp_doc_emit(&a, dp_object_list_encode(s, l), DP_DOC_YAML);
        dp_object_list *l2 = dp_object_list_new();
        ASSERT_OK(dp_model_decode_buffer(dp_strbuf_str(&a), a.len, "re", l2, &err));
        dp_doc_emit(&b, dp_object_list_encode(s, l2), DP_DOC_YAML);
        ASSERT_STREQ(dp_strbuf_str(&b), dp_strbuf_str(&a));
        ASSERT_CONTAINS(dp_strbuf_str(&a), "schedulingPolicy:\n      gang:\n        minCount: 2\n");
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_doc_set_free(s);
        dp_object_list_free(l2);
        dp_object_list_free(pods);
        dp_object_list_free(l);
}

TEST(deployment_errors) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *y = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
                        "      containers:\n      - name: c\n        resources: {limits: {gpu: 1}}\n";
        ASSERT_OK(dp_model_decode_buffer(y, strlen(y), "d.yaml", l, &err));
        ASSERT_EQ(dp_model_validate(l, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg,
                        "d.yaml: Deployment d: spec.template.spec.containers[0].resources.limits.gpu: \"gpu\": "
                        "must be a standard resource for containers");
        dp_object_list_free(l);
        l = dp_object_list_new();
        y = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n";
        ASSERT_EQ(dp_model_decode_buffer(y, strlen(y), "d.yaml", l, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.template: required");
        y = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
            "      containers: [{name: c, livenessProbe: {}, bogus: 1}]\n";
        ASSERT_EQ(dp_model_decode_buffer(y, strlen(y), "d.yaml", l, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "Deployment d: spec.template.spec.containers[0]: unknown field \"bogus\"");
        dp_object_list_free(l);
}

TEST(implicit_device_class_resource_and_default_api_version) {
        dp_object_list *l = decode_ok("kind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n"
                                      "  - name: c\n    resources:\n      limits:\n"
                                      "        deviceclass.resource.kubernetes.io/gpu.example.com: 1\n");
        ASSERT_STREQ(l->items[0].hdr->api_version, "v1");
        ASSERT_TRUE(dp_is_extended_resource_name("deviceclass.resource.kubernetes.io/gpu.example.com"));
        ASSERT_FALSE(dp_is_extended_resource_name("deviceclass.resource.kubernetes.io/Bad_Name"));
        dp_object_list_free(l);
}

/* ---- every conformance workload ---- */

static int n_files, n_failed;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st;
        (void)ftw;
        size_t n = strlen(path);
        if (flag != FTW_F || n < 5 || strcmp(path + n - 5, ".yaml") != 0) return 0;
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *paths[] = {path};
        n_files++;
        if (dp_model_load(paths, 1, &l, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                n_failed++;
                return 0;
        }
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_DEPLOYMENT) {
                        dp_object_list *pods = dp_object_list_new();
                        if (dp_deployment_expand(l->items[i].deployment, NULL, 0, pods, &err) < 0 ||
                            dp_model_validate(pods, &err) < 0) {
                                fprintf(stderr, "%s: expand: %s\n", path, err.msg);
                                n_failed++;
                        }
                        dp_object_list_free(pods);
                }
        dp_object_list_free(l);
        return 0;
}

TEST(conformance_workloads_load) {
        const char *shared = getenv("DP_SHARED_DIR");
        if (!shared) return; /* run outside ctest: nothing to check */
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/conformance/dra-example-driver", shared);
        if (access(dir, R_OK) < 0) return;
        ASSERT_OK(nftw(dir, visit, 16, FTW_PHYS));
        ASSERT_TRUE(n_files > 20);
        ASSERT_EQ(n_failed, 0);
}

/* A DaemonSet's pod keeps its template's pod affinity and anti-affinity and
 * preferred node affinity; only the required node affinity is replaced by
 * the node-name term (the DaemonSet controller's
 * ReplaceDaemonSetPodNodeNameNodeAffinity). */
TEST(daemonset_pod_keeps_template_affinity) {
        dp_object_list *l = decode_ok(
                "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec:\n  template:\n"
                "    metadata: {labels: {app: agent}}\n    spec:\n      affinity:\n"
                "        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
                "          - {labelSelector: {matchLabels: {app: other}}, topologyKey: kubernetes.io/hostname}\n"
                "        podAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
                "          - {labelSelector: {matchLabels: {app: db}}, topologyKey: zone}\n"
                "        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
                "            nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: Exists}]}]\n"
                "      containers: [{name: c, image: i}]\n");
        dp_node a = {.hdr = {.kind = DP_KIND_NODE}, .meta = {.name = (char *)"a"}};
        const dp_node *nodes[] = {&a};
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_expand_workloads(l, nodes, 1, &err));
        ASSERT_EQ(l->n, (size_t)2);
        const dp_pod *p = l->items[1].pod;
        ASSERT_STREQ(p->meta.name, "ds-a");
        ASSERT_EQ(p->n_pod_anti_affinity, (size_t)1);
        ASSERT_STREQ(p->pod_anti_affinity[0].topology_key, "kubernetes.io/hostname");
        ASSERT_EQ(p->n_pod_affinity, (size_t)1);
        ASSERT_STREQ(p->pod_affinity[0].topology_key, "zone");
        const dp_node_selector *na = p->required_node_affinity;
        ASSERT_TRUE(na && na->n_terms == 1 && na->terms[0].n_match_fields == 1 &&
                    na->terms[0].n_match_expressions == 0);
        ASSERT_STREQ(na->terms[0].match_fields[0].key, "metadata.name");
        ASSERT_STREQ(na->terms[0].match_fields[0].values[0], "a");
        dp_object_list_free(l);
}
