/* SPDX-License-Identifier: Apache-2.0
 * Decoding: realistic files (tests/model/data) into typed structs, v1beta1
 * normalisation, List forms, and every structural error path. */
#include <stdio.h>

#include "harness.h"
#include "model/model.h"

static dp_object_list *load(const char *path) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_load_file(path, l, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        if (dp_model_validate(l, &err) < 0) DP_FAIL("%s: validate: %s", path, err.msg);
        return l;
}

static dp_object_list *decode_ok(const char *yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(yaml, strlen(yaml), "t.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        return l;
}

/* Decoding fails with a message containing `want`, and nothing is added. */
static void decode_fails(const char *yaml, const char *want) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        int r = dp_model_decode_buffer(yaml, strlen(yaml), "t.yaml", l, &err);
        if (r >= 0) DP_FAIL("decoding succeeded, expected \"%s\"", want);
        if (!strstr(err.msg, want)) DP_FAIL("got \"%s\"\nwant \"%s\"", err.msg, want);
        ASSERT_EQ(l->n, 0);
        dp_object_list_free(l);
}

TEST(slice_v1) {
        dp_object_list *l = load("data/slices.yaml");
        ASSERT_EQ(l->n, 1);
        dp_resource_slice *s = l->items[0].slice;
        ASSERT_EQ(s->hdr.kind, DP_KIND_RESOURCE_SLICE);
        ASSERT_STREQ(s->hdr.source, "data/slices.yaml");
        ASSERT_STREQ(s->hdr.api_version, "resource.k8s.io/v1");
        ASSERT_STREQ(s->meta.name, "node-a-gpu");
        ASSERT_STREQ(s->meta.resource_version, "1234");
        ASSERT_EQ(s->meta.n_owner_references, 1);
        ASSERT_TRUE(s->meta.owner_references[0].controller);
        ASSERT_STREQ(s->driver, "gpu.example.com");
        ASSERT_STREQ(s->pool_name, "node-a");
        ASSERT_EQ(s->pool_generation, 1);
        ASSERT_EQ(s->pool_resource_slice_count, 1);
        ASSERT_STREQ(s->node_name, "node-a");
        ASSERT_EQ(s->n_devices, 2);
        dp_device *d = &s->devices[0];
        ASSERT_STREQ(d->name, "gpu-0");
        ASSERT_EQ(d->n_attributes, 5);
        ASSERT_STREQ(d->attributes[0].name, "index");
        ASSERT_EQ(d->attributes[0].type, DP_ATTR_INT);
        ASSERT_EQ(d->attributes[0].i, 0);
        ASSERT_EQ(d->attributes[2].type, DP_ATTR_STRING);
        ASSERT_STREQ(d->attributes[2].s, "LATEST-GPU-MODEL");
        ASSERT_EQ(d->attributes[3].type, DP_ATTR_VERSION);
        ASSERT_STREQ(d->attributes[3].s, "1.0.0");
        ASSERT_STREQ(d->attributes[4].name, "nvidia.com/healthy");
        ASSERT_EQ(d->attributes[4].type, DP_ATTR_BOOL);
        ASSERT_TRUE(d->attributes[4].b);
        ASSERT_EQ(d->n_capacity, 2);
        ASSERT_STREQ(d->capacity[0].name, "memory");
        ASSERT_TRUE(d->capacity[0].value.nanos == (__int128)80 * 1024 * 1024 * 1024 * 1000000000);
        ASSERT_EQ(dp_quantity_value(&d->capacity[1].value), 100);
        d = &s->devices[1];
        ASSERT_TRUE(d->allow_multiple_allocations);
        ASSERT_TRUE(d->capacity[0].has_request_policy);
        ASSERT_TRUE(d->capacity[0].has_default);
        ASSERT_TRUE(d->capacity[0].valid_range != NULL);
        ASSERT_TRUE(d->capacity[0].valid_range->has_step);
        ASSERT_FALSE(d->capacity[0].valid_range->has_max);
        ASSERT_EQ(d->n_taints, 1);
        ASSERT_STREQ(d->taints[0].effect, "NoSchedule");
        ASSERT_STREQ(d->taints[0].time_added, "2026-11-01T10:05:00Z");
        dp_object_list_free(l);
}

TEST(partitions_and_counters) {
        dp_object_list *l = load("data/partitions.yaml");
        ASSERT_EQ(l->n, 2);
        dp_resource_slice *c = l->items[0].slice, *d = l->items[1].slice;
        ASSERT_EQ(c->n_shared_counters, 1);
        ASSERT_STREQ(c->shared_counters[0].name, "gpu-0-counters");
        ASSERT_EQ(c->shared_counters[0].n_counters, 2);
        ASSERT_EQ(d->hdr.doc_index, 1);
        ASSERT_EQ(d->n_devices, 3);
        ASSERT_EQ(d->devices[0].n_consumes_counters, 1);
        ASSERT_STREQ(d->devices[0].consumes_counters[0].counter_set, "gpu-0-counters");
        ASSERT_EQ(d->devices[0].consumes_counters[0].n_compatibility_groups, 1);
        ASSERT_STREQ(d->devices[0].consumes_counters[0].compatibility_groups[0], "mig");
        dp_object_list_free(l);
}

