/* SPDX-License-Identifier: Apache-2.0
 * Encoding: kubectl-style trees (sorted keys, omitempty, canonical
 * quantities), golden output for an allocated claim, and decode/encode round
 * trips over every fixture. */
#include <stdio.h>

#include "harness.h"
#include "model/model.h"

static char *emit_list(const dp_object_list *l, dp_doc_format f) {
        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *n = dp_object_list_encode(s, l);
        if (!n) DP_FAIL("encode failed");
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, n, f);
        dp_doc_set_free(s);
        return dp_strbuf_steal(&sb);
}

static void roundtrip(const char *path) {
        dp_object_list *a = dp_object_list_new(), *b = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_load_file(path, a, &err) < 0) DP_FAIL("%s", err.msg);
        for (int f = 0; f < 2; f++) {
                char *y1 = emit_list(a, f ? DP_DOC_JSON_PRETTY : DP_DOC_YAML);
                while (b->n)
                        dp_object_free(b->items[--b->n]);
                if (dp_model_decode_buffer(y1, strlen(y1), "re", b, &err) < 0)
                        DP_FAIL("%s: re-decode: %s\n%s", path, err.msg, y1);
                ASSERT_EQ(a->n, b->n);
                ASSERT_OK(dp_model_validate(b, &err));
                char *y2 = emit_list(b, f ? DP_DOC_JSON_PRETTY : DP_DOC_YAML);
                ASSERT_STREQ(y2, y1);
                free(y1);
                free(y2);
        }
        dp_object_list_free(a);
        dp_object_list_free(b);
}

TEST(roundtrip_fixtures) {
        roundtrip("data/slices.yaml");
        roundtrip("data/partitions.yaml");
        roundtrip("data/classes.yaml");
        roundtrip("data/claims.yaml");
        roundtrip("data/core.yaml");
        roundtrip("encode/pod-affinity.yaml");
}

static dp_pod *reencoded_pod(const char *path, dp_object_list *a, dp_object_list *b) {
        dp_error err = DP_ERROR_INIT;
        if (dp_model_load_file(path, a, &err) < 0) DP_FAIL("%s", err.msg);
        char *y = emit_list(a, DP_DOC_YAML);
        if (dp_model_decode_buffer(y, strlen(y), "re", b, &err) < 0) DP_FAIL("re-decode: %s\n%s", err.msg, y);
        free(y);
        ASSERT_EQ(b->n, (size_t)1);
        return b->items[0].pod;
}

static void same_term(const dp_pod_affinity_term *x, const dp_pod_affinity_term *y) {
        ASSERT_STREQ(x->topology_key, y->topology_key);
        ASSERT_EQ(x->weight, y->weight);
        ASSERT_EQ(x->n_namespaces, y->n_namespaces);
        ASSERT_EQ(!x->namespace_selector, !y->namespace_selector);
        ASSERT_EQ(x->label_selector->n_match_labels, y->label_selector->n_match_labels);
        ASSERT_EQ(x->label_selector->n_match_expressions, y->label_selector->n_match_expressions);
        ASSERT_EQ(x->n_match_label_keys, y->n_match_label_keys);
        ASSERT_EQ(x->n_mismatch_label_keys, y->n_mismatch_label_keys);
}

/* Pod (anti-)affinity and topology spread constraints are written back, so
 * what is encoded schedules as what was read. */
