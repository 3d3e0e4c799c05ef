/* SPDX-License-Identifier: Apache-2.0
 * Validation: the Kubernetes limits (each -E2BIG naming its constant), name
 * rules, one-of rules, pool rules across slices, and the bad-input cases of
 * scenario 16 that belong to objects. */
#include <stdio.h>

#include "base/strbuf.h"
#include "harness.h"
#include "model/model.h"
#include "model/validate.h"

/* Decode (must succeed) then validate; returns the code, message in err. */
static int check(const char *yaml, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        int r = dp_model_decode_buffer(yaml, strlen(yaml), "in.yaml", l, err);
        if (r < 0) DP_FAIL("decode failed: %s", err->msg);
        r = dp_model_validate(l, err);
        dp_object_list_free(l);
        return r;
}

static void valid(const char *yaml) {
        dp_error err = DP_ERROR_INIT;
        if (check(yaml, &err) < 0) DP_FAIL("unexpected error: %s\n%s", err.msg, yaml);
}

static void invalid(const char *yaml, int code, const char *want) {
        dp_error err = DP_ERROR_INIT;
        int r = check(yaml, &err);
        if (r != code) DP_FAIL("got %d (%s), want %d\n%s", r, err.msg, code, yaml);
        if (!strstr(err.msg, want)) DP_FAIL("got \"%s\"\nwant \"%s\"", err.msg, want);
}

/* A slice named `name` in pool `pool` with the given spec tail. */
static char *slice(const char *name, const char *pool, int gen, int count, const char *tail) {
        return dp_asprintf("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: %s}\nspec:\n"
                           "  driver: gpu.example.com\n  nodeName: node-a\n"
                           "  pool: {name: %s, generation: %d, resourceSliceCount: %d}\n%s",
                           name, pool, gen, count, tail);
}

static char *devices(int n, const char *extra) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "  devices:\n");
        for (int i = 0; i < n; i++)
                dp_strbuf_printf(&sb, "  - name: gpu-%d\n%s", i, i == 0 && extra ? extra : "");
        return dp_strbuf_steal(&sb);
}

static void slice_case(const char *tail, int code, const char *want) {
        char *y = slice("node-a-gpu", "node-a", 1, 1, tail);
        if (code == 0)
                valid(y);
        else
                invalid(y, code, want);
        free(y);
}

TEST(device_count_limits) {
        char *d = devices(128, NULL);
        slice_case(d, 0, NULL);
        free(d);
        d = devices(129, NULL);
        slice_case(d, -E2BIG,
                   "in.yaml: ResourceSlice node-a-gpu: spec.devices: must have at most 128 entries, got 129 "
                   "(ResourceSliceMaxDevices)");
        free(d);
        d = devices(64, "    taints: [{key: k, effect: NoSchedule}]\n");
        slice_case(d, 0, NULL);
        free(d);
        d = devices(65, "    taints: [{key: k, effect: NoSchedule}]\n");
        slice_case(d, -E2BIG,
                   "spec.devices: must have at most 64 entries, got 65 "
                   "(ResourceSliceMaxDevicesWithTaintsOrConsumesCounters");
        free(d);
}