TEST(device_class) {
        dp_object_list *l = load("data/classes.yaml");
        ASSERT_EQ(l->n, 2);
        dp_device_class *c = l->items[0].device_class;
        ASSERT_EQ(c->n_selectors, 1);
        ASSERT_STREQ(c->selectors[0].cel_expression, "device.driver == 'gpu.example.com'");
        ASSERT_EQ(c->n_config, 1);
        ASSERT_STREQ(c->config[0].driver, "gpu.example.com");
        ASSERT_CONTAINS(c->config[0].parameters_json, "\"sharing\":{\"strategy\":\"TimeSlicing\"");
        ASSERT_STREQ(c->extended_resource_name, "example.com/gpu");
        dp_object_list_free(l);
}

TEST(claim_and_template) {
        dp_object_list *l = load("data/claims.yaml");
        ASSERT_EQ(l->n, 2);
        dp_resource_claim *c = l->items[0].claim;
        ASSERT_STREQ(c->meta.namespace, "team-a");
        ASSERT_EQ(c->spec.n_requests, 2);
        dp_device_request *q = &c->spec.requests[0];
        ASSERT_TRUE(q->exactly != NULL);
        ASSERT_EQ(q->exactly->count, 2);
        ASSERT_EQ(q->exactly->allocation_mode, DP_ALLOCATION_MODE_EXACT_COUNT);
        ASSERT_EQ(q->exactly->n_tolerations, 1);
        ASSERT_STREQ(q->exactly->tolerations[0].op, "Exists");
        q = &c->spec.requests[1];
        ASSERT_TRUE(q->exactly == NULL);
        ASSERT_EQ(q->n_first_available, 2);
        ASSERT_STREQ(q->first_available[1].name, "a100");
        ASSERT_EQ(q->first_available[1].spec.count, 1); /* defaulted */
        ASSERT_EQ(q->first_available[1].spec.n_capacity_requests, 1);
        ASSERT_EQ(c->spec.n_constraints, 1);
        ASSERT_STREQ(c->spec.constraints[0].match_attribute, "nvidia.com/parentUUID");
        ASSERT_EQ(c->spec.n_config, 1);
        ASSERT_TRUE(c->allocation != NULL);
        ASSERT_EQ(c->allocation->n_results, 2);
        ASSERT_STREQ(c->allocation->results[1].request, "gpu/a100");
        ASSERT_STREQ(c->allocation->results[1].share_id, "8d4b0f5e-6d3c-4f1b-9a7e-2c1d0b9a8f7e");
        ASSERT_EQ(c->allocation->n_config, 1);
        ASSERT_EQ(c->allocation->config[0].source, DP_CONFIG_SOURCE_CLAIM);
        ASSERT_TRUE(c->allocation->node_selector != NULL);
        ASSERT_STREQ(c->allocation->node_selector->terms[0].match_fields[0].key, "metadata.name");
        ASSERT_EQ(c->n_reserved_for, 1);
        dp_resource_claim_template *t = l->items[1].claim_template;
        ASSERT_EQ(t->claim_meta.n_labels, 1);
        ASSERT_EQ(t->spec.n_requests, 1);
        ASSERT_EQ(t->spec.requests[0].exactly->count, 1);
        /* clones are deep and independent */
        dp_resource_claim *cl = dp_resource_claim_clone(c);
        ASSERT_TRUE(cl != NULL);
        ASSERT_STREQ(cl->allocation->results[1].share_id, c->allocation->results[1].share_id);
        ASSERT_TRUE(cl->allocation->results[1].share_id != c->allocation->results[1].share_id);
        dp_resource_claim_free(cl);
        dp_object_list_free(l);
}

TEST(core_list) {
        dp_object_list *l = load("data/core.yaml");
        ASSERT_EQ(l->n, 4);
        dp_node *n = l->items[0].node;
        ASSERT_EQ(n->hdr.item_index, 0);
        ASSERT_EQ(n->n_taints, 1);
        ASSERT_EQ(n->n_capacity, 4);
        ASSERT_STREQ(n->allocatable[0].name, "cpu");
        ASSERT_EQ(dp_quantity_milli_value(&n->allocatable[0].value), 7800);
        ASSERT_EQ(l->items[1].hdr->kind, DP_KIND_NAMESPACE);
        dp_pod *p = l->items[2].pod;
        ASSERT_EQ(p->hdr.item_index, 2);
        ASSERT_STREQ(p->scheduler_name, "default-scheduler");
        ASSERT_TRUE(p->has_priority);
        ASSERT_EQ(p->priority, 100);
        ASSERT_EQ(p->n_node_selector, 1);
        ASSERT_TRUE(p->required_node_affinity != NULL);
        ASSERT_EQ(p->required_node_affinity->terms[0].match_expressions[0].n_values, 2);
        ASSERT_EQ(p->n_init_containers, 1);
        ASSERT_EQ(p->n_containers, 1);
        ASSERT_EQ(p->containers[0].n_limits, 2);
        ASSERT_EQ(p->containers[0].n_claims, 1);
        ASSERT_STREQ(p->resource_claims[0].resource_claim_template_name, "single-gpu");
        ASSERT_STREQ(p->phase, "Pending");
        dp_pod_group *g = l->items[3].pod_group;
        ASSERT_EQ(g->min_member, 4);
        dp_object o = dp_object_list_find(l, DP_KIND_POD, "team-a", "web-0");
        ASSERT_TRUE(o.pod == p);
        ASSERT_EQ(dp_object_list_count(l, DP_KIND_NODE), 1);
        dp_object_list_free(l);
}