TEST(pod_affinity_and_spread_kept) {
        dp_object_list *a = dp_object_list_new(), *b = dp_object_list_new();
        const dp_pod *x = reencoded_pod("encode/pod-affinity.yaml", a, b), *p = a->items[0].pod;
        ASSERT_TRUE(x->required_node_affinity != NULL);
        ASSERT_EQ(x->n_pod_affinity, (size_t)1);
        ASSERT_EQ(x->n_preferred_pod_affinity, (size_t)1);
        ASSERT_EQ(x->n_pod_anti_affinity, (size_t)1);
        ASSERT_EQ(x->n_preferred_pod_anti_affinity, (size_t)1);
        same_term(&p->pod_affinity[0], &x->pod_affinity[0]);
        same_term(&p->preferred_pod_affinity[0], &x->preferred_pod_affinity[0]);
        same_term(&p->pod_anti_affinity[0], &x->pod_anti_affinity[0]);
        same_term(&p->preferred_pod_anti_affinity[0], &x->preferred_pod_anti_affinity[0]);
        ASSERT_EQ(x->preferred_pod_affinity[0].weight, 30);
        ASSERT_EQ(x->n_spread, (size_t)2);
        for (size_t i = 0; i < 2; i++) {
                ASSERT_EQ(x->spread[i].max_skew, p->spread[i].max_skew);
                ASSERT_STREQ(x->spread[i].topology_key, p->spread[i].topology_key);
                ASSERT_EQ(x->spread[i].schedule_anyway, p->spread[i].schedule_anyway);
                ASSERT_EQ(x->spread[i].min_domains, p->spread[i].min_domains);
                ASSERT_EQ(x->spread[i].node_affinity_ignore, p->spread[i].node_affinity_ignore);
                ASSERT_EQ(x->spread[i].node_taints_honor, p->spread[i].node_taints_honor);
                ASSERT_EQ(x->spread[i].n_match_label_keys, p->spread[i].n_match_label_keys);
                ASSERT_EQ(x->spread[i].label_selector->n_match_expressions,
                          p->spread[i].label_selector->n_match_expressions);
        }
        ASSERT_EQ(x->spread[0].min_domains, 3);
        ASSERT_TRUE(x->spread[0].node_affinity_ignore && x->spread[0].node_taints_honor);
        dp_object_list_free(a);
        dp_object_list_free(b);
}

/* A claim as the allocator fills it: built in C, encoded. */
TEST(allocated_claim_golden) {
        dp_resource_claim *c = calloc(1, sizeof(*c));
        c->hdr.kind = DP_KIND_RESOURCE_CLAIM;
        c->meta.name = strdup("c");
        c->meta.namespace = strdup("default");
        c->spec.n_requests = 1;
        c->spec.requests = calloc(1, sizeof(dp_device_request));
        c->spec.requests[0].name = strdup("gpu");
        c->spec.requests[0].exactly = calloc(1, sizeof(dp_device_request_spec));
        c->spec.requests[0].exactly->device_class_name = strdup("gpu.example.com");
        c->spec.requests[0].exactly->count = 1;
        dp_allocation_result *a = c->allocation = calloc(1, sizeof(*a));
        a->n_results = 1;
        a->results = calloc(1, sizeof(dp_device_allocation_result));
        dp_device_allocation_result *r = &a->results[0];
        r->request = strdup("gpu");
        r->driver = strdup("gpu.example.com");
        r->pool = strdup("node-a");
        r->device = strdup("gpu-3");
        r->share_id = strdup("0b8f0a52-0d5e-4b8c-9f57-6a1b9c2d3e4f");
        r->n_consumed_capacity = 1;
        r->consumed_capacity = calloc(1, sizeof(dp_named_quantity));
        r->consumed_capacity[0].name = strdup("memory");
        ASSERT_OK(dp_quantity_parse("8192Mi", &r->consumed_capacity[0].value, NULL));
        r->n_skip_node_operations = 1;
        r->skip_node_operations = calloc(1, sizeof(char *));
        r->skip_node_operations[0] = strdup("*");
        r->n_binding_conditions = 1;
        r->binding_conditions = calloc(1, sizeof(char *));
        r->binding_conditions[0] = strdup("example.com/attached");
        r->has_admin_access = true;
        r->admin_access = false;
        r->n_tolerations = 1;
        r->tolerations = calloc(1, sizeof(dp_toleration));
        r->tolerations[0].key = strdup("example.com/ecc");
        r->tolerations[0].op = strdup("Exists");
        a->n_config = 1;
        a->config = calloc(1, sizeof(dp_allocation_config));
        a->config[0].source = DP_CONFIG_SOURCE_CLASS;
        a->config[0].config.driver = strdup("gpu.example.com");
        a->config[0].config.parameters_json = strdup("{\"b\":1,\"a\":[true,\"x\"]}");
        a->node_selector = calloc(1, sizeof(dp_node_selector));
        a->node_selector->n_terms = 1;
        a->node_selector->terms = calloc(1, sizeof(dp_node_selector_term));
        a->node_selector->terms[0].n_match_fields = 1;
        a->node_selector->terms[0].match_fields = calloc(1, sizeof(dp_node_selector_requirement));
        a->node_selector->terms[0].match_fields[0].key = strdup("metadata.name");
        a->node_selector->terms[0].match_fields[0].n_values = 1;
        a->node_selector->terms[0].match_fields[0].values = calloc(1, sizeof(char *));
        a->node_selector->terms[0].match_fields[0].values[0] = strdup("node-a");

        dp_doc_set *s = dp_doc_set_new();
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, dp_resource_claim_encode(s, c), DP_DOC_YAML);
        ASSERT_STREQ(dp_strbuf_str(&sb), "apiVersion: resource.k8s.io/v1\n"
                                         "kind: ResourceClaim\n"
                                         "metadata:\n"
                                         "  name: c\n"
                                         "  namespace: default\n"
                                         "spec:\n"
                                         "  devices:\n"
                                         "    requests:\n"
                                         "    - exactly:\n"
                                         "        allocationMode: ExactCount\n"
                                         "        count: 1\n"
                                         "        deviceClassName: gpu.example.com\n"
                                         "      name: gpu\n"
                                         "status:\n"
                                         "  allocation:\n"
                                         "    devices:\n"
                                         "      config:\n"
                                         "      - opaque:\n"
                                         "          driver: gpu.example.com\n"
                                         "          parameters:\n"
                                         "            a:\n"
                                         "            - true\n"
                                         "            - x\n"
                                         "            b: 1\n"
                                         "        source: FromClass\n"
                                         "      results:\n"
                                         "      - adminAccess: false\n"
                                         "        bindingConditions:\n"
                                         "        - example.com/attached\n"
                                         "        consumedCapacity:\n"
                                         "          memory: 8Gi\n"
                                         "        device: gpu-3\n"
                                         "        driver: gpu.example.com\n"
                                         "        pool: node-a\n"
                                         "        request: gpu\n"
                                         "        shareID: \"0b8f0a52-0d5e-4b8c-9f57-6a1b9c2d3e4f\"\n"
                                         "        skipNodeOperations:\n"
                                         "        - \"*\"\n"
                                         "        tolerations:\n"
                                         "        - key: example.com/ecc\n"
                                         "          operator: Exists\n"
                                         "    nodeSelector:\n"
                                         "      nodeSelectorTerms:\n"
                                         "      - matchFields:\n"
                                         "        - key: metadata.name\n"
                                         "          operator: In\n"
                                         "          values:\n"
                                         "          - node-a\n");
        dp_strbuf_truncate(&sb, 0);
        dp_doc_set_free(s);
        s = dp_doc_set_new();
        dp_doc_emit(&sb, dp_allocation_result_encode(s, a), DP_DOC_JSON_COMPACT);
        ASSERT_CONTAINS(dp_strbuf_str(&sb), "\"consumedCapacity\":{\"memory\":\"8Gi\"}");
        dp_strbuf_done(&sb);
        dp_doc_set_free(s);
        dp_resource_claim_free(c);
}