TEST(device_rules) {
        slice_case("  devices:\n  - name: gpu-0\n  - name: gpu-1\n  - name: gpu-0\n", -EINVAL,
                   "spec.devices[2].name: duplicate device name in the slice");
        slice_case("  devices:\n  - name: GPU_0\n", -EINVAL,
                   "spec.devices[0].name: \"GPU_0\": a lowercase RFC 1123 label");
        slice_case("  devices:\n  - name: a\n    attributes: {\"1model\": {int: 1}}\n", -EINVAL,
                   "spec.devices[0].attributes: \"1model\": the name must be a C identifier");
        slice_case("  devices:\n  - name: a\n    attributes: {\"Example.com/x\": {int: 1}}\n", -EINVAL,
                   "the domain must be a DNS subdomain");
        slice_case("  devices:\n  - name: a\n    attributes: {s: {string: "
                   "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}\n",
                   -E2BIG,
                   "spec.devices[0].attributes.s: must be at most 64 characters, got 65 "
                   "(DeviceAttributeMaxValueLength)");
        slice_case("  devices:\n  - name: a\n    attributes: {v: {version: \"1.0\"}}\n", -EINVAL,
                   "attributes.v.version: must be a semantic version");
        slice_case("  devices:\n  - name: a\n    attributes: {v: {version: 1.0.0-rc.1+build.5}}\n", 0, NULL);
        slice_case("  devices:\n  - name: a\n    attributes: {v: {version: 01.0.0}}\n", -EINVAL, "semantic version");
        slice_case("  devices:\n  - name: a\n    taints: [{key: k, effect: Sometimes}]\n", -EINVAL,
                   "spec.devices[0].taints[0].effect: must be NoSchedule, NoExecute or None");
        slice_case("  devices:\n  - name: a\n    taints: [{key: k, effect: None}]\n", 0, NULL);
        slice_case(
                "  devices:\n  - name: a\n    bindingConditions: [a, b, c, d, e]\n    bindingFailureConditions: [f]\n",
                -E2BIG, "bindingConditions: must have at most 4 entries, got 5 (BindingConditionsMaxSize)");
        slice_case("  devices:\n  - name: a\n    nodeName: node-a\n", -EINVAL,
                   "may only be set when spec.perDeviceNodeSelection is true");
        /* 33 attributes and capacities */
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "  devices:\n  - name: a\n    attributes:\n");
        for (int i = 0; i < 30; i++)
                dp_strbuf_printf(&sb, "      a%d: {int: %d}\n", i, i);
        dp_strbuf_puts(&sb, "    capacity:\n      c0: {value: 1}\n      c1: {value: 1}\n");
        slice_case(dp_strbuf_str(&sb), 0, NULL);
        dp_strbuf_puts(&sb, "      c2: {value: 1}\n");
        slice_case(dp_strbuf_str(&sb), -E2BIG,
                   "spec.devices[0]: must have at most 32 attributes and capacities together, got 33 "
                   "(ResourceSliceMaxAttributesAndCapacitiesPerDevice)");
        dp_strbuf_done(&sb);
}

TEST(capacity_policy) {
        slice_case(
                "  devices:\n  - name: a\n    capacity:\n      memory:\n        value: 40Gi\n        requestPolicy:\n"
                "          default: 8Gi\n          validValues: [4Gi, 8Gi, 16Gi]\n",
                0, NULL);
        slice_case(
                "  devices:\n  - name: a\n    capacity:\n      memory:\n        value: 40Gi\n        requestPolicy:\n"
                "          validValues: [8Gi, 4Gi]\n",
                -EINVAL, "capacity.memory.requestPolicy.validValues: must be sorted in ascending order");
        slice_case(
                "  devices:\n  - name: a\n    capacity:\n      memory:\n        value: 40Gi\n        requestPolicy:\n"
                "          default: 5Gi\n          validValues: [4Gi, 8Gi]\n",
                -EINVAL, "requestPolicy.default: must be one of validValues");
        slice_case(
                "  devices:\n  - name: a\n    capacity:\n      memory:\n        value: 40Gi\n        requestPolicy:\n"
                "          validRange: {min: 8Gi, max: 4Gi}\n",
                -EINVAL, "validRange.max: must be greater than or equal to min");
        slice_case("  devices:\n  - name: a\n    capacity:\n      m:\n        value: 40\n        requestPolicy:\n"
                   "          validValues: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n",
                   -E2BIG, "(CapacityRequestPolicyDiscreteMaxOptions)");
}