TEST(v1beta1_normalised) {
        dp_object_list *l = decode_ok("apiVersion: resource.k8s.io/v1beta1\n"
                                      "kind: ResourceSlice\n"
                                      "metadata: {name: s}\n"
                                      "spec:\n"
                                      "  driver: d.example.com\n"
                                      "  nodeName: n\n"
                                      "  pool: {name: p, generation: 0, resourceSliceCount: 1}\n"
                                      "  devices:\n"
                                      "  - name: gpu-0\n"
                                      "    basic:\n"
                                      "      attributes: {model: {string: A100}}\n"
                                      "      capacity: {memory: {value: 40Gi}}\n"
                                      "      consumesCounters:\n"
                                      "      - counterSet: c\n"
                                      "        counters: {memory: {value: 1Gi}}\n"
                                      "---\n"
                                      "apiVersion: resource.k8s.io/v1beta1\n"
                                      "kind: ResourceClaim\n"
                                      "metadata: {name: c, namespace: default}\n"
                                      "spec:\n"
                                      "  devices:\n"
                                      "    requests:\n"
                                      "    - name: gpu\n"
                                      "      deviceClassName: gpu.example.com\n"
                                      "      allocationMode: All\n"
                                      "    - name: any\n"
                                      "      firstAvailable:\n"
                                      "      - {name: a, deviceClassName: x}\n");
        ASSERT_EQ(l->n, 2);
        dp_resource_slice *s = l->items[0].slice;
        ASSERT_EQ(s->devices[0].n_attributes, 1);
        ASSERT_EQ(s->devices[0].n_capacity, 1);
        ASSERT_EQ(s->devices[0].n_consumes_counters, 1);
        dp_resource_claim *c = l->items[1].claim;
        ASSERT_TRUE(c->spec.requests[0].exactly != NULL);
        ASSERT_STREQ(c->spec.requests[0].exactly->device_class_name, "gpu.example.com");
        ASSERT_EQ(c->spec.requests[0].exactly->allocation_mode, DP_ALLOCATION_MODE_ALL);
        ASSERT_EQ(c->spec.requests[0].exactly->count, 0);
        ASSERT_TRUE(c->spec.requests[1].exactly == NULL);
        ASSERT_EQ(c->spec.requests[1].n_first_available, 1);
        dp_object_list_free(l);
}

TEST(typed_list_and_json) {
        dp_object_list *l = decode_ok("{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"DeviceClassList\", "
                                      "\"metadata\": {\"resourceVersion\": \"7\"}, \"items\": ["
                                      "{\"metadata\": {\"name\": \"a\"}, \"spec\": {}},"
                                      "{\"metadata\": {\"name\": \"b\"}}]}");
        ASSERT_EQ(l->n, 2);
        ASSERT_EQ(l->items[1].hdr->kind, DP_KIND_DEVICE_CLASS);
        ASSERT_STREQ(l->items[1].hdr->api_version, "resource.k8s.io/v1");
        ASSERT_EQ(l->items[1].hdr->item_index, 1);
        dp_object_list_free(l);
}

TEST(taint_rules) {
        dp_object_list *l = decode_ok("apiVersion: resource.k8s.io/v1beta2\n"
                                      "kind: DeviceTaintRule\n"
                                      "metadata: {name: r}\n"
                                      "spec:\n"
                                      "  deviceSelector: {driver: gpu.example.com, pool: node-a, device: gpu-3}\n"
                                      "  taint: {key: example.com/broken, effect: NoExecute}\n"
                                      "---\n"
                                      "apiVersion: resource.k8s.io/v1alpha3\n"
                                      "kind: DeviceTaintRule\n"
                                      "metadata: {name: r2}\n"
                                      "spec:\n"
                                      "  deviceSelector:\n"
                                      "    deviceClassName: gpu.example.com\n"
                                      "    selectors: [{cel: {expression: 'true'}}]\n"
                                      "  taint: {key: k, value: v, effect: None}\n");
        ASSERT_EQ(l->n, 2);
        dp_device_taint_rule *t = l->items[0].taint_rule;
        ASSERT_TRUE(t->has_device_selector);
        ASSERT_STREQ(t->device, "gpu-3");
        ASSERT_STREQ(t->taint.effect, "NoExecute");
        ASSERT_EQ(l->items[1].taint_rule->n_selectors, 1);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_validate(l, &err));
        dp_object_list_free(l);
        decode_fails("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                     "spec:\n  deviceSelector: {deviceClassName: x}\n",
                     "t.yaml: DeviceTaintRule r: spec.deviceSelector: unknown field \"deviceClassName\" (line 5)");
}