TEST(v1beta1_slice_encodes_as_v1) {
        const char *y =
                "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                "  driver: d.example.com\n  allNodes: true\n  pool: {name: p, generation: 3, resourceSliceCount: 1}\n"
                "  devices:\n  - name: gpu-0\n    basic:\n      attributes: {b: {bool: false}, a: {int: -3}}\n"
                "      capacity: {memory: {value: 1.5Gi}}\n";
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_decode_buffer(y, strlen(y), "t", l, &err));
        dp_doc_set *s = dp_doc_set_new();
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, dp_resource_slice_encode(s, l->items[0].slice), DP_DOC_YAML);
        ASSERT_STREQ(dp_strbuf_str(&sb), "apiVersion: resource.k8s.io/v1\n"
                                         "kind: ResourceSlice\n"
                                         "metadata:\n"
                                         "  name: s\n"
                                         "spec:\n"
                                         "  allNodes: true\n"
                                         "  devices:\n"
                                         "  - attributes:\n"
                                         "      a:\n"
                                         "        int: -3\n"
                                         "      b:\n"
                                         "        bool: false\n"
                                         "    capacity:\n"
                                         "      memory:\n"
                                         "        value: 1536Mi\n"
                                         "    name: gpu-0\n"
                                         "  driver: d.example.com\n"
                                         "  pool:\n"
                                         "    generation: 3\n"
                                         "    name: p\n"
                                         "    resourceSliceCount: 1\n");
        dp_strbuf_done(&sb);
        dp_doc_set_free(s);
        dp_object_list_free(l);
}

TEST(quantity_node) {
        dp_doc_set *s = dp_doc_set_new();
        dp_quantity q;
        ASSERT_OK(dp_quantity_parse("100", &q, NULL));
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, dp_quantity_encode(s, &q), DP_DOC_JSON_COMPACT);
        ASSERT_STREQ(dp_strbuf_str(&sb), "\"100\"");
        dp_strbuf_done(&sb);
        dp_doc_set_free(s);
}