TEST(slice_rules) {
        slice_case("  allNodes: true\n", -EINVAL,
                   "spec: exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection must be set");
        char *y = slice("s", "node-a", 1, 0, "");
        invalid(y, -EINVAL, "spec.pool.resourceSliceCount: must be positive");
        free(y);
        y = slice("s", "a//b", 1, 1, "");
        invalid(y, -EINVAL, "spec.pool.name: must not have empty '/'-separated parts");
        free(y);
        y = slice("s", "rack-1/node-a", 1, 1, "");
        valid(y);
        free(y);
        slice_case("  devices:\n  - name: a\n  sharedCounters:\n  - name: c\n    counters: {m: {value: 1}}\n", -EINVAL,
                   "spec: devices and sharedCounters cannot both be set");
        /* a 1.34-style beta slice may hold both; its devices are checked against its own sets */
        const char *mixed =
                "apiVersion: resource.k8s.io/v1beta2\nkind: ResourceSlice\nmetadata: {name: m}\nspec:\n"
                "  driver: d.example.com\n  nodeName: n\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                "  sharedCounters:\n  - name: c\n    counters: {m: {value: 4Gi}}\n"
                "  devices:\n  - name: a\n    consumesCounters: [{counterSet: c, counters: {m: {value: %s}}}]\n";
        char *y2 = dp_asprintf(mixed, "4Gi");
        valid(y2);
        free(y2);
        y2 = dp_asprintf(mixed, "5Gi");
        invalid(y2, -EINVAL, "ResourceSlice m: spec.devices[0].consumesCounters[0].counters.m: consumes 5Gi");
        free(y2);
        slice_case("  skipNodeOperations: [NodePrepareResources]\n", -EINVAL,
                   "skipping NodePrepareResources requires skipping NodeUnprepareResources too");
        slice_case("  skipNodeOperations: [NodePrepareResources, NodeUnprepareResources]\n", 0, NULL);
        slice_case("  skipNodeOperations: [Everything]\n", -EINVAL, "spec.skipNodeOperations[0]: must be");
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "  sharedCounters:\n");
        for (int i = 0; i < 9; i++)
                dp_strbuf_printf(&sb, "  - name: set-%d\n    counters: {m: {value: 1}}\n", i);
        slice_case(dp_strbuf_str(&sb), -E2BIG,
                   "spec.sharedCounters: must have at most 8 entries, got 9 "
                   "(ResourceSliceMaxCounterSets)");
        dp_strbuf_done(&sb);
        slice_case(
                "  devices:\n  - name: a\n    consumesCounters:\n    - {counterSet: a, counters: {m: {value: 1}}}\n"
                "    - {counterSet: b, counters: {m: {value: 1}}}\n    - {counterSet: c, counters: {m: {value: 1}}}\n",
                -E2BIG, "(ResourceSliceMaxDeviceCounterConsumptionsPerDevice)");
        slice_case(
                "  devices:\n  - name: a\n    consumesCounters:\n    - counterSet: a\n      counters: {m: {value: 1}}\n"
                "      compatibilityGroups: [x, y, z]\n",
                -E2BIG, "compatibilityGroups: must have at most 2 entries");
}

/* ---- pools (scenario 16: counter beyond its set, duplicates) ---- */

static const char *counters_slice =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: counters}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: node-b\n  pool: {name: node-b, generation: 1, resourceSliceCount: 2}\n"
        "  sharedCounters:\n  - name: gpu-0-counters\n    counters: {memory: {value: 8Gi}}\n---\n";

static void pool_case(const char *devs, int code, const char *want) {
        char *y = dp_asprintf("%sapiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: parts}\nspec:\n"
                              "  driver: gpu.example.com\n  nodeName: node-b\n"
                              "  pool: {name: node-b, generation: 1, resourceSliceCount: 2}\n  devices:\n%s",
                              counters_slice, devs);
        if (code == 0)
                valid(y);
        else
                invalid(y, code, want);
        free(y);
}

TEST(pool_counters) {
        pool_case(
                "  - name: p0\n    consumesCounters: [{counterSet: gpu-0-counters, counters: {memory: {value: 6Gi}}}]\n"
                "  - name: p1\n    consumesCounters: [{counterSet: gpu-0-counters, counters: {memory: {value: "
                "6Gi}}}]\n",
                0, NULL);
        pool_case("  - name: p0\n    consumesCounters: [{counterSet: gpu-0-counters, counters: {memory: {value: "
                  "10Gi}}}]\n",
                  -EINVAL,
                  "in.yaml: ResourceSlice parts: spec.devices[0].consumesCounters[0].counters.memory: consumes 10Gi, "
                  "more than counter set gpu-0-counters holds (8Gi)");
        pool_case("  - name: p0\n    consumesCounters: [{counterSet: gpu-9-counters, counters: {memory: {value: "
                  "1Gi}}}]\n",
                  -EINVAL, "spec.devices[0].consumesCounters[0]: counterSet: unknown counter set gpu-9-counters");
        pool_case("  - name: p0\n    consumesCounters: [{counterSet: gpu-0-counters, counters: {cores: {value: 1}}}]\n",
                  -EINVAL, "counters.cores: unknown counter: counter set gpu-0-counters has no counter cores");
}