/* ---- structural errors ---- */

static const char *slice_head = "apiVersion: resource.k8s.io/v1\n"
                                "kind: ResourceSlice\n"
                                "metadata: {name: node-a-gpu}\n"
                                "spec:\n"
                                "  driver: gpu.example.com\n"
                                "  nodeName: node-a\n"
                                "  pool: {name: node-a, generation: 1, resourceSliceCount: 1}\n";

static void slice_fails(const char *devices, const char *want) {
        char buf[4096];
        snprintf(buf, sizeof(buf), "%s%s", slice_head, devices);
        decode_fails(buf, want);
}

TEST(errors_unknown_field) {
        slice_fails("  devices:\n"
                    "  - {name: a}\n  - {name: b}\n  - {name: c}\n"
                    "  - name: d\n"
                    "    attributes:\n"
                    "      model: {strng: x}\n",
                    "t.yaml: ResourceSlice node-a-gpu: spec.devices[3].attributes.model: unknown field \"strng\" "
                    "(line 14)");
        slice_fails("  devicez: []\n", "t.yaml: ResourceSlice node-a-gpu: spec: unknown field \"devicez\"");
        slice_fails("  devices:\n  - name: a\n    attributes:\n      nvidia.com/model: {strng: x}\n",
                    "spec.devices[0].attributes[nvidia.com/model]: unknown field \"strng\"");
        decode_fails("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, bogus: 1}\n",
                     "t.yaml: Pod ns/p: metadata: unknown field \"bogus\" (line 3)");
        decode_fails(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
                "      limitz: {}\n",
                "Pod p: spec.containers[0].resources: unknown field \"limitz\"");
        /* v1 has no `basic` wrapper; v1beta1 has nothing else */
        slice_fails("  devices:\n  - name: a\n    basic: {}\n", "spec.devices[0]: unknown field \"basic\"");
        decode_fails("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                     "  devices:\n  - name: a\n    attributes: {}\n",
                     "spec.devices[0]: unknown field \"attributes\"");
}

TEST(errors_kind_and_version) {
        /* a missing apiVersion takes the kind's preferred version (see decode.c) */
        dp_object_list *l = decode_ok("kind: Pod\nmetadata: {name: x}\n");
        ASSERT_STREQ(l->items[0].hdr->api_version, "v1");
        dp_object_list_free(l);
        decode_fails("apiVersion: v1\nmetadata: {name: x}\n", "t.yaml: document 1: kind: required");
        decode_fails("- a\n- b\n", "t.yaml: document 1: expected an object (a map), got list");
        decode_fails("apiVersion: v1\nkind: List\nfoo: 1\n", "List: unknown field \"foo\"");
}

/* Another group's kind of a modelled name (Volcano's Job) and versions
 * devplane does not read are skipped with the unknown kinds, never decoded as
 * the built-in kind (issue 22). Volcano's and KAI's PodGroups are read as
 * minMember gangs, the rest of their spec accepted, their status not read. */
TEST(foreign_api_versions_skipped) {
        dp_object_list *l =
                decode_ok("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
                          "spec: {minAvailable: 2, tasks: [{replicas: 2}]}\n---\n"
                          "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: g}\n"
                          "spec: {minMember: 2, queue: q, subGroups: [{name: w, minMember: 2}]}\n"
                          "status: {schedulingConditions: []}\n---\n"
                          "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v}\n"
                          "spec: {minMember: 3, minResources: {cpu: \"2\"}, queue: default}\n"
                          "status: {phase: Inqueue, running: 1}\n---\n"
                          "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: s}\n"
                          "spec: {minSubGroup: 1}\n---\n"
                          "apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: w}\n"
                          "spec: {podGroupTemplateRef: x}\n---\n"
                          "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceSlice\nmetadata: {name: x}\n");
        ASSERT_EQ(l->n, (size_t)3);
        const dp_pod_group *g = l->items[0].pod_group, *v = l->items[1].pod_group, *sg = l->items[2].pod_group;
        ASSERT_EQ(dp_pod_group_api_of(g), DP_POD_GROUP_KAI);
        ASSERT_TRUE(g->gang);
        ASSERT_EQ(g->min_member, 2);
        ASSERT_EQ(dp_pod_group_api_of(v), DP_POD_GROUP_VOLCANO);
        ASSERT_EQ(v->min_member, 3);
        ASSERT_EQ(v->n_min_resources, (size_t)1);
        ASSERT_EQ(sg->min_member, 0); /* KAI's sub-group gang: no gang of the whole group */
        ASSERT_STREQ(g->queue, "q"); /* their queues are read for src/queue's policies */
        ASSERT_STREQ(v->queue, "default");
        ASSERT_TRUE(!sg->queue && !g->priority_class_name && !g->preemptibility);
        for (size_t i = 0; i < l->n; i++) {
                dp_error err = DP_ERROR_INIT;
                ASSERT_OK(dp_object_validate(l->items[i], &err));
        }
        ASSERT_EQ(l->n_skipped, (size_t)3);
        ASSERT_STREQ(l->skipped[0].kind, "Job");
        ASSERT_STREQ(l->skipped[0].api_version, "batch.volcano.sh/v1alpha1");
        ASSERT_STREQ(l->skipped[1].api_version, "scheduling.k8s.io/v1alpha3");
        ASSERT_STREQ(l->skipped[2].kind, "ResourceSlice");
        dp_object_list_free(l);
        /* their specs are decoded strictly; a field of another API is refused */
        decode_fails("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v}\n"
                     "spec: {minMember: 2, subGroups: []}\n",
                     "PodGroup v: spec: unknown field \"subGroups\"");
        /* a pod joins by the rule of its group's API only */
        l = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {scheduling.k8s.io/group-name: v}}\n"
                      "spec: {containers: [{name: c, image: x}]}\n---\n"
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: q, annotations: {pod-group-name: v}}\n"
                      "spec: {containers: [{name: c, image: x}]}\n---\n"
                      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v}\n"
                      "spec: {minMember: 2}\n");
        ASSERT_STREQ(dp_pod_group_name(l->items[0].pod), "v");
        ASSERT_STREQ(dp_pod_group_name(l->items[1].pod), "v");
        ASSERT_TRUE(dp_pod_group_has_member(l->items[2].pod_group, l->items[0].pod));
        ASSERT_TRUE(!dp_pod_group_has_member(l->items[2].pod_group, l->items[1].pod));
        dp_object_list_free(l);
}

/* Kinds outside the model (ConfigMap, ServiceAccount, CRDs) are skipped and
 * counted once per kind and apiVersion, never an error. */
TEST(unknown_kinds_skipped) {
        dp_object_list *l =
                decode_ok("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
                          "  metadata: {name: ok}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
                          "  data: {x: y}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n"
                          "- apiVersion: resource.nvidia.com/v1beta1\n  kind: ComputeDomain\n"
                          "  metadata: {name: cd}\n  spec: {numNodes: 4}\n");
        ASSERT_EQ(l->n, (size_t)1);
        ASSERT_EQ(l->n_skipped, (size_t)2);
        ASSERT_STREQ(l->skipped[0].kind, "ConfigMap");
        ASSERT_STREQ(l->skipped[0].api_version, "v1");
        ASSERT_EQ(l->skipped[0].count, (size_t)2);
        ASSERT_STREQ(l->skipped[0].first, "t.yaml: document 1");
        ASSERT_STREQ(l->skipped[1].kind, "ComputeDomain");
        dp_object_list_free(l);
        /* a list of an unknown kind: its items are skipped */
        l = decode_ok("apiVersion: v1\nkind: FooList\nitems:\n- metadata: {name: a}\n");
        ASSERT_EQ(l->n, (size_t)0);
        ASSERT_EQ(l->n_skipped, (size_t)1);
        ASSERT_STREQ(l->skipped[0].kind, "Foo");
        dp_object_list_free(l);
}