TEST(pool_rules) {
        /* an incomplete pool is fine, and its unknown sets are not judged yet */
        char *a = slice("a", "p", 1, 2,
                        "  devices:\n  - name: d0\n    consumesCounters: [{counterSet: x, counters: "
                        "{m: {value: 1}}}]\n");
        valid(a);
        char *b = slice("b", "p", 1, 2, "  devices:\n  - name: d0\n");
        char *y = dp_asprintf("%s---\n%s", a, b);
        invalid(y, -EINVAL, "spec.devices[0].name: duplicate device name d0 in pool p");
        free(y);
        free(b);
        /* an older generation does not count */
        b = slice("b", "p", 0, 1, "  devices:\n  - name: d0\n");
        y = dp_asprintf("%s---\n%s", a, b);
        valid(y);
        free(y);
        free(b);
        b = slice("b", "p", 1, 3, "  devices:\n  - name: d1\n");
        y = dp_asprintf("%s---\n%s", a, b);
        invalid(y, -EINVAL, "resourceSliceCount: 3 disagrees with ResourceSlice a");
        free(y);
        free(b);
        b = slice("b", "p", 1, 1, "");
        char *c = slice("c", "p", 1, 1, "");
        y = dp_asprintf("%s---\n%s", b, c);
        invalid(y, -EINVAL, "has 2 slices at generation 1 but resourceSliceCount says 1");
        free(y);
        free(b);
        free(c);
        free(a);
        /* the same object twice */
        a = slice("a", "p", 1, 1, "");
        y = dp_asprintf("%s---\n%s", a, a);
        invalid(y, -EINVAL,
                "in.yaml: ResourceSlice a: metadata.name: duplicate object, also defined in in.yaml (document 1)");
        free(y);
        free(a);
}

/* ---- claims and classes ---- */

static void claim_case(const char *devices_yaml, int code, const char *want) {
        char *y =
                dp_asprintf("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
                            "spec:\n  devices:\n%s",
                            devices_yaml);
        if (code == 0)
                valid(y);
        else
                invalid(y, code, want);
        free(y);
}

TEST(claim_rules) {
        claim_case("    requests:\n    - name: a\n      exactly: {deviceClassName: gpu}\n", 0, NULL);
        claim_case("    requests:\n    - name: a\n      exactly: {deviceClassName: gpu, count: 0}\n", -EINVAL,
                   "ResourceClaim ns/c: spec.devices.requests[0].exactly.count: must be greater than zero");
        claim_case(
                "    requests:\n    - name: a\n      exactly: {deviceClassName: gpu, allocationMode: All, count: 2}\n",
                -EINVAL, "count: must not be set when allocationMode is All");
        claim_case("    requests:\n    - name: a\n      exactly: {}\n", -EINVAL, "exactly.deviceClassName: required");
        claim_case("    requests:\n    - {name: a, exactly: {deviceClassName: g}}\n    - {name: a, exactly: "
                   "{deviceClassName: g}}\n",
                   -EINVAL, "requests[1].name: duplicate request name");
        claim_case("    requests:\n    - {name: a, exactly: {deviceClassName: g}}\n    constraints:\n"
                   "    - {requests: [b], matchAttribute: example.com/x}\n",
                   -EINVAL, "constraints[0].requests[0]: \"b\" names no request of this claim");
        claim_case("    requests:\n    - {name: a, firstAvailable: [{name: s, deviceClassName: g}]}\n    constraints:\n"
                   "    - {requests: [a/s], distinctAttribute: example.com/x}\n",
                   0, NULL);
        claim_case("    requests:\n    - {name: a, exactly: {deviceClassName: g}}\n    constraints:\n"
                   "    - {requests: [a], matchAttribute: model}\n",
                   -EINVAL, "constraints[0].matchAttribute: \"model\": must be a fully qualified name");
        claim_case("    requests:\n    - name: a\n      exactly:\n        deviceClassName: g\n        tolerations:\n"
                   "        - {key: k, operator: Exists, value: v}\n",
                   -EINVAL, "tolerations[0].value: must be empty when operator is Exists");
        claim_case("    requests:\n    - name: a\n      exactly:\n        deviceClassName: g\n        tolerations:\n"
                   "        - {key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 5}\n",
                   -EINVAL, "tolerationSeconds: may only be set when effect is NoExecute");
        claim_case("    config:\n    - opaque: {driver: gpu.example.com, parameters: [1]}\n", -EINVAL,
                   "config[0].opaque.parameters: must be an object");

        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "    requests:\n");
        for (int i = 0; i < 33; i++)
                dp_strbuf_printf(&sb, "    - {name: r%d, exactly: {deviceClassName: g}}\n", i);
        claim_case(dp_strbuf_str(&sb), -E2BIG,
                   "spec.devices.requests: must have at most 32 entries, got 33 "
                   "(DeviceRequestsMaxSize)");
        dp_strbuf_truncate(&sb, 0);
        dp_strbuf_puts(&sb, "    requests:\n    - name: a\n      firstAvailable:\n");
        for (int i = 0; i < 9; i++)
                dp_strbuf_printf(&sb, "      - {name: s%d, deviceClassName: g}\n", i);
        claim_case(dp_strbuf_str(&sb), -E2BIG, "(FirstAvailableDeviceRequestMaxSize)");
        dp_strbuf_truncate(&sb, 0);
        dp_strbuf_puts(
                &sb,
                "    requests:\n    - name: a\n      exactly:\n        deviceClassName: g\n        tolerations:\n");
        for (int i = 0; i < 17; i++)
                dp_strbuf_printf(&sb, "        - {key: k%d, operator: Exists}\n", i);
        claim_case(dp_strbuf_str(&sb), -E2BIG, "(DeviceTolerationsMaxLength)");
        dp_strbuf_truncate(&sb, 0);
        dp_strbuf_puts(
                &sb, "    requests:\n    - name: a\n      exactly:\n        deviceClassName: g\n        selectors:\n");
        for (int i = 0; i < 33; i++)
                dp_strbuf_puts(&sb, "        - cel: {expression: 'true'}\n");
        claim_case(dp_strbuf_str(&sb), -E2BIG, "(DeviceSelectorsMaxSize)");
        dp_strbuf_done(&sb);
}