/* Owners other than Deployment: their pods, as their controllers make them. */
TEST(owners) {
        dp_object_list *l = decode_ok(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  parallelism: 4\n"
                "  completions: 3\n  backoffLimit: 2\n  template:\n    spec:\n      restartPolicy: Never\n"
                "      containers: [{name: c, image: i}]\nstatus: {active: 3, uncountedTerminatedPods: {}}\n---\n"
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  replicas: 2\n"
                "  serviceName: s\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
                "    spec: {containers: [{name: c, image: i}]}\n---\n"
                "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, ownerReferences: [{apiVersion: apps/v1, "
                "kind: Deployment, name: d, uid: x}]}\nspec:\n  replicas: 1\n  template:\n"
                "    spec: {containers: [{name: c, image: i}]}\n---\n"
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 5\n  template:\n"
                "    spec: {containers: [{name: c, image: i}]}\n---\n"
                "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec:\n  template:\n"
                "    spec:\n      nodeSelector: {gpu: \"yes\"}\n      containers: [{name: c, image: i}]\n");
        ASSERT_EQ(l->n, (size_t)5);
        ASSERT_EQ(l->items[0].hdr->kind, DP_KIND_JOB);
        ASSERT_EQ(l->items[0].deployment->replicas, 3); /* min(parallelism, completions) */
        ASSERT_EQ(l->items[1].hdr->kind, DP_KIND_STATEFUL_SET);
        ASSERT_EQ(l->items[4].hdr->kind, DP_KIND_DAEMON_SET);
        dp_node a = {.hdr = {.kind = DP_KIND_NODE}, .meta = {.name = (char *)"a"}};
        dp_kv gpu = {(char *)"gpu", (char *)"yes"};
        dp_node b = {.hdr = {.kind = DP_KIND_NODE}, .meta = {.name = (char *)"b", .labels = &gpu, .n_labels = 1}};
        const dp_node *nodes[] = {&a, &b};
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_expand_workloads(l, nodes, 2, &err));
        /* 3 job pods, 2 stateful, 1 from the ReplicaSet (its Deployment is
         * not expanded: the ReplicaSet stands for it), 1 daemon pod on b */
        ASSERT_EQ(l->n, (size_t)(5 + 3 + 2 + 1 + 1));
        ASSERT_STREQ(l->items[5].pod->meta.name, "j-0");
        ASSERT_STREQ(l->items[5].pod->meta.namespace, "ns");
        ASSERT_STREQ(l->items[5].pod->meta.owner_references[0].kind, "Job");
        ASSERT_STREQ(l->items[5].pod->meta.owner_references[0].api_version, "batch/v1");
        ASSERT_STREQ(l->items[8].pod->meta.name, "s-0");
        ASSERT_STREQ(l->items[10].pod->meta.name, "rs-0");
        ASSERT_STREQ(l->items[11].pod->meta.name, "ds-b");
        const dp_node_selector *na = l->items[11].pod->required_node_affinity;
        ASSERT_TRUE(na && na->n_terms == 1 && na->terms[0].n_match_fields == 1);
        ASSERT_STREQ(na->terms[0].match_fields[0].values[0], "b");
        dp_object_list_free(l);
        /* pods already in the input stand for their owner */
        l = decode_ok("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n"
                      "    spec: {containers: [{name: c, image: i}]}\n---\n"
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: j-abcde, ownerReferences: [{apiVersion: batch/v1, "
                      "kind: Job, name: j, uid: u}]}\nspec: {containers: [{name: c, image: i}]}\n");
        ASSERT_OK(dp_model_expand_workloads(l, NULL, 0, &err));
        ASSERT_EQ(l->n, (size_t)2);
        dp_object_list_free(l);
        /* a Deployment's pods without their ReplicaSet (owner "<deployment>-<hash>",
         * label pod-template-hash) stand for the Deployment too; a ReplicaSet
         * name that does not end in the pod's hash does not */
#define DEP_AND_POD(hash)                                                                                              \
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"                         \
        "  template:\n    spec: {containers: [{name: c, image: i}]}\n---\n"                                            \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web-7d9f-x1, labels: {pod-template-hash: " hash "}, "             \
        "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d9f, uid: u}]}\n"                        \
        "spec: {containers: [{name: c, image: i}]}\n"
        l = decode_ok(DEP_AND_POD("7d9f"));
        ASSERT_OK(dp_model_expand_workloads(l, NULL, 0, &err));
        ASSERT_EQ(l->n, (size_t)2);
        dp_object_list_free(l);
        l = decode_ok(DEP_AND_POD("other"));
        ASSERT_OK(dp_model_expand_workloads(l, NULL, 0, &err));
        ASSERT_EQ(l->n, (size_t)5);
        dp_object_list_free(l);
#undef DEP_AND_POD
}

/* generateName: a name of 5 more characters, the same on every run, one per
 * object even when objects are identical (scheduler_perf's templates). */
TEST(generate_names) {
        const char *y = "apiVersion: v1\nkind: Pod\nmetadata: {generateName: perf-, namespace: n}\n"
                        "spec: {containers: [{name: c, image: i}]}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {generateName: perf-, namespace: n}\n"
                        "spec: {containers: [{name: c, image: i}]}\n---\n"
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {generateName: claim-}\n"
                        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}\n";
        char first[3][64];
        for (int run = 0; run < 2; run++) {
                dp_object_list *l = decode_ok(y);
                dp_error err = DP_ERROR_INIT;
                ASSERT_OK(dp_model_generate_names(l, &err));
                ASSERT_OK(dp_model_validate(l, &err));
                for (int i = 0; i < 3; i++) {
                        const char *n = dp_object_meta_of(l->items[i])->name;
                        ASSERT_TRUE(n != NULL);
                        ASSERT_EQ(strlen(n), strlen(i < 2 ? "perf-" : "claim-") + 5);
                        if (run == 0)
                                snprintf(first[i], sizeof(first[i]), "%s", n);
                        else
                                ASSERT_STREQ(n, first[i]);
                }
                ASSERT_TRUE(strcmp(first[0], first[1]) != 0);
                dp_object_list_free(l);
        }
        /* a long prefix is cut as the API server cuts it */
        dp_object_list *l = decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {generateName: "
                                      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-}\n"
                                      "spec: {containers: [{name: c, image: i}]}\n");
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_generate_names(l, &err));
        ASSERT_EQ(strlen(l->items[0].pod->meta.name), (size_t)63);
        dp_object_list_free(l);
}

/* Document numbers count within each file. */
TEST(document_numbers_per_file) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *a = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\n"
                        "metadata: {name: b}\n";
        const char *b = "apiVersion: v1\nkind: Node\nmetadata: {name: c}\n---\n- not an object\n";
        ASSERT_OK(dp_model_decode_buffer(a, strlen(a), "a.yaml", l, &err));
        ASSERT_TRUE(dp_model_decode_buffer(b, strlen(b), "b.yaml", l, &err) < 0);
        ASSERT_CONTAINS(err.msg, "b.yaml: document 2:");
        dp_object_list_free(l);
}

TEST(errors_malformed_yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *bad = "apiVersion: v1\nkind: Node\nmetadata: {name: [unclosed\n";
        ASSERT_TRUE(dp_model_decode_buffer(bad, strlen(bad), "bad.yaml", l, &err) < 0);
        ASSERT_CONTAINS(err.msg, "bad.yaml:");
        ASSERT_EQ(l->n, 0);
        dp_object_list_free(l);
}

TEST(errors_types_and_oneof) {
        slice_fails("  devices:\n  - name: a\n    attributes:\n      n: {int: x}\n",
                    "spec.devices[0].attributes.n.int: expected an integer, got string");
        slice_fails("  devices:\n  - name: a\n    attributes:\n      n: {int: 1, string: x}\n",
                    "spec.devices[0].attributes.n: exactly one of int, bool, string, version");
        slice_fails("  devices:\n  - name: a\n    capacity:\n      memory: {value: 1Gx}\n",
                    "spec.devices[0].capacity.memory.value: invalid quantity \"1Gx\"");
        slice_fails("  devices: {}\n", "spec.devices: expected a list, got map");
        decode_fails("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
                     "    requests:\n    - name: r\n",
                     "spec.devices.requests[0]: exactly one of exactly or firstAvailable must be set");
        decode_fails("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
                     "    constraints:\n    - {matchAttribute: a/b, distinctAttribute: a/c}\n",
                     "constraints[0]: exactly one of matchAttribute or distinctAttribute");
        decode_fails("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
                     "    requests:\n    - name: r\n      exactly: {deviceClassName: x, allocationMode: Some}\n",
                     "allocationMode: unsupported value \"Some\"");
        decode_fails("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n  - name: a\n",
                     "spec.resourceClaims[0]: exactly one of resourceClaimName or resourceClaimTemplateName");
        decode_fails("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  unschedulable: yes-please\n",
                     "spec.unschedulable: expected a boolean, got string");
        decode_fails("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: 99999999999\n",
                     "spec.priority: integer 99999999999 does not fit in 32 bits");
}

TEST(all_or_nothing) {
        dp_object_list *l = decode_ok("apiVersion: v1\nkind: Namespace\nmetadata: {name: keep}\n");
        ASSERT_EQ(l->n, 1);
        dp_error err = DP_ERROR_INIT;
        const char *y = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\n"
                        "metadata: {name: b, x: 1}\n";
        ASSERT_TRUE(dp_model_decode_buffer(y, strlen(y), "t.yaml", l, &err) < 0);
        ASSERT_EQ(l->n, 1);
        ASSERT_CONTAINS(err.msg, "Namespace b");
        dp_object_list_free(l);
}

TEST(list_attributes) {
        dp_object_list *l =
                decode_ok("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                          "  driver: d.example.com\n  nodeName: n\n"
                          "  pool: {name: p, generation: 0, resourceSliceCount: 1}\n"
                          "  devices:\n  - name: a\n    attributes:\n"
                          "      i: {ints: [1, -2]}\n      b: {bools: [true, false]}\n"
                          "      s: {strings: [x, y]}\n      v: {versions: [1.0.0]}\n");
        dp_device *d = &l->items[0].slice->devices[0];
        ASSERT_EQ(d->attributes[0].type, DP_ATTR_INTS);
        ASSERT_EQ(d->attributes[0].n, 2);
        ASSERT_EQ(d->attributes[0].ints[1], -2);
        ASSERT_EQ(d->attributes[1].type, DP_ATTR_BOOLS);
        ASSERT_FALSE(d->attributes[1].bools[1]);
        ASSERT_EQ(d->attributes[2].type, DP_ATTR_STRINGS);
        ASSERT_STREQ(d->attributes[2].strs[1], "y");
        ASSERT_EQ(d->attributes[3].type, DP_ATTR_VERSIONS);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_validate(l, &err));
        dp_object_list_free(l);
        decode_fails("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                     "  devices:\n  - name: a\n    attributes:\n      i: {ints: [1, x]}\n",
                     "spec.devices[0].attributes.i.ints[1]: expected an integer, got string");
}

TEST(lookups) {
        dp_object_list *l = load("data/slices.yaml");
        const dp_resource_slice *s = l->items[0].slice;
        const dp_device *d = dp_resource_slice_find_device(s, "gpu-0");
        ASSERT_TRUE(d == &s->devices[0]);
        ASSERT_TRUE(dp_resource_slice_find_device(s, "gpu-9") == NULL);
        ASSERT_TRUE(dp_device_find_attribute(d, s->driver, "gpu.example.com/model") == &d->attributes[2]);
        ASSERT_TRUE(dp_device_find_attribute(d, s->driver, "model") == &d->attributes[2]);
        ASSERT_TRUE(dp_device_find_attribute(d, s->driver, "other.com/model") == NULL);
        ASSERT_TRUE(dp_device_find_attribute(d, s->driver, "nvidia.com/healthy") == &d->attributes[4]);
        ASSERT_TRUE(dp_device_find_attribute(d, s->driver, "healthy") == NULL);
        ASSERT_TRUE(dp_device_find_capacity(d, s->driver, "gpu.example.com/memory") == &d->capacity[0]);
        dp_object_list_free(l);
        l = load("data/core.yaml");
        ASSERT_STREQ(dp_pod_group_name(l->items[2].pod), "gang-a");
        ASSERT_STREQ(dp_object_label(l->items[0], "gpu"), "true");
        ASSERT_TRUE(dp_object_label(l->items[0], "nope") == NULL);
        dp_object_list_free(l);
}