TEST(cel_length_limit) {
        size_t n = DP_CEL_SELECTOR_EXPRESSION_MAX_LENGTH + 1;
        char *expr = malloc(n + 1);
        memset(expr, 'a', n);
        expr[n] = 0;
        char *y = dp_asprintf("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n"
                              "  selectors:\n  - cel: {expression: %s}\n",
                              expr);
        invalid(y, -E2BIG,
                "DeviceClass c: spec.selectors[0].cel.expression: must be at most 10240 characters, got 10241 "
                "(CELSelectorExpressionMaxLength)");
        free(y);
        expr[n - 1] = 0;
        y = dp_asprintf("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n"
                        "  selectors:\n  - cel: {expression: %s}\n",
                        expr);
        valid(y);
        free(y);
        free(expr);
}

TEST(resource_names) {
        const char *cls = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n"
                          "  extendedResourceName: %s\n";
        char *y = dp_asprintf(cls, "example.com/gpu");
        valid(y);
        free(y);
        y = dp_asprintf(cls, "gpu");
        invalid(y, -EINVAL,
                "DeviceClass c: spec.extendedResourceName: \"gpu\": an extended resource name must have the "
                "form domain/name");
        free(y);
        y = dp_asprintf(cls, "kubernetes.io/gpu");
        invalid(y, -EINVAL, "reserved for native resources");
        free(y);
        const char *pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n"
                          "  - name: c\n    resources:\n      limits: {%s: %s}\n";
        y = dp_asprintf(pod, "nvidia.com/gpu", "1");
        valid(y);
        free(y);
        y = dp_asprintf(pod, "gpu", "1");
        invalid(y, -EINVAL,
                "Pod ns/p: spec.containers[0].resources.limits.gpu: \"gpu\": must be a standard resource for "
                "containers");
        free(y);
        y = dp_asprintf(pod, "nvidia.com/gpu", "500m");
        invalid(y, -EINVAL, "limits[nvidia.com/gpu]: an extended resource must be a whole number");
        free(y);
        y = dp_asprintf(pod, "hugepages-2Mi", "1Gi");
        valid(y);
        free(y);
        y = dp_asprintf(pod, "\"example.com/a/b\"", "1");
        invalid(y, -EINVAL, "a qualified name must consist of an optional DNS subdomain prefix");
        free(y);
        ASSERT_TRUE(dp_is_extended_resource_name("example.com/gpu"));
        ASSERT_FALSE(dp_is_extended_resource_name("cpu"));
        ASSERT_FALSE(dp_is_extended_resource_name("requests.example.com/gpu"));
}

TEST(pod_rules) {
        const char *head = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n";
        char *y = dp_asprintf("%s  containers: []\n", head);
        invalid(y, -EINVAL, "spec.containers: must have at least one container");
        free(y);
        y = dp_asprintf("%s  containers:\n  - name: c\n    resources:\n      claims: [{name: gpu}]\n", head);
        invalid(y, -EINVAL, "spec.containers[0].resources.claims[0]: name: \"gpu\" is not in spec.resourceClaims");
        free(y);
        y = dp_asprintf("%s  containers:\n  - name: c\n    resources:\n      limits: {example.com/gpu: 2}\n"
                        "      requests: {example.com/gpu: 1}\n",
                        head);
        invalid(y, -EINVAL, "an extended resource request must equal its limit");
        free(y);
        y = dp_asprintf("%s  containers:\n  - name: c\n  initContainers:\n  - name: c\n", head);
        invalid(y, -EINVAL, "spec.containers[0].name: duplicate container name");
        free(y);
        y = dp_asprintf("%s  containers:\n  - name: c\n  tolerations: [{key: k, operator: Exist}]\n", head);
        invalid(y, -EINVAL, "spec.tolerations[0].operator: must be Exists or Equal");
        free(y);
        y = dp_asprintf("%s  containers:\n  - name: c\n  affinity:\n    nodeAffinity:\n"
                        "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
                        "        - matchExpressions: [{key: zone, operator: In}]\n",
                        head);
        invalid(y, -EINVAL, "matchExpressions[0].values: must be specified for In, NotIn, Gt and Lt");
        free(y);
}

TEST(names) {
        ASSERT_OK(dp_validate_dns_label("gpu-0", NULL));
        ASSERT_TRUE(dp_validate_dns_label("-gpu", NULL) < 0);
        ASSERT_TRUE(dp_validate_dns_label("a.b", NULL) < 0);
        char long_label[70];
        memset(long_label, 'a', 64);
        long_label[64] = 0;
        ASSERT_TRUE(dp_validate_dns_label(long_label, NULL) < 0);
        long_label[63] = 0;
        ASSERT_OK(dp_validate_dns_label(long_label, NULL));
        ASSERT_OK(dp_validate_dns_subdomain("gpu.example.com", NULL));
        ASSERT_TRUE(dp_validate_dns_subdomain("gpu..example.com", NULL) < 0);
        ASSERT_TRUE(dp_validate_dns_subdomain("Gpu.example.com", NULL) < 0);
        ASSERT_OK(dp_validate_qualified_name("kubernetes.io/hostname", NULL));
        ASSERT_OK(dp_validate_qualified_name("app", NULL));
        ASSERT_TRUE(dp_validate_qualified_name("/app", NULL) < 0);
        ASSERT_TRUE(dp_validate_qualified_name("a/b/c", NULL) < 0);
        ASSERT_OK(dp_validate_label_value("", NULL));
        ASSERT_TRUE(dp_validate_label_value("a b", NULL) < 0);
        ASSERT_OK(dp_validate_device_qualified_name("nvidia.com/parentUUID", NULL));
        ASSERT_OK(dp_validate_device_qualified_name("_x9", NULL));
        ASSERT_TRUE(dp_validate_device_qualified_name("x-y", NULL) < 0);
        ASSERT_TRUE(dp_validate_device_full_qualified_name("model", NULL) < 0);
        ASSERT_TRUE(dp_validate_device_qualified_name("abcdefghijabcdefghijabcdefghijabc", NULL) < 0); /* 33 */
}

TEST(load_directory) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *paths[] = {"data"};
        ASSERT_OK(dp_model_load(paths, 1, &l, &err));
        /* files in name order: claims, classes, core, partitions, slices */
        ASSERT_EQ(l->n, 2 + 2 + 4 + 2 + 1);
        ASSERT_EQ(l->items[0].hdr->kind, DP_KIND_RESOURCE_CLAIM);
        ASSERT_STREQ(l->items[0].hdr->source, "data/claims.yaml");
        ASSERT_EQ(l->items[2].hdr->kind, DP_KIND_DEVICE_CLASS);
        ASSERT_EQ(l->items[10].hdr->kind, DP_KIND_RESOURCE_SLICE);
        ASSERT_STREQ(l->items[10].hdr->source, "data/slices.yaml");
        dp_object_list_free(l);

        l = NULL;
        const char *missing[] = {"data/slices.yaml", "data/nope.yaml"};
        ASSERT_TRUE(dp_model_load(missing, 2, &l, &err) < 0);
        ASSERT_TRUE(l == NULL);
        ASSERT_CONTAINS(err.msg, "data/nope.yaml");
        /* the same file twice: duplicate objects, nothing returned */
        const char *twice[] = {"data/slices.yaml", "data/slices.yaml"};
        ASSERT_EQ(dp_model_load(twice, 2, &l, &err), -EINVAL);
        ASSERT_TRUE(l == NULL);
        ASSERT_CONTAINS(err.msg, "duplicate object");
}