TEST(pod_extended_status) {
        dp_object_list *l = load("data/core.yaml");
        dp_pod *p = l->items[2].pod;
        ASSERT_EQ(p->n_pod_limits, 1);
        ASSERT_STREQ(p->extended_resource_claim_name, "web-0-extended-resources-abcde");
        ASSERT_EQ(p->n_extended_resource_mappings, 1);
        ASSERT_STREQ(p->extended_resource_mappings[0].request_name, "container-0-request-0");
        dp_object_list_free(l);
}

TEST(attribute_two_lists) {
        decode_fails("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                     "  devices:\n  - name: a\n    attributes:\n      x: {strings: [a], ints: [1, 2, 3]}\n",
                     "spec.devices[0].attributes.x: exactly one of int, bool, string, version");
}

/* Service and ReplicationController: spec.selector only (PodTopologySpread's
 * default constraints); every other field passes unread, nothing is skipped. */
TEST(service_and_rc_selectors) {
        dp_object_list *l = decode_ok(
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec:\n"
                "  selector: {app: web, tier: fe}\n  ports: [{port: 80}]\n  type: ClusterIP\n"
                "status: {loadBalancer: {}}\n---\n"
                "apiVersion: v1\nkind: Service\nmetadata: {name: headless}\nspec: {clusterIP: None}\n---\n"
                "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: db}\nspec:\n  replicas: 2\n"
                "  selector: {app: db}\n  template:\n    spec: {containers: [{name: c, image: i}]}\n");
        ASSERT_EQ(l->n, (size_t)3);
        ASSERT_EQ(l->n_skipped, (size_t)0);
        ASSERT_EQ(l->items[0].hdr->kind, DP_KIND_SERVICE);
        ASSERT_STREQ(dp_kind_name(DP_KIND_SERVICE), "Service");
        ASSERT_EQ(l->items[0].deployment->n_selector_match_labels, (size_t)2);
        ASSERT_STREQ(dp_kv_get(l->items[0].deployment->selector_match_labels, 2, "tier"), "fe");
        ASSERT_EQ(l->items[1].deployment->n_selector_match_labels, (size_t)0);
        ASSERT_EQ(l->items[2].hdr->kind, DP_KIND_REPLICATION_CONTROLLER);
        ASSERT_STREQ(dp_kv_get(l->items[2].deployment->selector_match_labels, 1, "app"), "db");
        ASSERT_TRUE(l->items[2].deployment->template_ == NULL); /* stands up no pods */
        dp_object_list_free(l);
}

/* Extension tables chain, and two kinds of one name in different groups
 * (Volcano's and KAI's Queue) each go to the table whose versions hold the
 * object's apiVersion; a third group's is skipped as an unknown kind. */
static int ext_tag_decode(struct dctx *c, const dp_doc_node *root, dp_object o, struct dp_object_list *out) {
        (void)c, (void)root, (void)o, (void)out;
        return 0;
}
static void ext_tag_done(dp_object o) {
        (void)o;
}
TEST(ext_tables_chain_by_api_group) {
        static const char *const va[] = {"scheduling.volcano.sh/v1beta1", NULL};
        static const char *const vb[] = {"scheduling.run.ai/v2", NULL};
        static const dp_model_ext_kind ka[] = {
                {"Queue", va, sizeof(dp_ext_object), false, ext_tag_decode, ext_tag_done}};
        static const dp_model_ext_kind kb[] = {
                {"Queue", vb, sizeof(dp_ext_object), false, ext_tag_decode, ext_tag_done}};
        static const dp_model_ext b = {kb, 1, NULL};
        static const dp_model_ext a = {ka, 1, &b};
        dp_object_list *l = dp_object_list_new();
        l->ext = &a;
        dp_error err = DP_ERROR_INIT;
        const char *y = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: k}\n---\n"
                        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: v}\n---\n"
                        "apiVersion: example.com/v1\nkind: Queue\nmetadata: {name: x}\n";
        if (dp_model_decode_buffer(y, strlen(y), "t.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        ASSERT_EQ(l->n, (size_t)2);
        ASSERT_TRUE(l->items[0].ext->ext == &kb[0]);
        ASSERT_TRUE(l->items[1].ext->ext == &ka[0]);
        ASSERT_EQ(l->n_skipped, (size_t)1);
        ASSERT_STREQ(l->skipped[0].api_version, "example.com/v1");
        dp_object_list_free(l);
}
